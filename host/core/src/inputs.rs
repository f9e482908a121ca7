//! What a generation depends on, read before anything runs: `seams.toml`'s
//! bytes, the model files' bytes, every component, the lock and the
//! journal; and the decisions made from them alone (the pins, whether the
//! project is up to date), which need no parsed model. The model is loaded
//! only when there is work to do.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seams_model::{Model, ModelError, sha256_hex};
use seams_runtime::{GeneratorError, GeneratorErrorKind, LoadedGenerator, Runtime, SourceError};

use crate::audit::locked_path;
use crate::error::GenerateError;
use crate::journal::{Journal, JournalModel, ModelEdit};
use crate::lock::{LOCK_FILE, LOCK_VERSION, Lock, LockError, LockedModelFile, LockedOci};
use crate::output_dir::{Found, OutputDir};
use crate::project::{GeneratorSource, JOURNAL_FILE, MANIFEST, Project, posix};
use crate::seal::SealKey;
use crate::stat_cache::{FileStat, StatCache};
use seams_registry::{Fetched, Pin, Reference, Registry, RegistryError};

/// A generator's component bytes: embedded for a built-in, read for a
/// `.wasm`, pulled (or found in the blob cache) for an `oci` reference, by
/// the digests `pin` gives when there is one.
fn component_bytes(
    project: &Project,
    source: &GeneratorSource,
    pin: Option<&LockedOci>,
) -> Result<ComponentBytes, GeneratorError> {
    let fail = |kind: GeneratorErrorKind| GeneratorError {
        generator: source.to_string(),
        kind,
    };
    let bytes = match source {
        GeneratorSource::Builtin(name) => {
            let (bytes, sha256) =
                crate::builtin::embedded(name).expect("manifest names only known built-ins");
            return Ok(ComponentBytes {
                bytes: Cow::Borrowed(bytes),
                sha256: sha256.to_owned(),
                oci: None,
            });
        }
        GeneratorSource::Wasm { path, .. } => crate::project_file::read(
            &project.root.join(path),
            crate::project_file::COMPONENT_LIMIT,
        )
        .map(Cow::Owned)
        .map_err(|e| {
            fail(
                SourceError::Unreadable {
                    path: path.display().to_string(),
                    message: e.to_string(),
                }
                .into(),
            )
        })?,
        GeneratorSource::Package { path } => {
            let builder = project.packages.as_ref().ok_or_else(|| {
                fail(
                    SourceError::Build {
                        message: "this seams was built without its authoring tools (cargo install --no-default-features), which build packages; install seams with its default features, or build the package with seams test-generator and name its component with wasm = \"PATH.wasm\"".into(),
                    }
                    .into(),
                )
            })?;
            builder
                .build(project, &project.root.join(path))
                .map(Cow::Owned)
                .map_err(|message| fail(SourceError::Build { message }.into()))?
        }
        GeneratorSource::Oci(reference) => {
            let registry = project.registry.as_ref().ok_or_else(|| {
                fail(GeneratorErrorKind::Internal(
                    "no registry client is set up for this project (a bug in the caller)".into(),
                ))
            })?;
            let pin = pin.map(|p| Pin {
                manifest: p.manifest_digest.clone(),
                layer: p.layer_digest.clone(),
            });
            let fetched = fetch(registry, reference, pin)
                .map_err(|e| fail(SourceError::Pull { reason: e.reason() }.into()))?;
            let sha256 = sha256_hex(&fetched.component);
            return Ok(ComponentBytes {
                bytes: Cow::Owned(fetched.component),
                sha256,
                oci: Some(LockedOci {
                    manifest_digest: fetched.pin.manifest,
                    layer_digest: fetched.pin.layer,
                    signature_digest: None,
                }),
            });
        }
    };
    let sha256 = sha256_hex(&bytes);
    Ok(ComponentBytes {
        bytes,
        sha256,
        oci: None,
    })
}

/// The component of `source` (built, for a package), unpinned.
pub(crate) fn component_of(
    project: &Project,
    source: &GeneratorSource,
) -> Result<Vec<u8>, GeneratorError> {
    component_bytes(project, source, None).map(|c| c.bytes.into_owned())
}

/// The most of the host's memory a registry's answers may take while one
/// generator is fetched: a 1 MiB manifest and a 128 MiB component, each
/// copied a few times on the way.
const FETCH_MEMORY: usize = 512 << 20;

/// `registry.fetch` on a thread whose memory and time are capped: the OCI
/// client reads a manifest whole before seams can check its size, so what
/// a hostile registry sends is bounded here.
pub(crate) fn fetch(
    registry: &Registry,
    reference: &Reference,
    pin: Option<Pin>,
) -> Result<Fetched, RegistryError> {
    let (worker, wanted) = (registry.clone(), reference.clone());
    let time = registry.timeout() + std::time::Duration::from_secs(5);
    seams_runtime::capped(FETCH_MEMORY, time, move || {
        worker.fetch(&wanted, pin.as_ref())
    })
    .unwrap_or_else(|exceeded| {
        Err(RegistryError::Registry {
            registry: reference.registry().to_owned(),
            reason: format!("its answers {exceeded}; seams stopped reading them"),
        })
    })
}

/// The digests `lock` pins the `oci` generator `source` to, else those
/// `seams add` recorded for it, unless they are to be resolved again.
pub(crate) fn pin_of(
    project: &Project,
    lock: Option<&Lock>,
    source: &GeneratorSource,
    update: bool,
) -> Option<LockedOci> {
    if update || !matches!(source, GeneratorSource::Oci(_)) {
        return None;
    }
    let label = source.label();
    lock.and_then(|lock| {
        lock.generators
            .iter()
            .find(|g| g.source == label)?
            .oci
            .clone()
    })
    .or_else(|| crate::added::recorded(&project.root, &label))
}

/// Compiles (or loads from the cache) a component, checking the pin in
/// `seams.toml`.
pub(crate) fn load_bytes(
    runtime: &Runtime,
    source: &GeneratorSource,
    component: &ComponentBytes,
) -> Result<LoadedGenerator, GeneratorError> {
    let label = source.to_string();
    // Hashed once, when read (or when built, for a built-in).
    let loaded = runtime.load_hashed(&label, &component.bytes, &component.sha256)?;
    if let GeneratorSource::Wasm {
        sha256: Some(pinned),
        ..
    } = source
        && pinned != loaded.sha256()
    {
        return Err(GeneratorError {
            generator: label,
            kind: SourceError::Pinned {
                found: loaded.sha256().to_owned(),
                pinned: pinned.clone(),
            }
            .into(),
        });
    }
    Ok(loaded)
}

/// Reads and loads the component of `source` (an `oci` one by the digests
/// `lock` pins).
pub(crate) fn load_generator(
    project: &Project,
    runtime: &Runtime,
    source: &GeneratorSource,
    lock: Option<&Lock>,
) -> Result<LoadedGenerator, GeneratorError> {
    let component = component_bytes(
        project,
        source,
        pin_of(project, lock, source, false).as_ref(),
    )?;
    load_bytes(runtime, source, &component)
}

/// What a generation depends on, as bytes: enough to tell whether the
/// project is up to date, without parsing the model.
pub struct Stamp {
    /// The sha256 of `seams.toml`.
    pub manifest_sha256: String,
    /// Each model file's sha256, in `[model] files` order.
    pub model_files: Vec<LockedModelFile>,
    /// Per generator, in order: its component, or why it could not be read.
    pub components: Vec<Result<ComponentBytes, GeneratorError>>,
    /// The model files' bytes, kept so that they are parsed without being
    /// read again.
    model_bytes: Vec<Vec<u8>>,
}

/// What a generation depends on, read once: the stamp and the loaded
/// model, and the components that ran on them once they have.
pub struct Inputs {
    /// The loaded model.
    pub model: Arc<Model>,
    /// The bytes it and the rest were read from.
    pub stamp: Stamp,
    /// The components that ran on these inputs, freed with them.
    pub(crate) ran: std::sync::Mutex<Vec<LoadedGenerator>>,
}

impl Inputs {
    /// The inputs `model` was loaded from `stamp`.
    pub(crate) fn new(model: Arc<Model>, stamp: Stamp) -> Inputs {
        Inputs {
            model,
            stamp,
            ran: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Keeps `component`, which ran on these inputs, until they are freed:
    /// dropping a component unmaps its code, on the generator's thread
    /// ahead of the plan and the syncs (an untraced generate of one copy
    /// of the expense example took 0.8 ms less without it).
    pub(crate) fn keep(&self, component: LoadedGenerator) {
        self.ran
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(component);
    }

    /// Frees the inputs on a thread of their own, once a command needs
    /// them no more: freeing a model's store takes a share of a run that
    /// grows with the model (22 ms of the 1.3 s untraced run at expense
    /// x300), and freeing the components that ran on them takes one too
    /// ([`Inputs::keep`]), which the rest of the command need not wait
    /// for, and which a process that exits first never pays. Freed here
    /// when no thread can start.
    pub(crate) fn free_aside(self) {
        let _ = std::thread::Builder::new()
            .name("seams-free".to_owned())
            .spawn(move || drop(self));
    }
}

impl Stamp {
    /// Loads the model: the inputs of a generation that has work to do.
    ///
    /// # Errors
    ///
    /// The model cannot be read or parsed.
    pub fn load_model(self, project: &Project) -> Result<Inputs, GenerateError> {
        self.load_model_listing(project, &std::collections::BTreeSet::new())
    }

    /// [`Stamp::load_model`], the model knowing which properties its
    /// vocabularies make lists of ([`Model::with_lists`]).
    pub(crate) fn load_model_listing(
        mut self,
        project: &Project,
        lists: &std::collections::BTreeSet<String>,
    ) -> Result<Inputs, GenerateError> {
        let model = Model::from_files(&self.take_model_files(project))?.with_lists(lists.clone());
        Ok(Inputs::new(Arc::new(model), self))
    }

    /// Loads the model while `beside` runs on another thread with the
    /// stamp: what else a run needs (its components) is made ready
    /// meanwhile, not after. The IRIs of each namespace in `watch` are
    /// gathered as the model is read ([`Model::from_files_watching`]).
    ///
    /// # Errors
    ///
    /// As [`Stamp::load_model`]; `beside` runs to its end either way.
    pub(crate) fn load_model_beside<T: Send>(
        mut self,
        project: &Project,
        watch: &[String],
        beside: impl FnOnce(&Stamp) -> T + Send,
    ) -> Result<(Inputs, T), GenerateError> {
        let files = self.take_model_files(project);
        let stamp = &self;
        let (other, model) = seams_model::beside(
            "seams-components",
            move || beside(stamp),
            || Model::from_files_watching(&files, watch),
        );
        let inputs = Inputs::new(Arc::new(model?), self);
        Ok((inputs, other))
    }

    /// Each model file's path with its bytes, which the stamp no longer
    /// keeps.
    fn take_model_files<'p>(&mut self, project: &'p Project) -> Vec<(&'p PathBuf, Vec<u8>)> {
        project
            .model_files
            .iter()
            .zip(std::mem::take(&mut self.model_bytes))
            .collect()
    }
}

/// A generator's component, read.
pub struct ComponentBytes {
    /// The component.
    pub bytes: Cow<'static, [u8]>,
    /// Their sha256.
    pub sha256: String,
    /// For an `oci` generator, the digests it was pulled by.
    pub oci: Option<LockedOci>,
}

/// Reads what a generation depends on, and loads the model.
///
/// # Errors
///
/// The model or `seams.toml` cannot be read.
pub fn read_inputs(project: &Project) -> Result<Inputs, GenerateError> {
    let lock = read_lock(project)?;
    read_stamp(project, lock.as_ref(), false)?.load_model(project)
}

/// Reads the bytes a generation depends on, parsing nothing. An `oci`
/// generator comes by the digests `lock` pins (from the blob cache when it
/// has them), or is resolved at its registry when there is no pin or
/// `update` asks for it.
///
/// # Errors
///
/// A model file or `seams.toml` cannot be read.
pub fn read_stamp(
    project: &Project,
    lock: Option<&Lock>,
    update: bool,
) -> Result<Stamp, GenerateError> {
    Ok(read_model_stamp(project)?.with_components(project, lock, update))
}

/// Runs `read` (reading the lock and the journal, say) while the model
/// files and `seams.toml` are read and hashed on a second thread, when
/// the model is large enough for that to pay; `read`'s result, then the
/// stamp's model part ([`ModelStamp::with_components`] completes it: a
/// component may be pinned by the lock).
pub(crate) fn beside_model_stamp<T>(
    project: &Project,
    read: impl FnOnce() -> T,
) -> (T, Result<ModelStamp, GenerateError>) {
    let size: u64 = project
        .model_files
        .iter()
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|m| m.len())
        .sum();
    if size < seams_model::WORTH_A_THREAD_BYTES {
        let records = read();
        return (records, read_model_stamp(project));
    }
    let (model, records) =
        seams_model::beside("seams-model-stamp", || read_model_stamp(project), read);
    (records, model)
}

/// The stamp's parts that need no lock: `seams.toml` and the model files,
/// read and hashed.
pub(crate) struct ModelStamp {
    manifest_sha256: String,
    model_files: Vec<LockedModelFile>,
    model_bytes: Vec<Vec<u8>>,
}

impl ModelStamp {
    /// The stamp with `edit`'s text in its model file's place; the model
    /// write it makes (with the sha256 of the bytes replaced), or `None`
    /// when the file is not one of the model's.
    pub(crate) fn edit(&mut self, edit: &ModelEdit) -> Option<JournalModel> {
        let at = self.model_files.iter().position(|f| f.path == edit.path)?;
        let previous = std::mem::replace(
            &mut self.model_files[at].sha256,
            sha256_hex(edit.text.as_bytes()),
        );
        self.model_bytes[at] = edit.text.clone().into_bytes();
        Some(JournalModel {
            path: edit.path.clone(),
            previous,
            text: edit.text.clone(),
        })
    }

    /// The whole stamp: each generator's component read too (an `oci` one
    /// by the digests `lock` pins, see [`read_stamp`]).
    pub(crate) fn with_components(
        self,
        project: &Project,
        lock: Option<&Lock>,
        update: bool,
    ) -> Stamp {
        Stamp {
            manifest_sha256: self.manifest_sha256,
            model_files: self.model_files,
            model_bytes: self.model_bytes,
            components: project
                .generators
                .iter()
                .map(|source| {
                    component_bytes(
                        project,
                        source,
                        pin_of(project, lock, source, update).as_ref(),
                    )
                })
                .collect(),
        }
    }
}

/// Reads and hashes `seams.toml` and the model files.
pub(crate) fn read_model_stamp(project: &Project) -> Result<ModelStamp, GenerateError> {
    let manifest = project.root.join(MANIFEST);
    let manifest_bytes = crate::project_file::read(&manifest, crate::project_file::MANIFEST_LIMIT)
        .map_err(|source| GenerateError::Io {
            path: manifest,
            source,
        })?;
    let mut model_files = Vec::new();
    let mut model_bytes = Vec::new();
    for path in &project.model_files {
        let bytes = crate::project_file::read(path, crate::project_file::MODEL_LIMIT).map_err(
            |source| ModelError::Io {
                path: path.clone(),
                source,
            },
        )?;
        let relative = path.strip_prefix(&project.root).unwrap_or(path);
        model_files.push(LockedModelFile {
            path: posix(relative),
            sha256: sha256_hex(&bytes),
        });
        model_bytes.push(bytes);
    }
    Ok(ModelStamp {
        manifest_sha256: sha256_hex(&manifest_bytes),
        model_files,
        model_bytes,
    })
}

/// Reads the project's lock, if there is one.
///
/// # Errors
///
/// An unreadable or invalid lock.
pub fn read_lock(project: &Project) -> Result<Option<Lock>, GenerateError> {
    Ok(read_lock_and_text(project)?.map(|(lock, _)| lock))
}

/// The project's lock with its text, if there is one: a generate rewrites
/// the lock only when its text changes.
pub(crate) fn read_lock_and_text(
    project: &Project,
) -> Result<Option<(Lock, String)>, GenerateError> {
    read_record(project, LOCK_FILE, parse_lock)
}

/// A lock's bytes as read from `path`, parsed, with their text.
pub(crate) fn parse_lock(path: &str, bytes: &[u8]) -> Result<(Lock, String), LockError> {
    let text = decoded(path, bytes)?;
    Ok((Lock::parse(path, text)?, text.to_owned()))
}

/// Reads the project's journal, if an interrupted run left one. A journal
/// cut short ([`Journal::cut_short`]) reads as one that announces
/// nothing: its run was stopped before it renamed or deleted anything.
/// Any other is used only when this machine's seams sealed it
/// ([`crate::seal`]).
///
/// # Errors
///
/// An unreadable, invalid or unsealed journal, or no key to check it
/// with.
pub fn read_journal(project: &Project) -> Result<Option<Journal>, GenerateError> {
    let Some(bytes) = read_record(project, JOURNAL_FILE, |_, bytes| Ok(bytes.to_vec()))? else {
        return Ok(None);
    };
    let path = project.root.join(JOURNAL_FILE).display().to_string();
    if Journal::cut_short(&bytes) {
        return Ok(Some(Journal::empty()));
    }
    Ok(Some(parse_journal(&path, &bytes, &SealKey::for_user()?)?))
}

/// A journal's bytes as read from `path`, parsed and its seal checked.
pub(crate) fn parse_journal(path: &str, bytes: &[u8], key: &SealKey) -> Result<Journal, LockError> {
    if Journal::cut_short(bytes) {
        return Ok(Journal::empty());
    }
    Journal::parse_sealed(path, decoded(path, bytes)?, key)
}

/// Reads the record `name` in the project directory (the lock or the
/// journal) with `parse`, which gets its path and bytes; `None` when there
/// is none.
fn read_record<T>(
    project: &Project,
    name: &str,
    parse: impl Fn(&str, &[u8]) -> Result<T, LockError>,
) -> Result<Option<T>, GenerateError> {
    let path = project.root.join(name);
    let shown = path.display().to_string();
    match crate::project_file::read(&path, RECORD_LIMIT) {
        Ok(bytes) => Ok(Some(parse(&shown, &bytes)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => Err(LockError::Invalid {
            path: shown,
            message: format!(
                "{e}; seams never writes one that large: put back the file seams wrote (from version control)"
            ),
        }
        .into()),
        Err(source) => Err(GenerateError::Io { path, source }),
    }
}

/// The most bytes a lock or journal may have: a hostile one is not read
/// into memory whole. A thousand times what the lock of expense x100 (606
/// outputs, 24k triples) takes, 447 KB.
const RECORD_LIMIT: u64 = 512 << 20;

/// A record's bytes as text; `path` names it in the error.
fn decoded<'a>(path: &str, bytes: &'a [u8]) -> Result<&'a str, LockError> {
    seams_model::input_text::decode(bytes).map_err(|e| LockError::Invalid {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// A `.wasm` whose bytes differ from the component the lock pins.
/// (Built-ins are pinned by the seams version instead.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangedComponent {
    /// The generator's label, as the lock names it.
    pub(crate) label: String,
    /// The `.wasm` path, project-relative, posix.
    pub(crate) path: String,
    /// The sha256 the lock pins.
    pub(crate) locked: String,
    /// The sha256 of the file now.
    pub(crate) actual: String,
}

/// Every `.wasm` generator whose component differs from the lock's pin, in
/// `seams.toml` order.
pub(crate) fn changed_components(
    project: &Project,
    stamp: &Stamp,
    lock: &Lock,
) -> Vec<ChangedComponent> {
    let mut changed = Vec::new();
    for (source, component) in project.generators.iter().zip(&stamp.components) {
        let (GeneratorSource::Wasm { path, .. }, Ok(ComponentBytes { sha256: actual, .. })) =
            (source, component)
        else {
            continue;
        };
        let label = source.label();
        if let Some(locked) = lock.generators.iter().find(|g| g.source == label)
            && &locked.component_sha256 != actual
        {
            changed.push(ChangedComponent {
                label,
                path: posix(path),
                locked: locked.component_sha256.clone(),
                actual: actual.clone(),
            });
        }
    }
    changed
}

/// Whether the seams version, the model files, `seams.toml`, every
/// component and every locked file are byte for byte as the lock records
/// them (`out` is the output directory when it exists). Decided from bytes:
/// the model is not parsed. With `stat_cache` (a directory), a locked file
/// whose stat is as it was when a no-op last read it is not read again
/// ([`StatCache`]), and the stats of the files read are recorded when all
/// match.
pub(crate) fn up_to_date(
    project: &Project,
    stamp: &Stamp,
    lock: &Lock,
    out: Option<&OutputDir>,
    stat_cache: Option<&Path>,
) -> Result<bool, GenerateError> {
    if lock.lock_version != LOCK_VERSION
        || lock.incomplete
        || lock.model_files != stamp.model_files
        || lock.seams_version != env!("CARGO_PKG_VERSION")
        || lock.manifest_sha256 != stamp.manifest_sha256
        || lock.generators.len() != project.generators.len()
    {
        return Ok(false);
    }
    for (source, component) in project.generators.iter().zip(&stamp.components) {
        let Ok(ComponentBytes {
            sha256: sha, oci, ..
        }) = component
        else {
            return Ok(false);
        };
        let label = source.label();
        if !lock
            .generators
            .iter()
            .any(|g| g.source == label && &g.component_sha256 == sha && &g.oci == oci)
        {
            return Ok(false);
        }
    }
    let Some(out) = out else {
        return Ok(lock.outputs.is_empty());
    };
    let paths = lock
        .outputs
        .iter()
        .map(|entry| locked_path(project, &entry.path))
        .collect::<Result<Vec<_>, _>>()?;
    let cache = stat_cache.map(|dir| StatCache::load(dir, &project.root));
    let known = |i: usize, stat: &FileStat| {
        let entry = &lock.outputs[i];
        cache
            .as_ref()
            .is_some_and(|c| c.vouches(&entry.path, &entry.sha256, stat))
    };
    let matched = holding(
        out,
        &paths,
        |i| &lock.outputs[i].sha256,
        known,
        cache.is_some(),
    )
    .map_err(|(i, source)| {
        let writer = Some(lock.outputs[i].generator.as_str());
        GenerateError::unreadable(project, out, &paths[i], writer, source)
    })?;
    if let Some(cache) = cache
        && matched.all
        && matched.read_any
    {
        cache.record(matched.stats.into_iter().map(|(i, stat)| {
            let entry = &lock.outputs[i];
            (entry.path.as_str(), entry.sha256.as_str(), stat)
        }));
    }
    Ok(matched.all)
}

/// What [`holding`] found.
struct Holding {
    /// Whether every file holds its bytes.
    all: bool,
    /// Whether any file was read.
    read_any: bool,
    /// Each file's index and stat, when asked for.
    stats: Vec<(usize, FileStat)>,
}

/// Whether each of `paths` (in `out`) holds the bytes whose sha256 is
/// `sha256(i)`: vouched for by `known`, else read and hashed; stops at the
/// first that does not. With `collect`, the stat of each.
fn holding<'a, P: AsRef<str> + Sync>(
    out: &OutputDir,
    paths: &[P],
    sha256: impl Fn(usize) -> &'a str + Sync,
    known: impl Fn(usize, &FileStat) -> bool + Sync,
    collect: bool,
) -> Result<Holding, (usize, std::io::Error)> {
    let stats = std::sync::Mutex::new(Vec::new());
    let read_any = std::sync::atomic::AtomicBool::new(false);
    let all = out.hash_each(paths, known, |i, found| {
        let stat = match found {
            Some(Found::Known(stat)) => stat,
            Some(Found::Hashed { sha256: read, stat }) if read == sha256(i) => {
                read_any.store(true, std::sync::atomic::Ordering::Relaxed);
                stat
            }
            _ => return false,
        };
        if collect {
            stats
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((i, stat));
        }
        true
    })?;
    Ok(Holding {
        all,
        read_any: read_any.into_inner(),
        stats: stats
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    })
}

/// After a generate, records in `stat_cache` (a directory) the stat of the
/// files it wrote (`fresh`: lock path and stat right after seams's last
/// write), so that the next no-op reads none of them, with the entries
/// the record held for the other locked files. A file whose stat says it
/// was written since is read instead; when one no longer holds the lock's
/// bytes, the record is left as it was. Best effort, as recording is.
pub(crate) fn record_written(
    project: &Project,
    stat_cache: &Path,
    lock: &Lock,
    fresh: &[(String, FileStat)],
) {
    let Ok(Some(out)) = OutputDir::open_existing(&project.output_path()) else {
        return;
    };
    let locked: HashMap<&str, &str> = lock
        .outputs
        .iter()
        .map(|e| (e.path.as_str(), e.sha256.as_str()))
        .collect();
    // Only files the lock records, at paths it may name.
    let Ok(fresh) = fresh
        .iter()
        .filter_map(|(path, stat)| Some((path.as_str(), *locked.get(path.as_str())?, stat)))
        .map(|(path, sha256, stat)| Ok((path, sha256, stat, locked_path(project, path)?)))
        .collect::<Result<Vec<_>, LockError>>()
    else {
        return;
    };
    let paths: Vec<&str> = fresh.iter().map(|f| f.3.as_str()).collect();
    let Ok(matched) = holding(
        &out,
        &paths,
        |i| fresh[i].1,
        |i, stat| stat.same_write(fresh[i].2),
        true,
    ) else {
        return;
    };
    if !matched.all {
        return;
    }
    let cache = StatCache::load(stat_cache, &project.root);
    let written: HashSet<&str> = fresh.iter().map(|f| f.0).collect();
    let entries = matched
        .stats
        .into_iter()
        .map(|(i, stat)| (fresh[i].0, fresh[i].1, stat));
    cache.record(cache.carried(&locked, &written).chain(entries));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_record_is_read_up_to_its_limit_and_refused_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(crate::project_file::read(&path, 10).unwrap(), b"0123456789");
        let refused = crate::project_file::read(&path, 9).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(
            refused
                .to_string()
                .contains("10 bytes, over the limit of 9")
        );
        // Sparse, far larger than memory would hold: refused before a
        // byte is read or reserved.
        let huge = std::fs::File::create(&path).unwrap();
        huge.set_len(1 << 40).unwrap();
        let refused = crate::project_file::read(&path, RECORD_LIMIT).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::FileTooLarge);
    }

    /// A project whose model is `model.ttl` of `triples` triples, plus
    /// `extra.ttl` when `extra` is set (written or not by the caller).
    fn project(dir: &Path, triples: usize, extra: bool) -> Project {
        let files = if extra {
            r#"["model.ttl", "extra.ttl"]"#
        } else {
            r#"["model.ttl"]"#
        };
        std::fs::write(
            dir.join(MANIFEST),
            format!("[model]\nfiles = {files}\n\n[[generator]]\nbuiltin = \"htmx\"\n"),
        )
        .unwrap();
        let model: String = (0..triples)
            .map(|i| format!("<urn:s{i}> <urn:p> \"a literal long enough to count {i}\" .\n"))
            .collect();
        std::fs::write(dir.join("model.ttl"), model).unwrap();
        Project::load(dir).unwrap()
    }

    #[test]
    fn a_generate_records_the_files_it_wrote_unless_they_were_written_since() {
        #[derive(Debug, Clone, Copy)]
        enum Since {
            Untouched,
            SameBytes,
            OtherBytes,
            Replaced,
        }
        let page = b"<p>page</p>\n";
        let sha = |bytes: &[u8]| sha256_hex(bytes);
        let entry = |path: &str, bytes: &[u8]| crate::lock::LockedOutput {
            path: path.to_owned(),
            sha256: sha(bytes),
            generator: "htmx".to_owned(),
            generator_version: "0.1.0".to_owned(),
            component_sha256: String::new(),
            sources: Arc::default(),
        };
        // (what happened to the page after seams wrote it, whether the
        // record then vouches for the page as it is, whether the record
        // was rewritten: the orphan's entry dropped)
        for (since, page_vouched, rewritten) in [
            (Since::Untouched, true, true),
            (Since::SameBytes, true, true),
            (Since::Replaced, true, true),
            (Since::OtherBytes, false, false),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let project = project(dir.path(), 1, false);
            let stat_dir = dir.path().join("stat");
            let out = OutputDir::open(&project.output_path()).unwrap();
            let stat_of = |rel: &str| {
                FileStat::of(&std::fs::metadata(project.output_path().join(rel)).unwrap())
            };
            // A file a no-op recorded before, and an orphan's entry.
            out.write("kept.html", b"kept").unwrap();
            out.write("gone.html", b"gone").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            let cache = StatCache::load(&stat_dir, &project.root);
            cache.record([
                ("out/kept.html", sha(b"kept").as_str(), stat_of("kept.html")),
                ("out/gone.html", sha(b"gone").as_str(), stat_of("gone.html")),
            ]);
            // The generate writes the page.
            let staged = out.stage("page.html", page).unwrap();
            let fresh = vec![("out/page.html".to_owned(), staged.written().unwrap())];
            staged.rename().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            let path = project.output_path().join("page.html");
            match since {
                Since::Untouched => {}
                Since::SameBytes => std::fs::write(&path, page).unwrap(),
                Since::OtherBytes => std::fs::write(&path, b"<p>PAGE</p>\n").unwrap(),
                Since::Replaced => out.write("page.html", page).unwrap(),
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            let lock = Lock {
                lock_version: LOCK_VERSION,
                seams_version: String::new(),
                model_hash: String::new(),
                manifest_sha256: String::new(),
                model_files: Vec::new(),
                incomplete: false,
                generators: Vec::new(),
                outputs: vec![
                    entry("out/kept.html", b"kept"),
                    entry("out/page.html", page),
                ],
                sources: Vec::new(),
            };
            record_written(&project, &stat_dir, &lock, &fresh);

            let cache = StatCache::load(&stat_dir, &project.root);
            assert_eq!(
                cache.vouches("out/page.html", &sha(page), &stat_of("page.html")),
                page_vouched,
                "{since:?}"
            );
            assert!(
                cache.vouches("out/kept.html", &sha(b"kept"), &stat_of("kept.html")),
                "{since:?}: carried over"
            );
            assert_eq!(
                cache.vouches("out/gone.html", &sha(b"gone"), &stat_of("gone.html")),
                !rewritten,
                "{since:?}"
            );
        }
    }

    #[test]
    fn inputs_freed_aside_are_freed() {
        let dir = tempfile::tempdir().unwrap();
        let project = project(dir.path(), 1000, false);
        let inputs = read_stamp(&project, None, false)
            .unwrap()
            .load_model(&project)
            .unwrap();
        let model = Arc::downgrade(&inputs.model);
        inputs.free_aside();
        let start = std::time::Instant::now();
        while model.upgrade().is_some() {
            assert!(start.elapsed().as_secs() < 30, "the model was not freed");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn the_model_is_stamped_beside_the_records_as_it_is_alone() {
        // Under and over the size that moves the hashing to a thread.
        for triples in [10, 10_000] {
            let dir = tempfile::tempdir().unwrap();
            let project = project(dir.path(), triples, false);
            let (read, model) = beside_model_stamp(&project, || 42);
            assert_eq!(read, 42);
            let beside = model.unwrap().with_components(&project, None, false);
            let alone = read_stamp(&project, None, false).unwrap();
            assert_eq!(beside.manifest_sha256, alone.manifest_sha256);
            assert_eq!(beside.model_files, alone.model_files);
            assert_eq!(beside.model_bytes, alone.model_bytes);
            assert_eq!(beside.components.len(), 1);
        }
    }

    #[test]
    fn a_model_file_that_cannot_be_read_is_named_and_the_records_still_read() {
        for triples in [10, 10_000] {
            let dir = tempfile::tempdir().unwrap();
            let project = project(dir.path(), triples, true);
            let (read, model) = beside_model_stamp(&project, || "lock");
            assert_eq!(read, "lock");
            let Err(error) = model else {
                panic!("extra.ttl is missing, yet the model was stamped");
            };
            assert!(error.to_string().contains("extra.ttl"), "{error}");
        }
    }
}
