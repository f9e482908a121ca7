//! The built-in compose generator: a `docker-compose.yml` that runs the
//! fastapi generator's `app.py` (service `api`), serves the htmx pages with
//! nginx, passing `/api/` on to the API (service `pages`), and runs a
//! database when the model names one (service `db`). See
//! `vocabulary/ui.ttl`.

use seams_sdk::{Error, File, Generator, Meta, Model, Result, ViewObject};
use seams_ui_model::{Ui, snake_case};
use serde_json::{Value, json};

struct Compose;

impl Generator for Compose {
    fn meta() -> Meta {
        Meta::new(
            "compose",
            env!("CARGO_PKG_VERSION"),
            "A docker-compose.yml for the pages and API of a UI model",
        )
        .vocabulary(seams_ui_model::vocabulary())
        .templates(seams_sdk::templates!["docker-compose.yml"])
    }

    fn extract(model: &Model) -> Result<Value> {
        let ui = Ui::read(model)?;
        let Some(home) = ui.home() else {
            return Err(Error::msg(
                "the model has no ui:Page; the compose generator serves pages",
            ));
        };
        let project: String = snake_case(&ui.app.title.replace(' ', ""))
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let mut app = ViewObject::new(&ui.app.iri)
            .field("title", ui.app.title.as_str())
            .field(
                "project",
                if project.is_empty() {
                    "seams".into()
                } else {
                    project
                },
            )
            .field("home", home);
        let mut database = Value::Null;
        if let Some(db) = &ui.app.database {
            if db.engine != "postgres" {
                return Err(Error::msg(format!(
                    "database <{}> has ui:engine {:?}; the compose generator knows \"postgres\"",
                    db.iri, db.engine
                )));
            }
            database = ViewObject::new(&db.iri)
                .field("engine", db.engine.as_str())
                .field("name", db.slug.as_str())
                .into();
        }
        app = app.field("database", database);
        Ok(json!({ "app": Value::from(app) }))
    }

    fn render(view: &Value) -> Result<Vec<File>> {
        Ok(vec![File::rendered(
            "docker-compose.yml",
            seams_sdk::render("docker-compose.yml", view)?,
        )])
    }
}

seams_sdk::register_generator!(Compose);
