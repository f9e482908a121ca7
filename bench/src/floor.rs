//! The native floor: what generating costs with no sandbox and no tracing.
//! It runs the htmx built-in's own code (its source, included below, with
//! the UI-model library) natively through the SDK's native backend,
//! answers its queries with the host's SPARQL on oxigraph, renders its
//! templates with the host's template service (the plain render, not the
//! tracing one) and writes the files.

use std::path::Path;

use seams_model::Model;
use seams_sdk::native::{self, Backend};
use seams_templates::{Syntax, TemplateService};

#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../generators/htmx/src/lib.rs"]
mod htmx;

struct Host {
    model: Model,
    templates: TemplateService,
}

impl Backend for Host {
    fn query(&self, sparql: &str) -> Result<String, String> {
        let far = std::time::Instant::now() + std::time::Duration::from_secs(24 * 3600);
        self.model
            .query(sparql, far, usize::MAX)
            .map_err(|e| e.to_string())
    }

    fn render(&self, name: &str, context: &str) -> Result<String, String> {
        self.templates
            .render_json(name, context)
            .map(|rendered| rendered.text)
            .map_err(|e| e.to_string())
    }

    fn hash(&self) -> String {
        self.model.hash().to_owned()
    }

    fn labels(&self) -> Vec<(String, String)> {
        self.model.labels().to_vec()
    }
}

/// Loads `model_files`, runs htmx natively and writes its files under
/// `out`; how many triples the model has.
pub fn run(model_files: &[std::path::PathBuf], out: &Path) -> Result<usize, String> {
    let model = Model::load(model_files).map_err(|e| e.to_string())?;
    let triples = model.len();
    let (syntax, templates) = native::templates::<htmx::Htmx>();
    let syntax = match syntax {
        seams_sdk::Syntax::Jinja => Syntax::Jinja,
        seams_sdk::Syntax::Brackets => Syntax::Brackets,
    };
    let templates = TemplateService::new(templates, syntax).map_err(|e| e.to_string())?;
    native::install(Box::new(Host { model, templates }));
    let files = native::run::<htmx::Htmx>().map_err(|e| e.to_string())?;
    for (path, text) in files {
        let path = out.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(triples)
}
