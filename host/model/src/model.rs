//! The model: RDF files loaded into an in-memory store, its hash, its
//! labels, and the read-only SPARQL service generators query.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use oxigraph::io::{RdfFormat, RdfParser, RdfSerializer, RdfSyntaxError};
use oxigraph::model::{
    BlankNode, GraphName, GraphNameRef, NamedNode, NamedNodeRef, NamedOrBlankNode as Subject,
    NamedOrBlankNodeRef, Quad, Term, TermRef,
};
use oxigraph::sparql::results::{QueryResultsFormat, QueryResultsSerializer};
use oxigraph::sparql::{CancellationToken, QueryResults, SparqlEvaluator};
use oxigraph::store::Store;
use sha2::{Digest, Sha256};

use crate::answer::{Answer, BoundedWriter};
use crate::vocabulary::Watched;

/// Prefixes every query gets unless the model binds the name itself.
/// The suffixes of the files a model is read from: Turtle, TriG,
/// N-Triples, N-Quads.
pub const MODEL_SUFFIXES: [&str; 4] = ["ttl", "trig", "nt", "nq"];

const STANDARD_PREFIXES: [(&str, &str); 3] = [
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
];

const RDFS_LABEL: NamedNodeRef<'static> =
    NamedNodeRef::new_unchecked("http://www.w3.org/2000/01/rdf-schema#label");

/// Bounds the work RDFC-1.0 may do on blank nodes, so that a crafted
/// ("poison") graph fails fast instead of hashing for hours.
const CANONICALIZATION_CALL_LIMIT: usize = 100_000;

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A model file could not be read.
    #[error("cannot read model file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A model file's suffix is not one seams reads.
    #[error(
        "model file {} has an unknown suffix; use .ttl (Turtle), .trig (TriG), .nt (N-Triples) or .nq (N-Quads)",
        path.display()
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A model file is not valid RDF.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What the parser said.
        message: String,
    },
    /// The model's blank nodes are too entangled to canonicalize.
    #[error(
        "cannot compute the model hash: {0}; the model's blank nodes are too symmetric, name some of them with IRIs"
    )]
    Canonicalization(String),
    /// The store refused the data.
    #[error("cannot store the model: {0}")]
    Store(String),
}

/// Why a query failed; the message is shown to the generator and the user.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// Not valid SPARQL.
    #[error("invalid SPARQL: {0}")]
    Syntax(String),
    /// A SPARQL update: the model is read-only.
    #[error("SPARQL updates are refused: the model is read-only to generators")]
    UpdateRefused,
    /// The generator's time budget ran out during the query.
    #[error("the query ran past the generator's time budget")]
    Timeout,
    /// The answer grew past the limit.
    #[error("the query's answer is larger than {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// Evaluation failed.
    #[error("query failed: {0}")]
    Evaluation(String),
    /// Too long or too deeply nested for the engine to handle safely.
    #[error("{0}")]
    Shape(crate::query_shape::Refusal),
}

/// The loaded model: an in-memory store with its prefixes, hash and labels.
pub struct Model {
    store: Store,
    prefixes: BTreeMap<String, String>,
    hash: String,
    labels: Vec<(String, String)>,
    len: usize,
    /// The IRIs of each namespace asked for ([`Model::iris_in`]).
    pub(crate) namespaces: Mutex<HashMap<String, Arc<Vec<String>>>>,
    /// Where the model was read from, to say where a term is written.
    sources: Vec<Source>,
    /// Properties a vocabulary lets an element hold several of (a form's
    /// fields), though this model may give each element one
    /// ([`Model::with_lists`]).
    pub(crate) lists: std::collections::BTreeSet<String>,
}

/// One document of the model: a file, read again only to locate a term
/// in it, or a text parsed from memory.
#[derive(Debug)]
enum Source {
    File(PathBuf),
    Text(PathBuf, String),
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("hash", &self.hash)
            .field("prefixes", &self.prefixes)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Loads TriG, Turtle, N-Triples and N-Quads files (chosen by suffix)
    /// into one dataset. Relative IRIs are refused, so that the model does
    /// not depend on where the project lives.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, has an unknown suffix or is not valid
    /// RDF; a syntax error names the file, line and column.
    pub fn load(paths: &[impl AsRef<Path>]) -> Result<Model, ModelError> {
        let files = paths
            .iter()
            .map(|path| {
                let path = path.as_ref();
                crate::input_file::read(path, crate::input_file::MODEL_FILE_LIMIT)
                    .map(|data| (path, data))
                    .map_err(|source| ModelError::Io {
                        path: path.to_owned(),
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_files(&files)
    }

    /// As [`Model::load`], from files already read, as `(path, bytes)`:
    /// for a caller that hashed them first.
    ///
    /// # Errors
    ///
    /// As [`Model::load`], but for reading.
    pub fn from_files(
        files: &[(impl AsRef<Path> + Sync, impl AsRef<[u8]> + Sync)],
    ) -> Result<Model, ModelError> {
        Self::from_files_watching(files, &[])
    }

    /// [`Model::from_files`], gathering the IRIs of each of `namespaces`
    /// as the quads are read: a vocabulary check of one of them then
    /// needs no scan of the store.
    ///
    /// # Errors
    ///
    /// As [`Model::from_files`].
    pub fn from_files_watching(
        files: &[(impl AsRef<Path> + Sync, impl AsRef<[u8]> + Sync)],
        namespaces: &[String],
    ) -> Result<Model, ModelError> {
        let bytes: usize = files.iter().map(|(_, data)| data.as_ref().len()).sum();
        let streamed = (bytes as u64 >= crate::cores::WORTH_A_THREAD_BYTES)
            .then(|| Self::streamed(files, namespaces))
            .flatten();
        let mut model = match streamed {
            Some(model) => model?,
            // A small model, or no thread for the parser: parsed, then
            // stored.
            None => {
                let (quads, prefixes) = Self::parse_all(files)?;
                Self::from_quads(quads, prefixes, namespaces)?
            }
        };
        model.sources = files
            .iter()
            .map(|(path, _)| Source::File(path.as_ref().to_owned()))
            .collect();
        Ok(model)
    }

    /// Parses `files` on a thread of its own, which also writes the
    /// canonical line and gathers the label of each quad, while this one
    /// fills the store with each batch as it comes: filling the store, the
    /// longest step beside 1M triples, no longer waits for the parse
    /// (there, 3.6 s -> 2.3 s for a whole untraced generate, and 740 ->
    /// 670 MB, since parsed quads are no longer held). Quads with blank
    /// nodes wait for the parse's end, to be relabelled. `None` when no
    /// thread could be started.
    fn streamed(
        files: &[(impl AsRef<Path> + Sync, impl AsRef<[u8]> + Sync)],
        namespaces: &[String],
    ) -> Option<Result<Model, ModelError>> {
        /// Quads per batch, and batches on their way: a few hundred KiB.
        const BATCH: usize = 1024;
        const BATCHES: usize = 8;
        let store = match Store::new() {
            Ok(store) => store,
            Err(e) => return Some(Err(store_error(e))),
        };
        let (send, batches) = std::sync::mpsc::sync_channel::<Vec<Quad>>(BATCHES);
        std::thread::scope(|scope| {
            let parser = std::thread::Builder::new()
                .name("seams-model-parse".to_owned())
                .spawn_scoped(scope, move || {
                    let mut prefixes = BTreeMap::new();
                    let mut lines = Vec::new();
                    let mut labels = Labels::default();
                    let mut watched = Watched::new(namespaces);
                    let mut batch = Vec::with_capacity(BATCH);
                    for (path, data) in files {
                        let sent = Self::parse_each(
                            &mut prefixes,
                            path.as_ref(),
                            data.as_ref(),
                            |quad| {
                                if !has_blank_node(&quad) {
                                    lines.push(canonical_line(&quad));
                                }
                                // Relabelling renames no labelled (or
                                // watched) IRI.
                                labels.add(&quad);
                                watched.add(&quad);
                                batch.push(quad);
                                batch.len() < BATCH
                                    || send
                                        .send(std::mem::replace(
                                            &mut batch,
                                            Vec::with_capacity(BATCH),
                                        ))
                                        .is_ok()
                            },
                        )?;
                        if !sent {
                            // The store failed: its error is the one told.
                            return Ok((prefixes, lines, labels, watched));
                        }
                    }
                    // The last batch; a store that failed tells its error.
                    let _ = send.send(batch);
                    Ok((prefixes, lines, labels, watched))
                })
                .ok()?;
            let stored = (|| {
                let mut transaction = store.start_transaction().map_err(store_error)?;
                // Only the quads with blank nodes are kept, for their
                // labels: RDFC-1.0 labels a blank node by the quads that
                // name blank nodes, and the others are stored as parsed.
                let mut blank = Vec::new();
                for quad in batches.iter().flatten() {
                    if has_blank_node(&quad) {
                        blank.push(quad);
                    } else {
                        transaction.insert(&quad);
                    }
                }
                Ok((transaction, blank))
            })();
            // A store that failed stops the parser at its next batch.
            drop(batches);
            let parsed: Result<_, ModelError> = parser
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload));
            Some((|| {
                let (prefixes, mut lines, labels, watched) = parsed?;
                let (mut transaction, mut blank) = stored?;
                relabel_blank_nodes(&mut blank)?;
                let (hash, len) = fill_beside(&mut transaction, &blank, || {
                    lines.extend(blank.iter().map(canonical_line));
                    hash_lines(lines)
                });
                transaction.commit().map_err(store_error)?;
                Ok((prefixes, hash, labels.sorted(), watched, len))
            })())
        })
        .map(|made| {
            made.map(|(prefixes, hash, labels, watched, len)| {
                Model::new(store, prefixes, hash, labels, watched, len)
            })
        })
    }

    /// Parses one document from memory; `name`'s suffix gives its format.
    ///
    /// # Errors
    ///
    /// As [`Model::load`].
    pub fn parse(name: &str, text: &str) -> Result<Model, ModelError> {
        let (quads, prefixes) = Self::parse_all(&[(Path::new(name), text.as_bytes())])?;
        let mut model = Self::from_quads(quads, prefixes, &[])?;
        model.sources = vec![Source::Text(PathBuf::from(name), text.to_owned())];
        Ok(model)
    }

    /// The text of each document the model was read from, with its path;
    /// a file that can no longer be read is left out.
    pub(crate) fn source_texts(&self) -> impl Iterator<Item = (PathBuf, String)> + '_ {
        self.sources.iter().filter_map(|source| match source {
            Source::File(path) => {
                crate::input_file::read(path, crate::input_file::MODEL_FILE_LIMIT)
                    .ok()
                    .map(|bytes| (path.clone(), String::from_utf8_lossy(&bytes).into_owned()))
            }
            Source::Text(path, text) => Some((path.clone(), text.clone())),
        })
    }

    /// Every quad of `files`, and the prefixes they bind.
    fn parse_all(
        files: &[(impl AsRef<Path>, impl AsRef<[u8]>)],
    ) -> Result<(Vec<Quad>, BTreeMap<String, String>), ModelError> {
        let mut quads = Vec::new();
        let mut prefixes = BTreeMap::new();
        for (path, data) in files {
            Self::parse_each(&mut prefixes, path.as_ref(), data.as_ref(), |quad| {
                quads.push(quad);
                true
            })?;
        }
        Ok((quads, prefixes))
    }

    /// Parses one file, showing each quad to `each` until it says stop;
    /// whether it never did. The prefixes the file binds are added to
    /// `prefixes`: the first file that binds one wins, so the order of
    /// `[model] files` decides, not a hash map.
    fn parse_each(
        prefixes: &mut BTreeMap<String, String>,
        path: &Path,
        data: &[u8],
        mut each: impl FnMut(Quad) -> bool,
    ) -> Result<bool, ModelError> {
        let format = match path.extension().and_then(|e| e.to_str()) {
            Some("ttl") => RdfFormat::Turtle,
            Some("trig") => RdfFormat::TriG,
            Some("nt") => RdfFormat::NTriples,
            Some("nq") => RdfFormat::NQuads,
            _ => {
                return Err(ModelError::UnknownFormat {
                    path: path.to_owned(),
                });
            }
        };
        let data = crate::input_text::strip_bom(data);
        let mut parser = RdfParser::from_format(format).for_slice(data);
        for quad in &mut parser {
            if !each(quad.map_err(|e| syntax_error(path, e))?) {
                return Ok(false);
            }
        }
        for (name, iri) in parser.prefixes() {
            prefixes
                .entry(name.to_owned())
                .or_insert_with(|| iri.to_owned());
        }
        Ok(true)
    }

    /// Hashes and labels come from the parsed quads, not the store: the
    /// store may normalize literals (`02` as `2`), and the hash must not.
    pub(crate) fn from_quads(
        mut quads: Vec<Quad>,
        prefixes: BTreeMap<String, String>,
        namespaces: &[String],
    ) -> Result<Model, ModelError> {
        // Parsers label anonymous nodes (`[ ... ]`) at random: the labels
        // generators see, and so sidecars and the lock, come from the
        // canonical form instead. A dataset is a set: the same quad in two
        // files counts once.
        relabel_blank_nodes(&mut quads)?;
        let store = Store::new().map_err(store_error)?;
        let mut transaction = store.start_transaction().map_err(store_error)?;
        let ((hash, len), labels, watched) = fill_beside(&mut transaction, &quads, || {
            let mut watched = Watched::new(namespaces);
            quads.iter().for_each(|quad| watched.add(quad));
            (canonical_hash(&quads), labels_of(&quads), watched)
        });
        transaction.commit().map_err(store_error)?;
        Ok(Model::new(store, prefixes, hash, labels, watched, len))
    }

    /// A model of a filled store, read from no document yet.
    fn new(
        store: Store,
        prefixes: BTreeMap<String, String>,
        hash: String,
        labels: Vec<(String, String)>,
        watched: Watched,
        len: usize,
    ) -> Model {
        Model {
            store,
            prefixes,
            hash,
            labels,
            len,
            namespaces: Mutex::new(watched.into_found()),
            sources: Vec::new(),
            lists: std::collections::BTreeSet::new(),
        }
    }

    /// The model, knowing that its vocabularies let an element hold
    /// several values of each of `properties` (those their shapes do not
    /// cap at one): a form with one field is still a list of fields, so a
    /// copy of the field joins it.
    pub fn with_lists(mut self, properties: impl IntoIterator<Item = String>) -> Model {
        self.lists.extend(properties);
        self
    }

    /// The model hash: sha256 (lowercase hex) of the canonical N-Quads.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// How many distinct triples (quads) the model has.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the model has no triples at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every labelled IRI with its label, sorted by IRI.
    pub fn labels(&self) -> &[(String, String)] {
        &self.labels
    }

    /// `IRI<TAB>label` lines, sorted by IRI, each ending in a newline.
    pub fn label_lines(&self) -> String {
        self.labels
            .iter()
            .map(|(iri, label)| format!("{iri}\t{}\n", label.replace(['\n', '\t'], " ")))
            .collect()
    }

    /// The label of `iri`, if it has one.
    pub fn label(&self, iri: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| k.as_str().cmp(iri))
            .ok()
            .map(|i| self.labels[i].1.as_str())
    }

    /// Whether the model mentions `term`: an IRI, or `_:LABEL` for one of
    /// its (canonically labelled) blank nodes, as subject, predicate, object
    /// or graph name. What a generator claims a line or a file came from
    /// must be one of these.
    pub fn mentions(&self, term: &str) -> bool {
        let found = |s: Option<NamedOrBlankNodeRef<'_>>,
                     p: Option<NamedNodeRef<'_>>,
                     o: Option<TermRef<'_>>,
                     g: Option<GraphNameRef<'_>>| {
            self.store.quads_for_pattern(s, p, o, g).next().is_some()
        };
        if let Some(label) = term.strip_prefix("_:") {
            let Ok(node) = BlankNode::new(label) else {
                return false;
            };
            let node = node.as_ref();
            return found(Some(node.into()), None, None, None)
                || found(None, None, Some(node.into()), None)
                || found(None, None, None, Some(node.into()));
        }
        let Ok(node) = NamedNode::new(term) else {
            return false;
        };
        let node = node.as_ref();
        found(Some(node.into()), None, None, None)
            || found(None, Some(node), None, None)
            || found(None, None, Some(node.into()), None)
            || found(None, None, None, Some(node.into()))
    }

    /// The prefixes the model's files declare.
    pub fn prefixes(&self) -> &BTreeMap<String, String> {
        &self.prefixes
    }

    /// `iri` as the model's files would write it: a prefixed name when a
    /// prefix covers it with a plain local name, else `<iri>`.
    pub fn compact(&self, iri: &str) -> String {
        let plain = |local: &str| {
            local
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        };
        self.prefixes
            .iter()
            .filter_map(|(prefix, ns)| {
                let local = iri.strip_prefix(ns.as_str())?;
                plain(local).then(|| (ns.len(), format!("{prefix}:{local}")))
            })
            .max()
            .map_or_else(|| format!("<{iri}>"), |(_, name)| name)
    }

    /// The store, for the checks of this crate.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// Expands a prefixed name (`chat:thread`) with the model's prefixes;
    /// anything else is returned as it is.
    pub fn expand(&self, name: &str) -> String {
        if let Some((prefix, local)) = name.split_once(':')
            && let Some(ns) = self.prefixes.get(prefix)
        {
            return format!("{ns}{local}");
        }
        name.to_owned()
    }

    /// The rows of a SELECT [`Model::query`], each bound variable's value
    /// as text (an IRI, a literal's lexical form).
    ///
    /// # Errors
    ///
    /// As [`Model::query`], and an answer that is not a SELECT's.
    pub fn rows(
        &self,
        sparql: &str,
        deadline: Instant,
        max_bytes: usize,
    ) -> Result<Vec<BTreeMap<String, String>>, QueryError> {
        let answer = self.query(sparql, deadline, max_bytes)?;
        let json: serde_json::Value = serde_json::from_str(&answer)
            .map_err(|e| QueryError::Evaluation(format!("not a SELECT answer: {e}")))?;
        let bindings = json["results"]["bindings"]
            .as_array()
            .ok_or_else(|| QueryError::Evaluation("not a SELECT answer".into()))?;
        Ok(bindings
            .iter()
            .filter_map(serde_json::Value::as_object)
            .map(|row| {
                row.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v["value"].as_str()?.to_owned())))
                    .collect()
            })
            .collect())
    }

    /// Runs a read-only SPARQL query, with the model's prefixes declared.
    /// SELECT and ASK answer in SPARQL 1.1 JSON results, CONSTRUCT and
    /// DESCRIBE in N-Triples. The query is cancelled at `deadline`, and its
    /// answer may not exceed `max_bytes`.
    ///
    /// # Errors
    ///
    /// Invalid SPARQL, an update, the deadline, the size limit, or an
    /// evaluation error.
    pub fn query(
        &self,
        sparql: &str,
        deadline: Instant,
        max_bytes: usize,
    ) -> Result<String, QueryError> {
        crate::query_shape::check(sparql).map_err(QueryError::Shape)?;
        let token = CancellationToken::new();
        // Built without an HTTP client, SERVICE cannot reach the network.
        let mut evaluator = SparqlEvaluator::new().with_cancellation_token(token.clone());
        for (name, iri) in STANDARD_PREFIXES {
            if !self.prefixes.contains_key(name) {
                evaluator = evaluator
                    .with_prefix(name, iri)
                    .map_err(|e| QueryError::Syntax(e.to_string()))?;
            }
        }
        for (name, iri) in &self.prefixes {
            evaluator = evaluator
                .with_prefix(name, iri)
                .map_err(|e| QueryError::Syntax(e.to_string()))?;
        }
        let prepared = match evaluator.clone().parse_query(sparql) {
            Ok(prepared) => prepared,
            Err(e) => {
                if evaluator.parse_update(sparql).is_ok() {
                    return Err(QueryError::UpdateRefused);
                }
                return Err(QueryError::Syntax(e.to_string()));
            }
        };
        let _watch = crate::watchdog::watch(token, deadline).map_err(QueryError::Evaluation)?;
        let timed_out = || Instant::now() >= deadline;
        let evaluation = |e: &dyn std::fmt::Display| {
            if timed_out() {
                QueryError::Timeout
            } else {
                QueryError::Evaluation(e.to_string())
            }
        };
        let results = prepared
            .on_store(&self.store)
            .execute()
            .map_err(|e| evaluation(&e))?;
        let mut out = BoundedWriter::new(max_bytes);
        let io = |e: std::io::Error, out: &BoundedWriter| {
            if out.overflowed {
                QueryError::TooLarge { limit: max_bytes }
            } else {
                evaluation(&e)
            }
        };
        match results {
            QueryResults::Boolean(value) => {
                QueryResultsSerializer::from_format(QueryResultsFormat::Json)
                    .serialize_boolean_to_writer(&mut out, value)
                    .map_err(|e| QueryError::Evaluation(e.to_string()))?;
            }
            QueryResults::Solutions(solutions) => {
                let too_large = |_| QueryError::TooLarge { limit: max_bytes };
                let mut answer =
                    Answer::start(solutions.variables(), max_bytes).map_err(too_large)?;
                for solution in solutions {
                    let solution = solution.map_err(|e| evaluation(&e))?;
                    answer.push(&solution).map_err(too_large)?;
                }
                let text = answer.finish().map_err(too_large)?;
                if timed_out() {
                    return Err(QueryError::Timeout);
                }
                return Ok(text);
            }
            QueryResults::Graph(triples) => {
                let mut writer =
                    RdfSerializer::from_format(RdfFormat::NTriples).for_writer(&mut out);
                for triple in triples {
                    let triple = triple.map_err(|e| evaluation(&e))?;
                    if let Err(e) = writer.serialize_triple(&triple) {
                        drop(writer);
                        return Err(io(e, &out));
                    }
                }
                if let Err(e) = writer.finish() {
                    return Err(io(e, &out));
                }
            }
        }
        if timed_out() {
            return Err(QueryError::Timeout);
        }
        String::from_utf8(out.buf).map_err(|e| QueryError::Evaluation(e.to_string()))
    }
}

fn syntax_error(path: &Path, error: RdfSyntaxError) -> ModelError {
    let (line, column) = error
        .location()
        .map(|r| (r.start.line + 1, r.start.column + 1))
        .unwrap_or((1, 1));
    ModelError::Syntax {
        path: path.to_owned(),
        line,
        column,
        message: error.to_string(),
    }
}

/// Below this many quads, the store is filled and the quads hashed one
/// after the other, for the same reason.
const WORTH_A_THREAD_QUADS: usize = 2048;

/// Adds `quads` to the store's `transaction` while `beside` runs, on a
/// thread of its own when one can be started and there are enough quads
/// for that to pay: the hash and the labels read the quads the store
/// takes, and filling the store and hashing took about as long each at
/// expense x300.
fn fill_beside<T: Send>(
    transaction: &mut oxigraph::store::Transaction<'_>,
    quads: &[Quad],
    beside: impl FnOnce() -> T + Send,
) -> T {
    if quads.len() < WORTH_A_THREAD_QUADS {
        transaction.extend(quads);
        return beside();
    }
    crate::cores::beside("seams-model-hash", beside, || transaction.extend(quads)).0
}

fn store_error(e: oxigraph::store::StorageError) -> ModelError {
    ModelError::Store(e.to_string())
}

/// Whether a quad names a blank node, which only the whole dataset can
/// label canonically.
fn has_blank_node(quad: &Quad) -> bool {
    matches!(quad.subject, Subject::BlankNode(_))
        || matches!(quad.object, Term::BlankNode(_))
        || matches!(quad.graph_name, GraphName::BlankNode(_))
}

/// A quad's line of the canonical N-Quads, as `rdf_canon::serialize`
/// writes it, without its ` .` and line break.
fn canonical_line(quad: &Quad) -> String {
    to_canon_quad(quad).to_string()
}

/// Relabels the blank nodes of `quads` with their RDFC-1.0 canonical
/// labels (`c14n0`, ...); graphs without blank nodes skip the
/// canonicalization.
fn relabel_blank_nodes(quads: &mut [Quad]) -> Result<(), ModelError> {
    if quads.iter().any(has_blank_node) {
        let dataset: oxrdf_canon::Dataset = quads.iter().map(to_canon_quad).collect();
        let options = rdf_canon::CanonicalizationOptions {
            hndq_call_limit: Some(CANONICALIZATION_CALL_LIMIT),
        };
        let issued = rdf_canon::issue_with::<Sha256>(&dataset, &options)
            .map_err(|e| ModelError::Canonicalization(e.to_string()))?;
        let relabel = |node: &BlankNode| -> BlankNode {
            issued
                .get(node.as_str())
                .map_or_else(|| node.clone(), BlankNode::new_unchecked)
        };
        for quad in quads.iter_mut() {
            if let Subject::BlankNode(b) = &quad.subject {
                quad.subject = relabel(b).into();
            }
            if let Term::BlankNode(b) = &quad.object {
                quad.object = relabel(b).into();
            }
            if let GraphName::BlankNode(b) = &quad.graph_name {
                quad.graph_name = relabel(b).into();
            }
        }
    }
    Ok(())
}

/// The sha256 of the canonical N-Quads of `quads`, relabelled, and how
/// many distinct quads they are.
fn canonical_hash(quads: &[Quad]) -> (String, usize) {
    hash_lines(quads.iter().map(canonical_line).collect())
}

/// The sha256 of canonical N-Quads lines ([`canonical_line`]), sorted and
/// each once as `rdf_canon::serialize` writes them, and how many they are:
/// no dataset with its six indexes is built for it.
fn hash_lines(mut lines: Vec<String>) -> (String, usize) {
    lines.sort_unstable();
    lines.dedup();
    let mut digest = Sha256::new();
    for line in &lines {
        digest.update(line.as_bytes());
        digest.update(b" .\n");
    }
    (hex(&digest.finalize()), lines.len())
}

/// Every labelled IRI with its label, sorted by IRI; of several labels,
/// the smallest, so that the choice is stable.
fn labels_of(quads: &[Quad]) -> Vec<(String, String)> {
    let mut labels = Labels::default();
    quads.iter().for_each(|quad| labels.add(quad));
    labels.sorted()
}

/// The labels of IRIs, gathered quad by quad ([`labels_of`]).
#[derive(Default)]
struct Labels(BTreeMap<String, String>);

impl Labels {
    fn add(&mut self, quad: &Quad) {
        if quad.predicate.as_ref() != RDFS_LABEL {
            return;
        }
        let (Subject::NamedNode(s), Term::Literal(l)) = (&quad.subject, &quad.object) else {
            return;
        };
        self.0
            .entry(s.as_str().to_owned())
            .and_modify(|v| {
                if l.value() < v.as_str() {
                    *v = l.value().to_owned();
                }
            })
            .or_insert_with(|| l.value().to_owned());
    }

    fn sorted(self) -> Vec<(String, String)> {
        self.0.into_iter().collect()
    }
}

/// Whether `text` is an absolute IRI a model can name an element by.
pub fn is_iri(text: &str) -> bool {
    NamedNode::new(text).is_ok()
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The sha256 of what `reader` gives, lowercase hex, read a piece at a
/// time into `buffer`: a large file is hashed without being held.
///
/// # Errors
///
/// The reader's.
pub fn sha256_hex_of(mut reader: impl std::io::Read, buffer: &mut [u8]) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    loop {
        match reader.read(buffer) {
            Ok(0) => return Ok(hex(&hasher.finalize())),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

// rdf-canon speaks the previous oxrdf; the terms are rebuilt from their
// already-validated parts.
fn to_canon_quad(quad: &Quad) -> oxrdf_canon::Quad {
    use oxrdf_canon as c;
    let subject: c::Subject = match &quad.subject {
        Subject::NamedNode(n) => c::NamedNode::new_unchecked(n.as_str()).into(),
        Subject::BlankNode(b) => c::BlankNode::new_unchecked(b.as_str()).into(),
    };
    let object: c::Term = match &quad.object {
        Term::NamedNode(n) => c::NamedNode::new_unchecked(n.as_str()).into(),
        Term::BlankNode(b) => c::BlankNode::new_unchecked(b.as_str()).into(),
        Term::Literal(l) => match l.language() {
            Some(lang) => c::Literal::new_language_tagged_literal_unchecked(l.value(), lang).into(),
            None => c::Literal::new_typed_literal(
                l.value(),
                c::NamedNode::new_unchecked(l.datatype().as_str()),
            )
            .into(),
        },
    };
    let graph: c::GraphName = match quad.graph_name.as_ref() {
        GraphNameRef::DefaultGraph => c::GraphName::DefaultGraph,
        GraphNameRef::NamedNode(n) => c::NamedNode::new_unchecked(n.as_str()).into(),
        GraphNameRef::BlankNode(b) => c::BlankNode::new_unchecked(b.as_str()).into(),
    };
    c::Quad::new(
        subject,
        c::NamedNode::new_unchecked(quad.predicate.as_str()),
        object,
        graph,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    const CHAT_TTL: &str = r#"
        @prefix ex: <https://example.org/chat#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        ex:thread rdfs:label "Thread" ; ex:order 2 .
        ex:list rdfs:label "List"@en ; ex:items [ ex:first ex:a ; ex:rest [ ex:first ex:b ] ] .
    "#;

    #[test]
    fn a_syntax_error_names_file_line_and_column() {
        let err = Model::parse(
            "broken.ttl",
            "@prefix ex: <urn:ex:> .\nex:a ex:b ex:c ;;\nex:d .\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("broken.ttl:"), "{text}");
        match err {
            ModelError::Syntax { line, column, .. } => {
                assert!(line >= 2, "line {line}");
                assert!(column >= 1);
            }
            other => panic!("expected a syntax error, got {other}"),
        }
    }

    #[test]
    fn an_unknown_suffix_is_refused_with_the_known_ones() {
        let err = Model::parse("model.rdf", "").unwrap_err();
        assert!(err.to_string().contains(".ttl (Turtle)"), "{err}");
    }

    #[test]
    fn the_model_mentions_its_iris_and_blank_nodes_in_every_position() {
        let model = Model::parse(
            "m.trig",
            "<urn:s> <urn:p> <urn:o> .\n<urn:g> { <urn:a> <urn:b> [ <urn:c> \"x\" ] }\n",
        )
        .unwrap();
        for term in [
            "urn:s", "urn:p", "urn:o", "urn:g", "urn:a", "urn:b", "urn:c", "_:c14n0",
        ] {
            assert!(model.mentions(term), "{term}");
        }
        for term in ["urn:x", "x", "", "_:c14n9", "_:", "\"x\"", "urn:s urn:p"] {
            assert!(!model.mentions(term), "{term}");
        }
    }

    #[test]
    fn the_same_graph_written_differently_has_the_same_hash() {
        let turtle = Model::parse("a.ttl", CHAT_TTL).unwrap();
        // The same graph as N-Triples, in another order, with other blank
        // node labels and without prefixes.
        let ntriples = r#"
<https://example.org/chat#list> <https://example.org/chat#items> _:x1 .
_:x2 <https://example.org/chat#first> <https://example.org/chat#b> .
_:x1 <https://example.org/chat#rest> _:x2 .
<https://example.org/chat#thread> <https://example.org/chat#order> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .
_:x1 <https://example.org/chat#first> <https://example.org/chat#a> .
<https://example.org/chat#list> <http://www.w3.org/2000/01/rdf-schema#label> "List"@en .
<https://example.org/chat#thread> <http://www.w3.org/2000/01/rdf-schema#label> "Thread" .
"#;
        let other = Model::parse("b.nt", ntriples).unwrap();
        assert_eq!(turtle.hash(), other.hash());
        let changed =
            Model::parse("c.ttl", &CHAT_TTL.replace("\"Thread\"", "\"Thread!\"")).unwrap();
        assert_ne!(turtle.hash(), changed.hash());
    }

    /// The store's quads as sorted N-Quads lines.
    fn stored(model: &Model) -> Vec<String> {
        let mut quads: Vec<String> = model
            .store
            .iter()
            .map(|quad| quad.unwrap().to_string())
            .collect();
        quads.sort();
        quads
    }

    #[test]
    fn files_parsed_while_the_store_fills_make_the_model_parsed_whole_makes() {
        // Past several batches, with blank nodes early, late and across
        // files, a quad repeated in two files and labels in both.
        let many: String = (0..5000)
            .map(|i| format!("<urn:s{i}> <urn:p> \"{i}\" .\n"))
            .collect();
        let first = format!("{CHAT_TTL}\n{many}_:late <urn:p> <urn:s1> .\n");
        let second = "@prefix ex: <https://example.org/chat#> .\n\
            ex:thread ex:order 2 .\n\
            [] ex:first ex:late ; <http://www.w3.org/2000/01/rdf-schema#label> \"Late\" .\n\
            <urn:s7> <http://www.w3.org/2000/01/rdf-schema#label> \"Seven\" .\n";
        // Every quad naming a blank node: nothing is stored before the end.
        let ring: String = (0..3000)
            .map(|i| {
                format!(
                    "_:b{i} <urn:v> \"{i}\" .\n_:b{i} <urn:next> _:b{} .\n",
                    (i + 1) % 3000
                )
            })
            .collect();
        let graph = "<urn:graph> { <urn:s1> <urn:p> <urn:graphed> . }\n";
        // Watched as they are read, in subjects, predicates, objects and
        // graph names: what a scan of the store finds.
        let watch = [
            "urn:s1".to_owned(),
            "https://example.org/chat#".to_owned(),
            "urn:graph".to_owned(),
            "urn:none#".to_owned(),
            "urn:s1".to_owned(),
        ];
        for files in [
            vec![("a.ttl", first.as_str()), ("b.ttl", second)],
            vec![("ring.nt", ring.as_str()), ("b.ttl", second)],
            vec![
                ("b.ttl", second),
                ("a.ttl", first.as_str()),
                ("g.trig", graph),
            ],
            vec![("c.nt", many.as_str())],
        ] {
            let streamed = Model::streamed(&files, &watch).unwrap().unwrap();
            let (quads, prefixes) = Model::parse_all(&files).unwrap();
            let whole = Model::from_quads(quads.clone(), prefixes.clone(), &watch).unwrap();
            let scanned = Model::from_quads(quads, prefixes, &[]).unwrap();
            for namespace in &watch {
                for model in [&streamed, &whole] {
                    let found = model.namespaces.lock().unwrap().get(namespace).cloned();
                    assert_eq!(found, Some(scanned.iris_in(namespace)), "{namespace}");
                }
            }
            // Something to find, in every case.
            assert!(watch.iter().any(|n| scanned.iris_in(n).len() > 1));
            assert_eq!(whole.namespaces.lock().unwrap().len(), 4);
            assert_eq!(scanned.namespaces.lock().unwrap().len(), 4);
            assert_eq!(streamed.hash(), whole.hash());
            assert_eq!(streamed.len(), whole.len());
            assert_eq!(streamed.labels(), whole.labels());
            assert_eq!(streamed.prefixes, whole.prefixes);
            assert_eq!(stored(&streamed), stored(&whole));
            assert!(stored(&streamed).len() >= 5000);
            assert!(!stored(&streamed).iter().any(|q| q.contains("_:b")));
        }
        // A syntax error past the first batches names its file and line.
        let broken = format!("{many}<urn:a> <urn:b> .\n");
        let err = Model::streamed(&[("a.ttl", CHAT_TTL), ("late.nt", broken.as_str())], &[])
            .unwrap()
            .unwrap_err();
        match err {
            ModelError::Syntax { line, .. } => assert_eq!(line, 5001, "{err}"),
            other => panic!("expected a syntax error, got {other}"),
        }
        assert!(err.to_string().starts_with("late.nt:5001"), "{err}");
    }

    #[test]
    fn literal_lexical_forms_are_not_normalized() {
        let a = Model::parse("a.ttl", "<urn:a> <urn:b> 2 .").unwrap();
        let b = Model::parse("b.ttl", "<urn:a> <urn:b> 02 .").unwrap();
        assert_ne!(a.hash(), b.hash());
    }

    #[test]
    fn a_graph_without_blank_nodes_hashes_its_sorted_nquads() {
        let model = Model::parse(
            "a.nt",
            "<urn:b> <urn:p> \"x\" .\n<urn:a> <urn:p> <urn:c> .\n",
        )
        .unwrap();
        let expected = sha256_hex(b"<urn:a> <urn:p> <urn:c> .\n<urn:b> <urn:p> \"x\" .\n");
        assert_eq!(model.hash(), expected);
    }

    #[test]
    fn labels_are_sorted_by_iri() {
        let model = Model::parse("a.ttl", CHAT_TTL).unwrap();
        assert_eq!(
            model.label_lines(),
            "https://example.org/chat#list\tList\nhttps://example.org/chat#thread\tThread\n"
        );
        assert_eq!(
            model.label("https://example.org/chat#thread"),
            Some("Thread")
        );
    }

    #[test]
    fn queries_see_the_model_prefixes() {
        let model = Model::parse("a.ttl", CHAT_TTL).unwrap();
        let json = model
            .query(
                "SELECT ?l WHERE { ex:thread rdfs:label ?l }",
                soon(),
                1 << 20,
            )
            .unwrap();
        assert!(json.contains("\"Thread\""), "{json}");
        let ask = model
            .query("ASK { ex:list ex:items ?x }", soon(), 1 << 20)
            .unwrap();
        assert!(ask.contains("true"), "{ask}");
        let construct = model
            .query(
                "CONSTRUCT { ?s rdfs:label ?l } WHERE { ?s rdfs:label ?l }",
                soon(),
                1 << 20,
            )
            .unwrap();
        assert_eq!(construct.lines().count(), 2, "{construct}");
    }

    #[test]
    fn an_update_is_refused() {
        let model = Model::parse("a.ttl", CHAT_TTL).unwrap();
        for update in [
            "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
            "DELETE WHERE { ?s ?p ?o }",
            "CLEAR ALL",
        ] {
            let err = model.query(update, soon(), 1 << 20).unwrap_err();
            assert_eq!(err, QueryError::UpdateRefused, "{update}");
        }
        let before = model.hash().to_owned();
        assert!(
            model
                .query("SELECT * WHERE { ?s ?p ?o }", soon(), 1 << 20)
                .is_ok()
        );
        assert_eq!(model.hash(), before);
    }

    #[test]
    fn rows_are_a_selects_bindings_and_an_ask_is_no_select() {
        let model = Model::parse("m.ttl", "<urn:a> <urn:p> \"x\" , \"y\" .\n").unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let rows = model
            .rows(
                "SELECT ?v WHERE { <urn:a> <urn:p> ?v } ORDER BY ?v",
                deadline,
                1 << 16,
            )
            .unwrap();
        let values: Vec<&str> = rows.iter().map(|r| r["v"].as_str()).collect();
        assert_eq!(values, ["x", "y"]);
        assert!(model.rows("ASK { ?s ?p ?o }", deadline, 1 << 16).is_err());
    }

    #[test]
    fn a_query_past_its_deadline_is_cancelled() {
        let mut ttl = String::from("@prefix ex: <urn:ex:> .\n");
        for i in 0..300 {
            ttl.push_str(&format!("ex:s{i} ex:p {i} .\n"));
        }
        let model = Model::parse("a.ttl", &ttl).unwrap();
        // 300^4 rows: far beyond any deadline.
        let err = model
            .query(
                "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f . ?g ?h ?i }",
                Instant::now() + Duration::from_millis(200),
                1 << 20,
            )
            .unwrap_err();
        assert_eq!(err, QueryError::Timeout);
    }

    #[test]
    fn an_answer_past_the_size_limit_is_refused() {
        let model = Model::parse("a.ttl", CHAT_TTL).unwrap();
        let err = model
            .query("SELECT * WHERE { ?s ?p ?o }", soon(), 64)
            .unwrap_err();
        assert_eq!(err, QueryError::TooLarge { limit: 64 });
    }
}
