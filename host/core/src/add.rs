//! `seams add REF`: a generator from a registry added to `seams.toml`,
//! once it is known to be a seams generator; the manifest's formatting
//! and comments are kept.

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
    /// The digests it resolved to now (the lock pins them at the next
    /// generate).
    pub pin: Pin,
}

/// Why a generator could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// The project cannot be loaded or locked.
    #[error(transparent)]
    Project(#[from] GenerateError),
    /// `seams.toml` already names it.
    #[error("{manifest} already has [[generator]] oci = \"{reference}\"", manifest = path.display())]
    Present {
        /// The manifest.
        path: PathBuf,
        /// The reference.
        reference: String,
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
    let path = dir.join(MANIFEST);
    if project
        .generators
        .contains(&GeneratorSource::Oci(reference.clone()))
    {
        return Err(AddError::Present {
            path,
            reference: reference.to_string(),
        });
    }
    let fetched = fetch(registry, reference, None)?;
    let inspection = match inspect_bytes(runtime, &reference.to_string(), &fetched.component, None)
    {
        Ok(inspection) => inspection,
        Err(InspectError::Generator(e)) => return Err(e.into()),
        Err(other) => {
            return Err(AddError::Edit {
                path,
                message: other.to_string(),
            });
        }
    };
    let _running = ProjectLock::exclusive(&project, Wait::Block)?;
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
    let edited = with_oci_generator(&text, reference).map_err(edit_error)?;
    // What is written must load as the project did, plus the generator.
    Project::parse(dir, &path, &edited).map_err(|e: ProjectError| edit_error(e.to_string()))?;
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| edit_error(e.to_string()))?;
    file.write_all(edited.as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| edit_error(e.to_string()))?;
    file.persist(&path)
        .map_err(|e| edit_error(e.error.to_string()))?;
    // So that the next generate takes this component offline. Best
    // effort: without the record, it resolves the tag at the registry.
    let _ = crate::added::record(
        dir,
        &GeneratorSource::Oci(reference.clone()).label(),
        crate::lock::LockedOci {
            manifest_digest: fetched.pin.manifest.clone(),
            layer_digest: fetched.pin.layer.clone(),
            signature_digest: None,
        },
    );
    Ok(AddReport {
        name: inspection.meta.name,
        version: inspection.meta.version,
        pin: fetched.pin,
    })
}

/// `text` (a `seams.toml`) with `[[generator]] oci = "REF"` appended after
/// the other generators, everything else as it was.
pub(crate) fn with_oci_generator(text: &str, reference: &Reference) -> Result<String, String> {
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_owned())?;
    let mut table = toml_edit::Table::new();
    table.insert("oci", toml_edit::value(reference.to_string()));
    match document.get_mut("generator") {
        None => {
            let mut array = toml_edit::ArrayOfTables::new();
            array.push(table);
            document.insert("generator", toml_edit::Item::ArrayOfTables(array));
        }
        Some(toml_edit::Item::ArrayOfTables(array)) => array.push(table),
        Some(_) => {
            return Err(
                "generator is not written as [[generator]] tables; add oci = \"REF\" by hand"
                    .into(),
            );
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
            match (expected, with_oci_generator(text, &reference)) {
                (Ok(want), Ok(got)) => assert_eq!(&got, want, "{text}"),
                (Err(why), Err(e)) => assert!(e.contains(why), "{text}: {e}"),
                (want, got) => panic!("{text}: expected {want:?}, got {got:?}"),
            }
        }
    }
}
