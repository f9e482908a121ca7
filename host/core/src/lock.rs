//! `seams.lock`: every output pinned with its hash, the generator that
//! wrote it and the model elements it came from.
//!
//! The lock is JSON with a fixed key order, two-space indent and a final
//! newline, sorted by path, with no timestamps: the same generation gives
//! the same bytes, and it changes only when an output does.
//!
//! An output's sources are indexes into one table of IRIs, written as a
//! single string (`"0 4 17-250"`, a run of three or more consecutive
//! indexes as its first and last): thousands of pages that each cite the
//! same thousands of model elements (a navigation listing every page)
//! would otherwise repeat every IRI on a line of its own, for each page
//! and again for its sidecar, or every index.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use seams_model::input_text;
use serde::{Deserialize, Serialize};

/// The lock's file name, in the project directory.
pub const LOCK_FILE: &str = "seams.lock";

/// The lock format's version. 2 added `incomplete` (1 marked an
/// incomplete run with an empty `manifest_sha256`); 3 added `model_files`,
/// so that a no-op is decided from bytes without parsing the model; 4 added
/// `oci`, the digests an `oci` generator is pinned to; 5 made each output's
/// `sources` indexes into the lock's table of IRIs, `sources`; 6 writes a
/// run of consecutive indexes as a range (`17-250`).
pub const LOCK_VERSION: u32 = 6;

/// A whole `seams.lock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    /// The format version, [`LOCK_VERSION`].
    pub lock_version: u32,
    /// The seams version that generated the outputs: another seams may
    /// render or trace differently, so it generates again. Locks written
    /// before this field existed read as "".
    pub seams_version: String,
    /// The model hash the outputs were generated from.
    pub model_hash: String,
    /// The sha256 of `seams.toml` when they were generated.
    pub manifest_sha256: String,
    /// Each model file's bytes, in `[model] files` order. Locks of formats
    /// 1 and 2 read as empty.
    pub model_files: Vec<LockedModelFile>,
    /// A generator failed, or a run was interrupted: some outputs are not
    /// what this `seams.toml` and model give, so the next generate runs
    /// every generator whatever else matches.
    pub incomplete: bool,
    /// Every generator that ran, sorted by name.
    pub generators: Vec<LockedGenerator>,
    /// Every output, sorted by path.
    pub outputs: Vec<LockedOutput>,
    /// Every model IRI an output was made from, sorted and distinct: the
    /// table its `sources` index.
    pub sources: Vec<String>,
}

/// A model file as it was when the outputs were generated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedModelFile {
    /// The posix path relative to the project directory.
    pub path: String,
    /// The sha256 of its bytes.
    pub sha256: String,
}

/// A generator as it was when it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedGenerator {
    /// Its name (from its meta).
    pub name: String,
    /// Its version (from its meta).
    pub version: String,
    /// How `seams.toml` names it: `builtin:NAME` or the `.wasm` path.
    pub source: String,
    /// The sha256 of its component.
    pub component_sha256: String,
    /// For an `oci` generator, the digests it is pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<LockedOci>,
}

/// The digests an `oci` generator was pulled by: later runs use these
/// whatever its tag points at now, until `seams generate --update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedOci {
    /// The manifest's digest, `sha256:HEX`.
    pub manifest_digest: String,
    /// The component layer's digest, `sha256:HEX`.
    pub layer_digest: String,
    /// Reserved for the digest of a signature over the manifest; seams
    /// writes none yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_digest: Option<String>,
}

/// One pinned output file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockedOutput {
    /// The posix path relative to the project directory.
    pub path: String,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// The generator's name.
    pub generator: String,
    /// The generator's version.
    pub generator_version: String,
    /// The sha256 of the generator's component.
    pub component_sha256: String,
    /// The model IRIs it was made from: ascending indexes into
    /// [`Lock::sources`].
    #[serde(serialize_with = "indexes_text")]
    pub sources: Arc<[u32]>,
}

/// Ascending indexes as one string of decimal numbers separated by
/// spaces, three or more consecutive ones as `first-last`.
fn indexes_text<S: serde::Serializer>(indexes: &Arc<[u32]>, s: S) -> Result<S::Ok, S::Error> {
    use std::fmt::Write;
    let mut text = String::new();
    let mut rest = &indexes[..];
    while let Some(&first) = rest.first() {
        // The run of consecutive indexes that starts here.
        let run = rest
            .iter()
            .zip(first..)
            .take_while(|(index, expected)| **index == *expected)
            .count();
        if !text.is_empty() {
            text.push(' ');
        }
        if run >= 3 {
            let _ = write!(text, "{first}-{}", rest[run - 1]);
            rest = &rest[run..];
        } else {
            let _ = write!(text, "{first}");
            rest = &rest[1..];
        }
    }
    s.serialize_str(&text)
}

/// A lock as written, before its sources are checked against its table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock {
    lock_version: u32,
    #[serde(default)]
    seams_version: String,
    model_hash: String,
    manifest_sha256: String,
    #[serde(default)]
    model_files: Vec<LockedModelFile>,
    #[serde(default)]
    incomplete: bool,
    generators: Vec<LockedGenerator>,
    outputs: Vec<RawOutput>,
    #[serde(default)]
    sources: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    path: String,
    sha256: String,
    generator: String,
    generator_version: String,
    component_sha256: String,
    sources: RawSources,
}

/// The indexes of formats 5 and 6, or the IRIs formats 1 to 4 listed per
/// output.
enum RawSources {
    Indexes(String),
    Iris(Vec<String>),
}

// By hand rather than `#[serde(untagged)]`, which copies every value into
// a buffer before trying each form: a lock's sources are most of its
// bytes.
impl<'de> Deserialize<'de> for RawSources {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawSources, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawSources;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string of indexes or a list of IRIs")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<RawSources, E> {
                Ok(RawSources::Indexes(text.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<RawSources, E> {
                Ok(RawSources::Indexes(text))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<RawSources, A::Error> {
                let mut iris = Vec::new();
                while let Some(iri) = seq.next_element()? {
                    iris.push(iri);
                }
                Ok(RawSources::Iris(iris))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl RawLock {
    /// The lock, its sources checked (format 5) or turned into indexes
    /// (formats 1 to 4).
    fn into_lock(self) -> Result<Lock, String> {
        let old = self.lock_version < 5;
        let table = if old {
            let iris: BTreeSet<&str> = self
                .outputs
                .iter()
                .filter_map(|o| match &o.sources {
                    RawSources::Iris(iris) => Some(iris.iter().map(String::as_str)),
                    RawSources::Indexes(_) => None,
                })
                .flatten()
                .collect();
            iris.into_iter().map(str::to_owned).collect()
        } else {
            if !self.sources.windows(2).all(|w| w[0] < w[1]) {
                return Err("its sources are not sorted and distinct".to_owned());
            }
            self.sources
        };
        let index: HashMap<&str, u32> = if old {
            table
                .iter()
                .enumerate()
                .map(|(i, iri)| (iri.as_str(), i as u32))
                .collect()
        } else {
            HashMap::new()
        };
        let mut outputs = Vec::with_capacity(self.outputs.len());
        for o in self.outputs {
            let sources = match (o.sources, old) {
                (RawSources::Iris(iris), true) => {
                    let mut indexes: Vec<u32> =
                        iris.iter().map(|iri| index[iri.as_str()]).collect();
                    indexes.sort_unstable();
                    indexes.dedup();
                    indexes
                }
                (RawSources::Indexes(text), false) => {
                    parse_indexes(&text, table.len()).map_err(|why| {
                        format!("output {}: sources {why}", input_text::echo(&o.path))
                    })?
                }
                _ => {
                    return Err(format!(
                        "output {}: its sources are not in the form of lock_version {}",
                        input_text::echo(&o.path),
                        self.lock_version
                    ));
                }
            };
            outputs.push(LockedOutput {
                path: o.path,
                sha256: o.sha256,
                generator: o.generator,
                generator_version: o.generator_version,
                component_sha256: o.component_sha256,
                sources: sources.into(),
            });
        }
        Ok(Lock {
            lock_version: self.lock_version,
            seams_version: self.seams_version,
            model_hash: self.model_hash,
            manifest_sha256: self.manifest_sha256,
            model_files: self.model_files,
            incomplete: self.incomplete,
            generators: self.generators,
            outputs,
            sources: table,
        })
    }
}

/// Ascending indexes below `len`, from their text (format 5 wrote no
/// ranges; reading them anyway does no harm).
fn parse_indexes(text: &str, len: usize) -> Result<Vec<u32>, String> {
    let index = |part: &str, word: &str| -> Result<u32, String> {
        let index: u32 = part
            .parse()
            .map_err(|_| format!("hold {}, which is not an index", input_text::echo(word)))?;
        if index as usize >= len {
            return Err(format!("index {index}, past the table's {len} IRIs"));
        }
        Ok(index)
    };
    // Every range is checked before any is expanded, and the list is
    // made at its length once: grown range by range, a lock of thousands
    // of outputs spent more on copying and fresh pages than on reading.
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut count = 0usize;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        // Both ends are checked against the table, so a range holds at
        // most the table's length.
        let (first, last) = match word.split_once('-') {
            Some((first, last)) => (index(first, word)?, index(last, word)?),
            None => {
                let only = index(word, word)?;
                (only, only)
            }
        };
        if first > last || ranges.last().is_some_and(|&(_, seen)| seen >= first) {
            return Err("are not in ascending order".to_owned());
        }
        ranges.push((first, last));
        // Ascending and within the table: the count stays under its length.
        count += (last - first) as usize + 1;
    }
    let mut indexes = Vec::with_capacity(count);
    for (first, last) in ranges {
        indexes.extend(first..=last);
    }
    Ok(indexes)
}

/// Why the lock (or the journal beside it) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Not a lock this or any seams wrote.
    #[error("{path}: {message}; delete it and run `seams generate` to write a new one")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A lock of a newer format, written by a newer seams.
    #[error(
        "{path}: lock_version {found} is newer than {supported}, the newest this seams reads; upgrade seams, or generate with the seams that wrote it (seams_version {written_by})"
    )]
    Newer {
        /// The file.
        path: String,
        /// Its format version.
        found: u32,
        /// The newest this seams reads.
        supported: u32,
        /// The seams version that wrote it, as the file says, quoted.
        written_by: String,
    },
}

impl Lock {
    /// Parses a lock's text; `path` names it in errors. A lock of an older
    /// format is read as this format (and rewritten by the next generate);
    /// one of a newer format is refused.
    ///
    /// # Errors
    ///
    /// Invalid JSON, a wrong shape, or a version this seams does not read.
    pub fn parse(path: &str, text: &str) -> Result<Lock, LockError> {
        let error = |message: String| LockError::Invalid {
            path: path.to_owned(),
            message,
        };
        // A newer lock is named as one rather than as a shape this seams
        // does not know: its version is read when the whole does not
        // read, or reads with a version past this seams's. (Read once
        // otherwise: a lock can be tens of megabytes.)
        #[derive(Deserialize)]
        struct Version {
            lock_version: u32,
            #[serde(default)]
            seams_version: String,
        }
        let version_error = |version: Version| match version.lock_version {
            newer if newer > LOCK_VERSION => Some(LockError::Newer {
                path: path.to_owned(),
                found: newer,
                supported: LOCK_VERSION,
                written_by: seams_model::input_text::echo(&version.seams_version),
            }),
            1..=LOCK_VERSION => None,
            other => Some(error(format!(
                "lock_version {other} is not a format seams ever wrote (1 to {LOCK_VERSION})"
            ))),
        };
        let invalid = |e: serde_json::Error| error(seams_model::input_text::cut(&e.to_string()));
        let raw: RawLock = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let version: Version = serde_json::from_str(text).map_err(invalid)?;
                return Err(version_error(version).unwrap_or_else(|| invalid(e)));
            }
        };
        if let Some(e) = version_error(Version {
            lock_version: raw.lock_version,
            seams_version: raw.seams_version.clone(),
        }) {
            return Err(e);
        }
        let mut lock = raw.into_lock().map_err(error)?;
        for g in &lock.generators {
            if let Some(oci) = &g.oci
                && !(seams_registry::is_digest(&oci.manifest_digest)
                    && seams_registry::is_digest(&oci.layer_digest))
            {
                return Err(error(format!(
                    "generator {}: its oci digests must be sha256: and 64 lowercase hex digits",
                    seams_model::input_text::echo(&g.source)
                )));
            }
        }
        if lock.lock_version == 1 {
            // Format 1 marked an incomplete run with an empty hash.
            lock.incomplete = lock.manifest_sha256.is_empty();
        }
        Ok(lock)
    }

    /// The lock's canonical text.
    pub fn to_text(&self) -> String {
        // The lock's fields, in order, borrowed: a lock of thousands of
        // outputs is not copied to be sorted.
        #[derive(Serialize)]
        struct Text<'a> {
            lock_version: u32,
            seams_version: &'a str,
            model_hash: &'a str,
            manifest_sha256: &'a str,
            model_files: &'a [LockedModelFile],
            incomplete: bool,
            generators: Vec<&'a LockedGenerator>,
            outputs: Vec<&'a LockedOutput>,
            sources: &'a [String],
        }
        let mut generators: Vec<&LockedGenerator> = self.generators.iter().collect();
        generators.sort_by(|a, b| a.name.cmp(&b.name).then(a.source.cmp(&b.source)));
        let mut outputs: Vec<&LockedOutput> = self.outputs.iter().collect();
        outputs.sort_by(|a, b| a.path.cmp(&b.path));
        let lock = Text {
            lock_version: self.lock_version,
            seams_version: &self.seams_version,
            model_hash: &self.model_hash,
            manifest_sha256: &self.manifest_sha256,
            model_files: &self.model_files,
            incomplete: self.incomplete,
            generators,
            outputs,
            sources: &self.sources,
        };
        let mut text = serde_json::to_string_pretty(&lock).expect("a lock always serializes");
        text.push('\n');
        text
    }

    /// The IRIs of an output's sources.
    pub fn source_iris<'a>(&'a self, output: &'a LockedOutput) -> impl Iterator<Item = &'a str> {
        output
            .sources
            .iter()
            .filter_map(|&i| self.sources.get(i as usize).map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock {
            lock_version: LOCK_VERSION,
            seams_version: "0.1.0".into(),
            model_hash: "ab".into(),
            manifest_sha256: "ef".into(),
            model_files: vec![LockedModelFile {
                path: "model.ttl".into(),
                sha256: "12".into(),
            }],
            incomplete: false,
            generators: vec![
                LockedGenerator {
                    name: "htmx".into(),
                    version: "0.1.0".into(),
                    source: "builtin:htmx".into(),
                    component_sha256: "cd".into(),
                    oci: None,
                },
                LockedGenerator {
                    name: "pulled".into(),
                    version: "1.0.0".into(),
                    source: "oci:127.0.0.1:5000/pulled:1".into(),
                    component_sha256: "a".repeat(64),
                    oci: Some(LockedOci {
                        manifest_digest: format!("sha256:{}", "b".repeat(64)),
                        layer_digest: format!("sha256:{}", "a".repeat(64)),
                        signature_digest: None,
                    }),
                },
            ],
            outputs: vec![
                LockedOutput {
                    path: "out/b.html".into(),
                    sha256: "1".into(),
                    generator: "htmx".into(),
                    generator_version: "0.1.0".into(),
                    component_sha256: "cd".into(),
                    sources: [1].into(),
                },
                LockedOutput {
                    path: "out/a.html".into(),
                    sha256: "2".into(),
                    generator: "htmx".into(),
                    generator_version: "0.1.0".into(),
                    component_sha256: "cd".into(),
                    sources: [].into(),
                },
            ],
            sources: vec!["urn:a".into(), "urn:b".into()],
        }
    }

    #[test]
    fn the_text_is_sorted_and_round_trips() {
        let text = lock().to_text();
        assert!(text.ends_with("}\n"));
        assert!(text.find("out/a.html").unwrap() < text.find("out/b.html").unwrap());
        let back = Lock::parse("seams.lock", &text).unwrap();
        assert_eq!(back.to_text(), text);
    }

    #[test]
    fn a_bad_lock_is_named_with_what_to_do() {
        let err = Lock::parse("p/seams.lock", "{\"lock_version\": 2}")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("p/seams.lock: "), "{err}");
        assert!(err.contains("seams generate"), "{err}");
        let err = Lock::parse("seams.lock", "{\"lock_version\": 0}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("lock_version 0 is not a format"), "{err}");
    }

    #[test]
    fn a_newer_lock_is_refused_naming_both_versions() {
        let text = lock()
            .to_text()
            .replace(
                &format!("\"lock_version\": {LOCK_VERSION}"),
                "\"lock_version\": 9",
            )
            .replace("\"0.1.0\",\n  \"model_hash", "\"7.0.0\",\n  \"model_hash");
        let err = Lock::parse("seams.lock", &text).unwrap_err();
        assert!(
            matches!(
                err,
                LockError::Newer {
                    found: 9,
                    supported: LOCK_VERSION,
                    ..
                }
            ),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(
            err.contains(&format!("lock_version 9 is newer than {LOCK_VERSION}")),
            "{err}"
        );
        assert!(err.contains("seams_version \"7.0.0\""), "{err}");
        assert!(!err.contains("delete it"), "{err}");
    }

    #[test]
    fn a_hostile_version_field_is_refused_or_quoted_short() {
        for text in [
            "{\"lock_version\": \"2\"}",
            "{\"lock_version\": -1}",
            "{\"lock_version\": 99999999999999999999}",
            "{}",
            "[]",
        ] {
            let err = Lock::parse("seams.lock", text).unwrap_err();
            assert!(matches!(err, LockError::Invalid { .. }), "{text}: {err:?}");
        }
        // A newer lock's seams_version is echoed escaped and cut.
        let huge = format!("\u{1b}[2J{}", "9".repeat(100_000));
        let text = format!(
            "{{\"lock_version\": 4, \"seams_version\": {}}}",
            serde_json::json!(huge)
        );
        let err = Lock::parse("seams.lock", &text).unwrap_err().to_string();
        assert!(err.len() < 600, "{} bytes", err.len());
        assert!(!err.contains('\u{1b}'), "{err:?}");
    }

    #[test]
    fn a_format_1_lock_is_read_with_its_incomplete_state() {
        let v1 = |manifest: &str| {
            format!(
                "{{\"lock_version\": 1, \"seams_version\": \"0.1.0\", \"model_hash\": \"ab\", \"manifest_sha256\": \"{manifest}\", \"generators\": [], \"outputs\": []}}"
            )
        };
        let complete = Lock::parse("seams.lock", &v1("ef")).unwrap();
        assert!(!complete.incomplete);
        assert_eq!(
            complete.lock_version, 1,
            "kept, so the next generate rewrites it"
        );
        let incomplete = Lock::parse("seams.lock", &v1("")).unwrap();
        assert!(incomplete.incomplete);
    }

    #[test]
    fn malformed_model_files_are_refused_as_invalid() {
        // Their paths are only compared with the project's, never opened.
        let text = lock().to_text();
        for bad in [
            "\"model_files\": \"model.ttl\"",
            "\"model_files\": [{\"path\": 1, \"sha256\": \"12\"}]",
            "\"model_files\": [{\"path\": \"m\", \"sha256\": \"12\", \"extra\": 1}]",
        ] {
            let start = text.find("\"model_files\"").unwrap();
            let end = start + text[start..].find("],").unwrap() + 1;
            let crafted = format!("{}{bad}{}", &text[..start], &text[end..]);
            let err = Lock::parse("seams.lock", &crafted).unwrap_err();
            assert!(matches!(err, LockError::Invalid { .. }), "{bad}: {err:?}");
        }
    }

    #[test]
    fn oci_digests_that_are_not_sha256_digests_are_refused() {
        // They name files in the blob cache.
        let text = lock().to_text();
        assert!(!text.contains("signature_digest"));
        let good = format!("sha256:{}", "b".repeat(64));
        for bad in [
            "sha256:../../../etc/passwd",
            "md5:00",
            "",
            &good.to_uppercase(),
        ] {
            let crafted = text.replace(&good, bad);
            let err = Lock::parse("seams.lock", &crafted).unwrap_err();
            assert!(
                err.to_string().contains("oci digests must be sha256"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn sources_are_one_line_of_indexes_into_the_table() {
        let text = lock().to_text();
        assert!(text.contains("\"sources\": \"1\""), "{text}");
        assert!(text.contains("\"sources\": \"\""), "{text}");
        assert!(
            text.ends_with("\"sources\": [\n    \"urn:a\",\n    \"urn:b\"\n  ]\n}\n"),
            "{text}"
        );
        let back = Lock::parse("seams.lock", &text).unwrap();
        let b = back
            .outputs
            .iter()
            .find(|o| o.path == "out/b.html")
            .unwrap();
        assert_eq!(back.source_iris(b).collect::<Vec<_>>(), ["urn:b"]);
    }

    #[test]
    fn runs_of_three_or_more_indexes_are_written_as_ranges_and_read_back() {
        let mut lock = lock();
        lock.sources = (0..12).map(|i| format!("urn:{i:02}")).collect();
        for (indexes, text) in [
            (vec![], ""),
            (vec![4], "4"),
            (vec![0, 1], "0 1"),
            (vec![0, 1, 2], "0-2"),
            (vec![0, 1, 2, 3, 5, 7, 8, 10, 11], "0-3 5 7 8 10 11"),
            (vec![1, 3, 4, 5, 6, 9, 10, 11], "1 3-6 9-11"),
            ((0..12).collect(), "0-11"),
        ] {
            lock.outputs[0].sources = indexes.clone().into();
            let written = lock.to_text();
            assert!(
                written.contains(&format!("\"sources\": \"{text}\"")),
                "{indexes:?}: {written}"
            );
            let back = Lock::parse("seams.lock", &written).unwrap();
            let same = back.outputs.iter().find(|o| o.path == lock.outputs[0].path);
            assert_eq!(*same.unwrap().sources, indexes, "{text}");
        }
        // Format 5 wrote every index; its locks read the same.
        lock.outputs[0].sources = [0, 1, 2, 3].into();
        let v5 = lock
            .to_text()
            .replace("\"0-3\"", "\"0 1 2 3\"")
            .replace("\"lock_version\": 6", "\"lock_version\": 5");
        let back = Lock::parse("seams.lock", &v5).unwrap();
        let same = back.outputs.iter().find(|o| o.path == lock.outputs[0].path);
        assert_eq!(
            (back.lock_version, &*same.unwrap().sources),
            (5, &[0, 1, 2, 3][..])
        );
    }

    #[test]
    fn ranges_past_the_table_backwards_or_overlapping_are_refused() {
        let text = lock().to_text();
        for bad in [
            "0-2", "1-0", "0-1 1", "0-1 0-1", "a-1", "0-", "-", "0-1-1", "0--1",
        ] {
            let crafted =
                text.replacen("\"sources\": \"1\"", &format!("\"sources\": \"{bad}\""), 1);
            let err = Lock::parse("seams.lock", &crafted).unwrap_err().to_string();
            assert!(err.contains("out/b.html"), "{bad}: {err}");
        }
        // A range is checked before it is expanded: one past the table
        // fails without holding four billion indexes.
        let crafted = text.replacen("\"sources\": \"1\"", "\"sources\": \"0-4294967295\"", 1);
        let err = Lock::parse("seams.lock", &crafted).unwrap_err().to_string();
        assert!(err.contains("past the table's 2 IRIs"), "{err}");
    }

    #[test]
    fn sources_that_do_not_index_the_table_are_refused_naming_the_output() {
        let text = lock().to_text();
        for (bad, says) in [
            ("\"sources\": \"1\"", "\"sources\": \"2\""),
            ("\"sources\": \"1\"", "\"sources\": \"1 0\""),
            ("\"sources\": \"1\"", "\"sources\": \"1 1\""),
            ("\"sources\": \"1\"", "\"sources\": \"-1\""),
            ("\"sources\": \"1\"", "\"sources\": \"\\u001b[2J\""),
            ("\"sources\": \"1\"", "\"sources\": [\"urn:b\"]"),
            ("\"urn:a\",\n    \"urn:b\"", "\"urn:b\",\n    \"urn:a\""),
        ] {
            let crafted = text.replacen(bad, says, 1);
            assert_ne!(crafted, text);
            let err = Lock::parse("seams.lock", &crafted).unwrap_err();
            assert!(matches!(err, LockError::Invalid { .. }), "{says}: {err:?}");
            let err = err.to_string();
            assert!(
                err.contains("out/b.html") || err.contains("not sorted"),
                "{says}: {err}"
            );
            assert!(!err.contains('\u{1b}'), "{err:?}");
        }
    }

    #[test]
    fn a_format_4_lock_lists_iris_per_output_and_reads_as_a_table() {
        let v4 = r#"{"lock_version": 4, "seams_version": "0.1.0", "model_hash": "ab", "manifest_sha256": "ef", "incomplete": false, "generators": [], "outputs": [
            {"path": "out/a.html", "sha256": "1", "generator": "g", "generator_version": "1", "component_sha256": "c", "sources": ["urn:z", "urn:a"]},
            {"path": "out/b.html", "sha256": "2", "generator": "g", "generator_version": "1", "component_sha256": "c", "sources": ["urn:m"]}
        ]}"#;
        let lock = Lock::parse("seams.lock", v4).unwrap();
        assert_eq!(lock.sources, ["urn:a", "urn:m", "urn:z"]);
        assert_eq!(*lock.outputs[0].sources, [0, 2]);
        assert_eq!(*lock.outputs[1].sources, [1]);
        assert_eq!(
            lock.lock_version, 4,
            "kept, so the next generate rewrites it"
        );
        let indexed = v4.replace("[\"urn:m\"]", "\"0\"");
        let err = Lock::parse("seams.lock", &indexed).unwrap_err().to_string();
        assert!(err.contains("not in the form of lock_version 4"), "{err}");
    }

    #[test]
    fn a_format_2_lock_is_read_without_model_files() {
        let v2 = "{\"lock_version\": 2, \"seams_version\": \"0.1.0\", \"model_hash\": \"ab\", \"manifest_sha256\": \"ef\", \"incomplete\": false, \"generators\": [], \"outputs\": []}";
        let lock = Lock::parse("seams.lock", v2).unwrap();
        assert_eq!((lock.lock_version, lock.model_files.len()), (2, 0));
    }
}
