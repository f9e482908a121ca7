//! The languages a generator package is written in, and how a package
//! says which: by its manifest.

use std::path::Path;

/// A generator package's language (`--language`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Language {
    /// A Rust crate, built by cargo for wasm32-wasip2 (`Cargo.toml`).
    #[default]
    Rust,
    /// A Python package, made a component by componentize-py
    /// (`pyproject.toml`).
    Python,
    /// A JavaScript package, made a component by componentize-js
    /// (`package.json`).
    Js,
    /// A TypeScript package: a JavaScript package with a `tsconfig.json`,
    /// compiled and type-checked against the SDK's declarations by the
    /// TypeScript that seams's componentize-js install pins, then made a
    /// component as JavaScript is.
    Ts,
}

impl Language {
    /// Every language, in the order the docs list them.
    pub const ALL: [Language; 4] = [Language::Rust, Language::Python, Language::Js, Language::Ts];

    /// The languages `draft-generator` drafts in: a draft's extract step is
    /// checked, before it builds, by rules written for their syntax.
    pub const DRAFTED: [Language; 3] = [Language::Rust, Language::Python, Language::Js];

    /// The name `--language` takes.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::Js => "js",
            Language::Ts => "ts",
        }
    }

    /// The manifest that makes a directory a package of this language.
    pub fn manifest(self) -> &'static str {
        match self {
            Language::Rust => "Cargo.toml",
            Language::Python => "pyproject.toml",
            Language::Js | Language::Ts => "package.json",
        }
    }

    /// The language `name` (`--language`) names.
    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Where a package of this language keeps its copy of the SDK.
    pub(crate) fn sdk_dir(self) -> &'static str {
        match self {
            Language::Rust | Language::Js | Language::Ts => "seams-sdk",
            Language::Python => "seams_sdk",
        }
    }

    /// The SDK's files, by their path in a package that vendors it.
    pub(crate) fn sdk_files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Language::Rust => RUST_SDK,
            Language::Python => PYTHON_SDK,
            Language::Js | Language::Ts => JS_SDK,
        }
    }

    /// The languages whose manifest `dir` holds: a `package.json` is
    /// TypeScript's beside a `tsconfig.json`, else JavaScript's.
    pub(crate) fn of_package(dir: &Path) -> Vec<Language> {
        let typed = dir.join(TSCONFIG).is_file();
        Language::ALL
            .into_iter()
            .filter(|l| match l {
                Language::Js => !typed,
                Language::Ts => typed,
                _ => true,
            })
            .filter(|l| dir.join(l.manifest()).is_file())
            .collect()
    }
}

/// What makes a `package.json` package TypeScript.
pub(crate) const TSCONFIG: &str = "tsconfig.json";

/// The SDK a package builds against, vendored into it so that it builds
/// anywhere, with no path to this machine.
const RUST_SDK: &[(&str, &str)] = &[
    (
        "seams-sdk/src/lib.rs",
        include_str!("../../../sdk/src/lib.rs"),
    ),
    (
        "seams-sdk/src/decode.rs",
        include_str!("../../../sdk/src/decode.rs"),
    ),
    (
        "seams-sdk/src/error.rs",
        include_str!("../../../sdk/src/error.rs"),
    ),
    (
        "seams-sdk/src/files.rs",
        include_str!("../../../sdk/src/files.rs"),
    ),
    (
        "seams-sdk/src/meta.rs",
        include_str!("../../../sdk/src/meta.rs"),
    ),
    (
        "seams-sdk/src/model.rs",
        include_str!("../../../sdk/src/model.rs"),
    ),
    (
        "seams-sdk/src/row.rs",
        include_str!("../../../sdk/src/row.rs"),
    ),
    (
        "seams-sdk/src/view.rs",
        include_str!("../../../sdk/src/view.rs"),
    ),
    (
        "seams-sdk/wit/since_v0.2.0/generator.wit",
        include_str!("../../../sdk/wit/since_v0.2.0/generator.wit"),
    ),
];

/// The Python SDK, as a package vendors it.
const PYTHON_SDK: &[(&str, &str)] = &[
    (
        "seams_sdk/__init__.py",
        include_str!("../../../sdk/python/seams_sdk/__init__.py"),
    ),
    (
        "seams_sdk/_component.py",
        include_str!("../../../sdk/python/seams_sdk/_component.py"),
    ),
    (
        "seams_sdk/py.typed",
        include_str!("../../../sdk/python/seams_sdk/py.typed"),
    ),
];

/// The JavaScript SDK, as a package vendors it.
const JS_SDK: &[(&str, &str)] = &[
    (
        "seams-sdk/package.json",
        include_str!("../../../sdk/js/package.json"),
    ),
    (
        "seams-sdk/index.js",
        include_str!("../../../sdk/js/index.js"),
    ),
    (
        "seams-sdk/index.d.ts",
        include_str!("../../../sdk/js/index.d.ts"),
    ),
    (
        "seams-sdk/component.js",
        include_str!("../../../sdk/js/component.js"),
    ),
];

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_the_language_of_its_manifests() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Language::of_package(dir.path()), vec![]);
        std::fs::write(dir.path().join("package.json"), "{}").unwrap();
        assert_eq!(Language::of_package(dir.path()), vec![Language::Js]);
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(
            Language::of_package(dir.path()),
            vec![Language::Rust, Language::Js]
        );
        std::fs::write(dir.path().join("tsconfig.json"), "{}").unwrap();
        assert_eq!(
            Language::of_package(dir.path()),
            vec![Language::Rust, Language::Ts]
        );
        for language in Language::ALL {
            assert_eq!(Language::from_name(language.name()), Some(language));
        }
        assert_eq!(Language::from_name("typescript"), None);
    }
}
