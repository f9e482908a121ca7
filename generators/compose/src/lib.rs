//! The built-in compose generator: a `docker-compose.yml` that runs the
//! fastapi generator's `app.py` (service `api`), serves the htmx pages with
//! nginx, passing `/api/` on to the API (service `pages`), and runs a
//! database when the model names one (service `db`), else keeps the
//! API's SQLite file in a volume; and the `README.md` of the generated
//! application: how to run it, where its records are kept and how to back
//! them up. See `vocabulary/ui.ttl`.

use seams_sdk::{Error, File, Generator, Meta, Model, Result, Traced};
use seams_ui_model::{Home, Ui, snake_case};
use serde::{Deserialize, Serialize};

struct Compose;

/// What `docker-compose.yml` prints.
#[derive(Serialize, Deserialize)]
struct View {
    app: Traced<App>,
}

#[derive(Serialize, Deserialize)]
struct App {
    title: String,
    /// The title on one line, for the README's heading: a line break in
    /// a label must not start Markdown of its own.
    heading: String,
    /// The compose project's name.
    project: String,
    home: Traced<Home>,
    database: Option<Traced<Database>>,
}

#[derive(Serialize, Deserialize)]
struct Database {
    engine: String,
    name: String,
}

impl Generator for Compose {
    type View = View;

    fn meta() -> Meta {
        Meta::new(
            "compose",
            env!("CARGO_PKG_VERSION"),
            "A docker-compose.yml for the pages and API of a UI model",
        )
        .vocabulary(seams_ui_model::vocabulary())
        .templates(seams_sdk::templates!["docker-compose.yml", "README.md"])
    }

    fn extract(model: &Model) -> Result<View> {
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
        let database = match &ui.app.database {
            Some(db) if db.engine != "postgres" => {
                return Err(Error::msg(format!(
                    "database <{}> has ui:engine {:?}; the compose generator knows \"postgres\"",
                    db.iri, db.engine
                )));
            }
            Some(db) => Some(Traced::new(
                &db.iri,
                Database {
                    engine: db.engine.clone(),
                    name: db.slug.clone(),
                },
            )),
            None => None,
        };
        let heading = ui
            .app
            .title
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let app = App {
            title: ui.app.title.clone(),
            heading,
            project: if project.is_empty() {
                "seams".into()
            } else {
                project
            },
            home,
            database,
        };
        Ok(View {
            app: Traced::new(&ui.app.iri, app),
        })
    }

    fn render(view: &View) -> Result<Vec<File>> {
        Ok(vec![
            File::rendered(
                "docker-compose.yml",
                seams_sdk::render("docker-compose.yml", view)?,
            ),
            File::rendered("README.md", seams_sdk::render("README.md", view)?),
        ])
    }
}

seams_sdk::register_generator!(Compose);
