//! The built-in htmx generator: one HTML page per `ui:Page` of a UI model,
//! with its lists (loaded with `hx-get` and reloaded when their entity
//! changes), its forms (posted with `hx-post`) and its navigation flows as
//! links, every page in one shared layout that loads one shared script
//! (`app.js`) and htmx, which it writes too (`htmx.min.js`, pinned, with
//! its licence). The routes are the ones the
//! fastapi generator serves. See `vocabulary/ui.ttl`.

mod extract;

use seams_sdk::{File, Generator, Meta, Model, Result, Shared, Traced};
use serde::Serialize;

use extract::{Page, Title, View};

/// The pages' shared script: an output and the template that writes it.
const SCRIPT: &str = "app.js";

/// htmx itself (2.0.4, as published on npm as `htmx.org`) and its licence
/// (0BSD), written beside the pages so that they load nothing from the
/// internet; `layout.html` pins the script's sha384 in its `integrity`.
/// Both are templates without a tag, so that every line is traced to its
/// source like any other output.
const HTMX: [&str; 2] = ["htmx.min.js", "htmx.LICENSE"];

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
            "htmx.min.js",
            "htmx.LICENSE",
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
        // Every page shows every page's link: serialized once, not per page.
        let nav = Shared::new(&view.nav)?;
        view.pages
            .iter()
            .map(|page| {
                let context = PageContext {
                    app: &view.app,
                    nav: &nav,
                    page,
                };
                Ok(File::rendered(
                    &page.file,
                    seams_sdk::render("layout.html", &context)?,
                ))
            })
            .chain([Ok(script)])
            .chain(HTMX.map(|name| {
                Ok(File::rendered(
                    name,
                    seams_sdk::render(name, &NoContext {})?,
                ))
            }))
            .collect()
    }
}

/// What htmx and its licence see: nothing.
#[derive(Serialize)]
struct NoContext {}

/// What `app.js` sees.
#[derive(Serialize)]
struct ScriptContext<'a> {
    app: &'a Traced<Title>,
}

/// What `layout.html` sees, for one page.
#[derive(Serialize)]
struct PageContext<'a> {
    app: &'a Traced<Title>,
    nav: &'a Shared,
    page: &'a Traced<Page>,
}

seams_sdk::register_generator!(Htmx);
