//! `seams publish DIR --to REF`: a generator package built, tested and
//! pushed to a registry as a Wasm OCI artifact.

use std::collections::BTreeMap;
use std::path::Path;

use seams_core::{InspectError, Progress, Project, inspect};
use seams_registry::{Artifact, PROTOCOL_ANNOTATION, Pin, Reference, Registry, RegistryError};
use seams_runtime::Runtime;

use crate::golden::{SuiteError, SuiteReport, test_generator};

/// What `seams publish` pushed.
#[derive(Debug, Clone)]
pub struct PublishReport {
    /// The reference pushed to.
    pub reference: String,
    /// Its digests.
    pub pin: Pin,
    /// The generator's name and version, from its meta.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The component's size in bytes.
    pub size: usize,
}

/// What to publish, and where.
#[derive(Debug, Clone, Copy)]
pub struct PublishRequest<'a> {
    /// The package directory.
    pub dir: &'a Path,
    /// The goldens for the project [default: `DIR/tests/golden`].
    pub goldens: Option<&'a Path>,
    /// Where to push (a tag).
    pub reference: &'a Reference,
    /// The source annotation [default: the package's `repository`].
    pub source: Option<&'a str>,
}

/// Why a package was not published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// It could not be built or tested.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A test failed: nothing is pushed.
    #[error(
        "not published: the package's tests fail on the project's model; fix them (seams test-generator shows the same):\n{report}"
    )]
    TestsFailed {
        /// The tests' report.
        report: String,
    },
    /// The built component is not a clean seams generator.
    #[error(transparent)]
    Inspect(#[from] InspectError),
    /// The registry refused or failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// Builds the package, runs its four tests on `project`'s model, inspects
/// the component and pushes it with the OCI annotations (title, version,
/// description, source) and the protocol it exports.
///
/// # Errors
///
/// The build or a test fails, the component is not a seams generator, or
/// the registry refuses.
pub fn publish(
    request: PublishRequest<'_>,
    project: &Project,
    runtime: &Runtime,
    registry: &Registry,
    progress: &dyn Progress,
) -> Result<PublishReport, PublishError> {
    let PublishRequest {
        dir,
        goldens,
        reference,
        source,
    } = request;
    let report: SuiteReport = test_generator(dir, goldens, project, runtime, false, progress)?;
    if !report.passed() {
        return Err(PublishError::TestsFailed {
            report: report.to_text(),
        });
    }
    let inspection = inspect(runtime, &report.component)?;
    let component = report.component_bytes;
    let loaded = runtime
        .load(&dir.display().to_string(), &component)
        .map_err(InspectError::from)?;
    let (imports, exports) = runtime.interfaces(&loaded);
    let meta = &inspection.meta;
    let mut annotations = BTreeMap::from([
        (
            "org.opencontainers.image.title".to_owned(),
            meta.name.clone(),
        ),
        (
            "org.opencontainers.image.version".to_owned(),
            meta.version.clone(),
        ),
        (
            "org.opencontainers.image.description".to_owned(),
            meta.description.clone(),
        ),
        (
            PROTOCOL_ANNOTATION.to_owned(),
            format!("seams:generator@{}", loaded.protocol()),
        ),
    ]);
    if let Some(source) = source.map(str::to_owned).or_else(|| repository_of(dir)) {
        annotations.insert("org.opencontainers.image.source".to_owned(), source);
    }
    let size = component.len();
    let pin = registry.publish(
        reference,
        &Artifact {
            component,
            imports,
            exports,
            annotations,
        },
    )?;
    Ok(PublishReport {
        reference: reference.to_string(),
        pin,
        name: meta.name.clone(),
        version: meta.version.clone(),
        size,
    })
}

/// The package's repository, if its manifest names one: `repository` in
/// `Cargo.toml` (a workspace member's `repository.workspace = true` is not
/// followed), `Repository` in `pyproject.toml`'s `[project.urls]`, or
/// `repository` (a URL, or an object with one) in `package.json`.
fn repository_of(dir: &Path) -> Option<String> {
    use crate::language::Language;
    let language = *Language::of_package(dir).first()?;
    let manifest = crate::build::Manifest::read(dir, language).ok()?;
    let found = match language {
        Language::Rust => manifest.text("/package/repository"),
        Language::Python => ["Repository", "repository"]
            .iter()
            .find_map(|key| manifest.text(&format!("/project/urls/{key}"))),
        Language::Js | Language::Ts => manifest
            .text("/repository")
            .or_else(|| manifest.text("/repository/url")),
    };
    found.map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_languages_manifest_names_its_repository() {
        let url = "https://example.org/g";
        for (manifest, text) in [
            (
                "Cargo.toml",
                format!("[package]\nname = \"g\"\nrepository = \"{url}\"\n"),
            ),
            (
                "pyproject.toml",
                format!("[project]\nname = \"g\"\n[project.urls]\nRepository = \"{url}\"\n"),
            ),
            (
                "package.json",
                format!("{{\"name\": \"g\", \"repository\": \"{url}\"}}"),
            ),
            (
                "package.json",
                format!(
                    "{{\"name\": \"g\", \"repository\": {{\"type\": \"git\", \"url\": \"{url}\"}}}}"
                ),
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(manifest), &text).unwrap();
            assert_eq!(repository_of(dir.path()).as_deref(), Some(url), "{text}");
        }
        let none = tempfile::tempdir().unwrap();
        std::fs::write(none.path().join("package.json"), "{\"name\": \"g\"}").unwrap();
        assert_eq!(repository_of(none.path()), None);
    }
}
