//! The built-in fastapi generator: `app.py`, a FastAPI application that
//! serves the htmx generator's pages and every route they ask for (list
//! partials, form posts, record options), with a pydantic model and a
//! database table per `ui:Entity` (PostgreSQL or SQLite, through
//! SQLAlchemy); `schema.sql`, those tables as PostgreSQL makes them; and
//! `requirements.txt`, the versions it is tested with. See
//! `vocabulary/ui.ttl`.

mod extract;
mod schema;

use seams_sdk::{File, Generator, Meta, Model, Result};

use extract::View;

struct FastApi;

impl Generator for FastApi {
    type View = View;

    fn meta() -> Meta {
        Meta::new(
            "fastapi",
            env!("CARGO_PKG_VERSION"),
            "A FastAPI app serving the pages and routes of a UI model",
        )
        .vocabulary(seams_ui_model::vocabulary())
        .templates(seams_sdk::templates![
            "app.py",
            "entity.py",
            "schema.sql",
            "requirements.txt"
        ])
    }

    fn extract(model: &Model) -> Result<View> {
        extract::extract(model)
    }

    fn render(view: &View) -> Result<Vec<File>> {
        Ok(vec![
            File::rendered("app.py", seams_sdk::render("app.py", view)?),
            File::rendered("schema.sql", seams_sdk::render("schema.sql", view)?),
            File::rendered(
                "requirements.txt",
                seams_sdk::render("requirements.txt", view)?,
            ),
        ])
    }
}

seams_sdk::register_generator!(FastApi);
