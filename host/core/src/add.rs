//! `seams add REF` and `seams add DIR`: a generator from a registry, or a
//! generator package in the project, added to `seams.toml` once it is
//! known to be a seams generator; the manifest's formatting and comments
//! are kept.

use std::io::Write;
use std::path::{Path, PathBuf};

use seams_registry::{Pin, Reference, Registry, RegistryError};
use seams_runtime::{GeneratorError, Runtime};

use crate::error::GenerateError;
use crate::inputs::fetch;
use crate::inspect::{InspectError, inspect_bytes};
use crate::project::{GeneratorSource, MANIFEST, Project, ProjectError};
use crate::project_lock::{ProjectLock, Wait};

/// What `seams add` did.
#[derive(Debug, Clone)]
pub struct AddReport {
    /// The generator's name, from its meta.
    pub name: String,
    /// Its version, from its meta.
    pub version: String,
    /// How `seams.toml` now names it: `oci:REF` or `package:DIR`.
    pub source: String,
    /// For a registry's generator, the digests it resolved to now (the
    /// lock pins them at the next generate).
    pub pin: Option<Pin>,
}

/// Why a generator could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// The project cannot be loaded or locked.
    #[error(transparent)]
    Project(#[from] GenerateError),
    /// `seams.toml` already names it.
    #[error("{manifest} already has [[generator]] {entry}", manifest = path.display())]
    Present {
        /// The manifest.
        path: PathBuf,
        /// The entry, as `seams.toml` writes it (`oci = "REF"`).
        entry: String,
    },
    /// The package directory is not one `seams.toml` may name.
    #[error(
        "{}: {why}; a project names packages inside its directory (move or copy the package into {})",
        dir.display(),
        root.display()
    )]
    PackagePlace {
        /// The directory given.
        dir: PathBuf,
        /// The project.
        root: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The registry failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// What it pulled is not a working seams generator.
    #[error(transparent)]
    Generator(#[from] GeneratorError),
    /// `seams.toml` could not be edited.
    #[error("cannot edit {}: {message}", path.display())]
    Edit {
        /// The manifest.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// Adds `[[generator]] oci = "REF"` to the project in `dir`, after pulling
/// the component into the blob cache and asking it for its meta in the
/// sandbox. Holds the project's run lock while it edits.
///
/// # Errors
///
/// The project cannot be loaded, already names the reference, the pull
/// fails, the component is not a seams generator, or `seams.toml` cannot be
/// written.
pub fn add(
    dir: &Path,
    reference: &Reference,
    registry: &Registry,
    runtime: &Runtime,
) -> Result<AddReport, AddError> {
    let project = Project::load(dir).map_err(GenerateError::from)?;
    let source = GeneratorSource::Oci(reference.clone());
    refuse_present(&project, &source)?;
    let fetched = fetch(registry, reference, None)?;
    let (name, version) = meta_of(&project, runtime, &source, &fetched.component)?;
    append(&project, &source, "oci", reference.to_string())?;
    // So that the next generate takes this component offline. Best
    // effort: without the record, it resolves the tag at the registry.
    let _ = crate::added::record(
        dir,
        &source.label(),
        crate::lock::LockedOci {
            manifest_digest: fetched.pin.manifest.clone(),
            layer_digest: fetched.pin.layer.clone(),
            signature_digest: None,
        },
    );
    Ok(AddReport {
        name,
        version,
        source: source.label(),
        pin: Some(fetched.pin),
    })
}

/// Adds `[[generator]] package = "DIR"` to `project` (loaded, with its
/// [`Project::packages`] builder) for the package in `package` (a path
/// inside the project, as the user gave it), after building it and asking
/// the component for its meta in the sandbox. Holds the project's run
/// lock while it edits.
///
/// # Errors
///
/// A directory outside the project (or inside its output or `.seams`),
/// one `seams.toml` already names, a failed build, a component that is not
/// a seams generator, or a `seams.toml` that cannot be written.
pub fn add_package(
    project: &Project,
    package: &Path,
    runtime: &Runtime,
) -> Result<AddReport, AddError> {
    let place = |why: &str| AddError::PackagePlace {
        dir: package.to_owned(),
        root: project.root.clone(),
        why: why.to_owned(),
    };
    let found = package
        .canonicalize()
        .map_err(|e| place(&format!("cannot be read ({e})")))?;
    if !found.is_dir() {
        return Err(place("is not a directory"));
    }
    let root = project
        .root
        .canonicalize()
        .map_err(|e| place(&format!("the project cannot be read ({e})")))?;
    let relative = found
        .strip_prefix(&root)
        .map_err(|_| place("is outside the project"))?;
    if relative.as_os_str().is_empty() {
        return Err(place("is the project itself"));
    }
    for inside in [project.output_dir.as_path(), Path::new(".seams")] {
        if relative.starts_with(inside) {
            return Err(place(&format!(
                "is inside {}, which seams writes",
                inside.display()
            )));
        }
    }
    let source = GeneratorSource::Package {
        path: relative.to_owned(),
    };
    refuse_present(project, &source)?;
    let built = crate::inputs::component_of(project, &source).map_err(AddError::Generator)?;
    let (name, version) = meta_of(project, runtime, &source, &built)?;
    append(project, &source, "package", crate::project::posix(relative))?;
    Ok(AddReport {
        name,
        version,
        source: source.label(),
        pin: None,
    })
}

/// Refuses a generator `project` already names.
fn refuse_present(project: &Project, source: &GeneratorSource) -> Result<(), AddError> {
    if project.generators.contains(source) {
        let (key, value) = match source {
            GeneratorSource::Package { path } => ("package", crate::project::posix(path)),
            other => ("oci", other.to_string()),
        };
        return Err(AddError::Present {
            path: project.root.join(MANIFEST),
            entry: format!("{key} = \"{value}\""),
        });
    }
    Ok(())
}

/// The name and version `component`'s meta gives, asked in the sandbox.
fn meta_of(
    project: &Project,
    runtime: &Runtime,
    source: &GeneratorSource,
    component: &[u8],
) -> Result<(String, String), AddError> {
    match inspect_bytes(runtime, &source.to_string(), component, None) {
        Ok(inspection) => Ok((inspection.meta.name, inspection.meta.version)),
        Err(InspectError::Generator(e)) => Err(e.into()),
        Err(other) => Err(AddError::Edit {
            path: project.root.join(MANIFEST),
            message: other.to_string(),
        }),
    }
}

/// Appends `[[generator]] KEY = "VALUE"` to the project's `seams.toml`,
/// under its run lock, checking that the result loads with the generator.
fn append(
    project: &Project,
    source: &GeneratorSource,
    key: &str,
    value: String,
) -> Result<(), AddError> {
    let dir = &project.root;
    let path = dir.join(MANIFEST);
    let _running = ProjectLock::exclusive(project, Wait::Block)?;
    let edit_error = |message: String| AddError::Edit {
        path: path.clone(),
        message,
    };
    let text = crate::project_file::read(&path, crate::project_file::MANIFEST_LIMIT)
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        })
        .map_err(|e| edit_error(e.to_string()))?;
    let edited = with_generator(&text, key, &value).map_err(edit_error)?;
    // What is written must load as the project did, plus the generator.
    let loaded =
        Project::parse(dir, &path, &edited).map_err(|e: ProjectError| edit_error(e.to_string()))?;
    if !loaded.generators.contains(source) {
        return Err(edit_error(format!(
            "the edited manifest does not name {source}"
        )));
    }
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| edit_error(e.to_string()))?;
    file.write_all(edited.as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| edit_error(e.to_string()))?;
    file.persist(&path)
        .map_err(|e| edit_error(e.error.to_string()))?;
    Ok(())
}

/// `text` (a `seams.toml`) with `[[generator]] KEY = "VALUE"` appended
/// after the other generators, everything else as it was.
pub(crate) fn with_generator(text: &str, key: &str, value: &str) -> Result<String, String> {
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_owned())?;
    let mut table = toml_edit::Table::new();
    table.insert(key, toml_edit::value(value));
    match document.get_mut("generator") {
        None => {
            let mut array = toml_edit::ArrayOfTables::new();
            array.push(table);
            document.insert("generator", toml_edit::Item::ArrayOfTables(array));
        }
        Some(toml_edit::Item::ArrayOfTables(array)) => array.push(table),
        Some(_) => {
            return Err(format!(
                "generator is not written as [[generator]] tables; add {key} = \"{value}\" by hand"
            ));
        }
    }
    Ok(document.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_appended_and_the_rest_kept() {
        let reference: Reference = "127.0.0.1:5000/seams/htmx:1".parse().unwrap();
        let cases: &[(&str, Result<&str, &str>)] = &[
            (
                "# my project\n[model]\nfiles = [\"m.ttl\"]  # the model\n\n[[generator]]\nbuiltin = \"htmx\"\n\n[sandbox]\nfuel = 10\n",
                Ok(
                    "# my project\n[model]\nfiles = [\"m.ttl\"]  # the model\n\n[[generator]]\nbuiltin = \"htmx\"\n\n[[generator]]\noci = \"127.0.0.1:5000/seams/htmx:1\"\n\n[sandbox]\nfuel = 10\n",
                ),
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n",
                Ok(
                    "[model]\nfiles = [\"m.ttl\"]\n\n[[generator]]\noci = \"127.0.0.1:5000/seams/htmx:1\"\n",
                ),
            ),
            (
                "generator = []\n[model]\nfiles = [\"m.ttl\"]\n",
                Err("not written as [[generator]] tables"),
            ),
            ("[model\n", Err("")),
        ];
        for (text, expected) in cases {
            match (
                expected,
                with_generator(text, "oci", &reference.to_string()),
            ) {
                (Ok(want), Ok(got)) => assert_eq!(&got, want, "{text}"),
                (Err(why), Err(e)) => assert!(e.contains(why), "{text}: {e}"),
                (want, got) => panic!("{text}: expected {want:?}, got {got:?}"),
            }
        }
    }
}
