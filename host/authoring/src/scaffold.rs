//! `seams new-generator NAME --reference FILE`: a generator package whose
//! test passes as written. The template is the reference verbatim (bracket
//! delimiters, so `{{` in it stays text), every golden line is `[fixed]`,
//! and the extract step returns only the model hash.
//!
//! A reference that holds `[[`, `[%` or `[#` is refused rather than
//! escaped: escaping would make the template differ from the reference, and
//! the author's loop starts from a template that *is* the reference.

use std::path::{Path, PathBuf};

use crate::golden::Golden;
use crate::language::Language;
use crate::output_syntax::language_of;

const SDK_MANIFEST: &str = r#"[package]
name = "seams-sdk"
version = "0.1.0"
edition = "2024"
publish = false
description = "Write seams generators (vendored by seams new-generator)"

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = { version = "1", features = ["raw_value"] }
wit-bindgen = "0.63"
"#;

/// The versions seams is built and tested with: the package starts on them.
const LOCKFILE: &str = include_str!("../../../Cargo.lock");

/// The toolchain seams is built with, and the target a component needs.
const TOOLCHAIN: &str = include_str!("../../../rust-toolchain.toml");

const LIB_TEMPLATE: &str = include_str!("scaffold/rust/lib.rs.tmpl");
const PY_GENERATOR: &str = include_str!("scaffold/python/generator.py.tmpl");
const PY_EXTRACT: &str = include_str!("scaffold/python/extract.py.tmpl");
const PY_MANIFEST: &str = include_str!("scaffold/python/pyproject.toml.tmpl");
const PY_README: &str = include_str!("scaffold/python/README.md.tmpl");
const JS_GENERATOR: &str = include_str!("scaffold/js/generator.js.tmpl");
const JS_EXTRACT: &str = include_str!("scaffold/js/extract.js.tmpl");
const JS_MANIFEST: &str = include_str!("scaffold/js/package.json.tmpl");
const JS_README: &str = include_str!("scaffold/js/README.md.tmpl");
const TS_GENERATOR: &str = include_str!("scaffold/ts/generator.ts.tmpl");
const TS_EXTRACT: &str = include_str!("scaffold/ts/extract.ts.tmpl");
const TS_MANIFEST: &str = include_str!("scaffold/ts/package.json.tmpl");
const TS_CONFIG: &str = include_str!("scaffold/ts/tsconfig.json.tmpl");
const TS_README: &str = include_str!("scaffold/ts/README.md.tmpl");
const EXTRACT_TEMPLATE: &str = include_str!("scaffold/rust/extract.rs.tmpl");
const MANIFEST_TEMPLATE: &str = include_str!("scaffold/rust/Cargo.toml.tmpl");
const README_TEMPLATE: &str = include_str!("scaffold/rust/README.md.tmpl");

/// Why a package cannot be scaffolded. Nothing is written when it fails.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name breaks the rule.
    #[error(
        "generator name {0:?} is invalid: use {rule}",
        rule = seams_runtime::GENERATOR_NAME_RULE
    )]
    BadName(String),
    /// The reference cannot become a passing test.
    #[error("reference {}: {why}", path.display())]
    Reference {
        /// The reference file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// `--sdk registry` asked of a language whose SDK is not published.
    #[error("--sdk registry is for Rust packages; a {0} package vendors its SDK (leave --sdk out)")]
    RegistrySdk(Language),
    /// The package directory is in use.
    #[error("{} exists and is not empty; choose another --out DIR, or pass --force to replace the package's files in it", dir.display())]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Checks a generator name.
///
/// # Errors
///
/// [`ScaffoldError::BadName`].
pub fn check_name(name: &str) -> Result<(), ScaffoldError> {
    if seams_runtime::is_generator_name(name) {
        Ok(())
    } else {
        Err(ScaffoldError::BadName(name.to_owned()))
    }
}

/// A reference output, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// Its file name: the output's and the template's name.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// Reads a reference and refuses one the scaffold could not make a passing
/// test from: not UTF-8, empty or blank, text that does not parse as its
/// suffix says (when a parser knows the suffix; plain text of any other
/// kind is taken, and the "output parses" test says it does not apply), or
/// text holding the bracket delimiters or the tracing sentinels.
///
/// # Errors
///
/// [`ScaffoldError::Reference`] saying why, or [`ScaffoldError::Io`].
pub fn read_reference(path: &Path) -> Result<Reference, ScaffoldError> {
    let refuse = |why: String| ScaffoldError::Reference {
        path: path.to_owned(),
        why,
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| refuse("has no file name".into()))?
        .to_owned();
    let bytes = std::fs::read(path).map_err(|source| ScaffoldError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        refuse(format!(
            "is not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    if text.trim().is_empty() {
        return Err(refuse(
            "is empty or blank; there is nothing to generate".into(),
        ));
    }
    for (number, line) in text.split('\n').enumerate() {
        for delimiter in ["[[", "[%", "[#", "\u{F8F0}", "\u{F8F1}"] {
            if let Some(column) = line.find(delimiter) {
                return Err(refuse(format!(
                    "line {}, column {}: holds {delimiter:?}, which the template would read as a tag (templates use [[ ]], [% %] and [# #]); change the reference there, or write this generator by hand",
                    number + 1,
                    line[..column].chars().count() + 1
                )));
            }
        }
    }
    if let Err(problem) = crate::output_syntax::check(&name, &text) {
        return Err(refuse(format!("does not parse itself: {problem}")));
    }
    Ok(Reference { name, text })
}

/// The files of a package, relative to its directory, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// (relative path, content).
    pub files: Vec<(String, String)>,
}

/// Where a package gets the SDK from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sdk {
    /// A copy in the package (`seams-sdk/`): builds offline, with nothing
    /// but the package. The default while `seams-sdk` is not on crates.io.
    #[default]
    Vendored,
    /// `seams-sdk` by version from crates.io, the copy `cargo package`
    /// makes of this SDK.
    Registry,
}

/// The SDK version a package depends on: the workspace's, which the SDK
/// shares (`version.workspace = true`).
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The package's file that holds the extract step, which a draft writes.
pub(crate) fn extract_path(language: Language) -> &'static str {
    match language {
        Language::Rust => "src/extract.rs",
        Language::Python => "extract.py",
        Language::Js => "extract.js",
        Language::Ts => "extract.ts",
    }
}

/// The package for `name` and `reference` in `language`. `extract`
/// replaces the scaffold's extract step (drafting uses it); `None` gives
/// the default. `sdk` matters to Rust packages only: Python and JavaScript
/// packages vendor their SDK.
pub fn scaffold(
    name: &str,
    reference: &Reference,
    extract: Option<&str>,
    sdk: Sdk,
    language: Language,
) -> Package {
    let krate = name.replace('-', "_");
    let parses = match language_of(&reference.name) {
        Some(language) => format!("checks that `{}` parses as {language}", reference.name),
        None => format!(
            "does not apply to `{}`: seams has no parser for its kind of file",
            reference.name
        ),
    };
    let (dependency, sdk_note) = match sdk {
        Sdk::Vendored => (
            r#"{ path = "seams-sdk" }"#.to_owned(),
            "`seams-sdk/`: the SDK this package builds against, vendored so that it\n  builds offline; `seams new-generator --sdk registry` depends on the\n  published version instead.",
        ),
        Sdk::Registry => (
            format!("\"{SDK_VERSION}\""),
            "The SDK is `seams-sdk` from crates.io, by version (`Cargo.toml`).",
        ),
    };
    let fill = |t: &str| {
        t.replace("{{NAME}}", name)
            .replace("{{SDK_DEPENDENCY}}", &dependency)
            .replace("{{SDK_NOTE}}", sdk_note)
            .replace("{{OUTPUT}}", &reference.name)
            .replace("{{CRATE}}", &krate)
            .replace("{{PARSES}}", &parses)
            .replace("{{COMPONENTIZE_PY}}", crate::toolchain::COMPONENTIZE_PY)
            .replace("{{COMPONENTIZE_JS}}", crate::toolchain::COMPONENTIZE_JS)
    };
    let (manifest, readme, entry, default_extract) = match language {
        Language::Rust => (
            MANIFEST_TEMPLATE,
            README_TEMPLATE,
            ("src/lib.rs", LIB_TEMPLATE),
            EXTRACT_TEMPLATE,
        ),
        Language::Python => (
            PY_MANIFEST,
            PY_README,
            ("generator.py", PY_GENERATOR),
            PY_EXTRACT,
        ),
        Language::Js => (
            JS_MANIFEST,
            JS_README,
            ("generator.js", JS_GENERATOR),
            JS_EXTRACT,
        ),
        Language::Ts => (
            TS_MANIFEST,
            TS_README,
            ("generator.ts", TS_GENERATOR),
            TS_EXTRACT,
        ),
    };
    let mut files = vec![
        (language.manifest().to_owned(), fill(manifest)),
        ("README.md".to_owned(), fill(readme)),
        (entry.0.to_owned(), fill(entry.1)),
        (
            extract_path(language).to_owned(),
            extract.map_or_else(|| default_extract.to_owned(), str::to_owned),
        ),
        (
            format!("templates/{}", reference.name),
            reference.text.clone(),
        ),
        (
            format!("tests/golden/{}", reference.name),
            Golden::all_fixed(&reference.text),
        ),
    ];
    if language == Language::Rust {
        files.push(("Cargo.lock".to_owned(), LOCKFILE.to_owned()));
        // The toolchain and the wasm32-wasip2 target, installed by rustup
        // on the first cargo command in the package.
        files.push(("rust-toolchain.toml".to_owned(), TOOLCHAIN.to_owned()));
        if sdk == Sdk::Vendored {
            files.push(("seams-sdk/Cargo.toml".to_owned(), SDK_MANIFEST.to_owned()));
        }
    }
    if language == Language::Ts {
        files.push((crate::language::TSCONFIG.to_owned(), TS_CONFIG.to_owned()));
    }
    if language != Language::Rust || sdk == Sdk::Vendored {
        for (path, text) in language.sdk_files() {
            files.push(((*path).to_owned(), (*text).to_owned()));
        }
    }
    Package { files }
}

/// Writes `package` into `dir`, which must not exist or be empty unless
/// `force` (then the package's files replace files of the same path).
/// Returns the written paths.
///
/// # Errors
///
/// A non-empty `dir` without `force`, or an I/O error.
pub fn write_package(
    package: &Package,
    dir: &Path,
    force: bool,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    check_dir(dir, force)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ScaffoldError::Io { path, source }
    };
    let out = seams_core::OutputDir::open(dir).map_err(io(dir))?;
    let mut written = Vec::new();
    for (rel, text) in &package.files {
        let path = dir.join(rel);
        out.write(rel, text.as_bytes()).map_err(io(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// A package directory must not exist or be empty, unless `force`.
///
/// # Errors
///
/// [`ScaffoldError::NotEmpty`], or an I/O error reading it.
pub fn check_dir(dir: &Path, force: bool) -> Result<(), ScaffoldError> {
    if dir.exists() && !force {
        let mut entries = std::fs::read_dir(dir).map_err(|source| ScaffoldError::Io {
            path: dir.to_owned(),
            source,
        })?;
        if entries.next().is_some() {
            return Err(ScaffoldError::NotEmpty {
                dir: dir.to_owned(),
            });
        }
    }
    Ok(())
}

/// `seams new-generator`: checks everything, then writes the package.
///
/// # Errors
///
/// A bad name, a refused reference, a non-empty directory, or an I/O
/// error; nothing is written then.
pub fn new_generator(
    name: &str,
    reference: &Path,
    out: Option<&Path>,
    force: bool,
    sdk: Sdk,
    language: Language,
) -> Result<(PathBuf, Vec<PathBuf>), ScaffoldError> {
    check_name(name)?;
    if sdk == Sdk::Registry && language != Language::Rust {
        return Err(ScaffoldError::RegistrySdk(language));
    }
    let reference = read_reference(reference)?;
    let dir = out.map_or_else(|| PathBuf::from(format!("seams-{name}")), Path::to_path_buf);
    let written = write_package(
        &scaffold(name, &reference, None, sdk, language),
        &dir,
        force,
    )?;
    Ok((dir, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module of the SDK a generator builds with is vendored: the
    /// host-only `native` module (compiled out for wasm) is the one left out.
    #[test]
    fn every_sdk_source_file_is_vendored() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk/src");
        let mut on_disk: Vec<String> = std::fs::read_dir(&src)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".rs") && name != "native.rs")
            .map(|name| format!("seams-sdk/src/{name}"))
            .collect();
        on_disk.sort();
        let mut vendored: Vec<String> = Language::Rust
            .sdk_files()
            .iter()
            .map(|(path, _)| (*path).to_owned())
            .filter(|path| path.starts_with("seams-sdk/src/"))
            .collect();
        vendored.sort();
        assert_eq!(vendored, on_disk);
    }

    #[test]
    fn names_follow_the_rule() {
        for good in ["a", "pages", "my-pages-2", &"a".repeat(40)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "A", "1a", "-a", "a_b", "a.b", &"a".repeat(41)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_vendored_sdk_asks_for_the_features_the_sdk_does() {
        // The SDK's manifest inherits from the workspace; the vendored one
        // spells each dependency out, and must not lose a feature.
        let table = |text: &str| text.parse::<toml::Table>().unwrap();
        let workspace = table(include_str!("../../../Cargo.toml"));
        let sdk = table(include_str!("../../../sdk/Cargo.toml"));
        let vendored = table(SDK_MANIFEST);
        let features = |dep: &toml::Value| -> Vec<String> {
            dep.get("features")
                .and_then(toml::Value::as_array)
                .map(|f| {
                    f.iter()
                        .filter_map(|f| f.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let deps = sdk["dependencies"].as_table().unwrap();
        assert!(!deps.is_empty());
        for (name, dep) in deps {
            let mut wanted = features(dep);
            if dep.get("workspace").is_some() {
                wanted.extend(features(&workspace["workspace"]["dependencies"][name]));
            }
            let have = features(&vendored["dependencies"][name]);
            for feature in wanted {
                assert!(have.contains(&feature), "{name} lacks {feature}");
            }
        }
    }

    fn reference(name: &str, bytes: &[u8]) -> Result<Reference, ScaffoldError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        read_reference(&path)
    }

    #[test]
    fn references_that_cannot_pass_are_refused_with_the_reason() {
        let why = |r: Result<Reference, ScaffoldError>| r.unwrap_err().to_string();
        assert!(why(reference("a.html", b"\xff\xfe")).contains("not UTF-8"));
        assert!(why(reference("a.html", b"  \n\n")).contains("empty or blank"));
        assert!(why(reference("a.xml", b"<a>\n<b>\n</a>\n")).contains("does not parse itself"));
        assert!(
            why(reference("a.py", b"x = 1\ny = a[[0]]\n"))
                .contains("line 2, column 6: holds \"[[\"")
        );
        assert!(why(reference("a.json", b"{\"a\": [1,}\n")).contains("does not parse itself"));
        assert!(
            reference("a.html", b"<p>{{ vue }}</p>\n").is_ok(),
            "Jinja braces are fine"
        );
        // Plain text no parser knows is taken as it is.
        for plain in ["notes.md", "schema.sql", "LICENSE"] {
            assert!(reference(plain, b"any { text\n").is_ok(), "{plain}");
        }
    }

    #[test]
    fn a_registry_package_depends_on_the_sdk_by_version_and_vendors_nothing() {
        let r = Reference {
            name: "a.json".into(),
            text: "{}\n".into(),
        };
        let text = |package: &Package, path: &str| {
            package
                .files
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, t)| t.clone())
        };
        let vendored = scaffold("a", &r, None, Sdk::Vendored, Language::Rust);
        let registry = scaffold("a", &r, None, Sdk::Registry, Language::Rust);
        let manifest = |p: &Package| text(p, "Cargo.toml").unwrap();
        assert!(manifest(&vendored).contains("seams-sdk = { path = \"seams-sdk\" }\n"));
        assert!(manifest(&registry).contains(&format!("seams-sdk = \"{SDK_VERSION}\"\n")));
        assert!(text(&vendored, "seams-sdk/src/lib.rs").is_some());
        assert!(
            registry
                .files
                .iter()
                .all(|(path, _)| !path.starts_with("seams-sdk/"))
        );
        assert!(
            text(&registry, "README.md")
                .unwrap()
                .contains("from crates.io")
        );
    }

    #[test]
    fn a_package_is_written_only_into_an_empty_or_new_directory() {
        let dir = tempfile::tempdir().unwrap();
        let r = Reference {
            name: "a.json".into(),
            text: "{}\n".into(),
        };
        let package = scaffold("a", &r, None, Sdk::Vendored, Language::Rust);
        std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
        assert!(matches!(
            write_package(&package, dir.path(), false),
            Err(ScaffoldError::NotEmpty { .. })
        ));
        assert!(!dir.path().join("Cargo.toml").exists());
        write_package(&package, dir.path(), true).unwrap();
        assert!(dir.path().join("Cargo.toml").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }
}
