//! The built-in htmx generator: one HTML page per `ui:Page` of a UI model,
//! with its lists (loaded with `hx-get` and reloaded when their entity
//! changes), its forms (posted with `hx-post`) and its navigation flows as
//! links, every page in one shared layout that loads one shared script
//! (`app.js`). The routes are the ones the
//! fastapi generator serves. See `vocabulary/ui.ttl`.

mod extract;

use seams_sdk::{File, Generator, Meta, Model, Result, Traced};
use serde::Serialize;

use extract::{NavItem, Page, Title, View};

/// The pages' shared script: an output and the template that writes it.
const SCRIPT: &str = "app.js";

pub(crate) struct Htmx;

impl Generator for Htmx {
    type View = View;

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

    fn extract(model: &Model) -> Result<View> {
        extract::extract(model)
    }

    fn render(view: &View) -> Result<Vec<File>> {
        // The script every page loads, written once.
        let script = File::rendered(
            SCRIPT,
            seams_sdk::render(SCRIPT, &ScriptContext { app: &view.app })?,
        );
        view.pages
            .iter()
            .map(|page| {
                let context = PageContext {
                    app: &view.app,
                    nav: &view.nav,
                    page,
                };
                Ok(File::rendered(
                    &page.file,
                    seams_sdk::render("layout.html", &context)?,
                ))
            })
            .chain([Ok(script)])
            .collect()
    }
}

/// What `app.js` sees.
#[derive(Serialize)]
struct ScriptContext<'a> {
    app: &'a Traced<Title>,
}

/// What `layout.html` sees, for one page.
#[derive(Serialize)]
struct PageContext<'a> {
    app: &'a Traced<Title>,
    nav: &'a [Traced<NavItem>],
    page: &'a Traced<Page>,
}

seams_sdk::register_generator!(Htmx);
