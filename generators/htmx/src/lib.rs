//! The built-in htmx generator: one HTML page per `ui:Page` of a UI model,
//! with its lists (loaded with `hx-get` and reloaded when their entity
//! changes), its forms (posted with `hx-post`) and its navigation flows as
//! links, every page in one shared layout that loads one shared script
//! (`app.js`). The routes are the ones the
//! fastapi generator serves. See `vocabulary/ui.ttl`.

mod extract;

use seams_sdk::{File, Generator, Meta, Model, Result};
use serde_json::Value;

/// The pages' shared script: an output and the template that writes it.
const SCRIPT: &str = "app.js";

pub(crate) struct Htmx;

impl Generator for Htmx {
    fn meta() -> Meta {
        Meta::new(
            "htmx",
            env!("CARGO_PKG_VERSION"),
            "One htmx page per page of a UI model",
        )
        .vocabulary(seams_ui_model::vocabulary())
        .templates(seams_sdk::templates![
            "layout.html",
            "page.html",
            "list.html",
            "form.html",
            "app.js",
        ])
    }

    fn extract(model: &Model) -> Result<Value> {
        extract::extract(model)
    }

    fn render(view: &Value) -> Result<Vec<File>> {
        let pages = view["pages"].as_array().cloned().unwrap_or_default();
        // The script every page loads, written once.
        let script = File::rendered(
            SCRIPT,
            seams_sdk::render(SCRIPT, &serde_json::json!({ "app": view["app"] }))?,
        );
        pages
            .iter()
            .map(|page| {
                let context = serde_json::json!({
                    "app": view["app"],
                    "nav": view["nav"],
                    "page": page,
                });
                let path = page["file"].as_str().unwrap_or_default();
                Ok(File::rendered(
                    path,
                    seams_sdk::render("layout.html", &context)?,
                ))
            })
            .chain([Ok(script)])
            .collect()
    }
}

seams_sdk::register_generator!(Htmx);
