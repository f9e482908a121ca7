//! Python and JavaScript packages: a copy of the package, with the SDK
//! when it does not vendor one, made a component by componentize-py or
//! componentize-js (provisioned by [`crate::toolchain`]) against the
//! protocol's WIT.
//!
//! The copy is what the tool sees: it holds the package's regular files
//! only (a symbolic link is refused, so that no file from elsewhere ends
//! up in a component), and the files the build adds (the JavaScript entry
//! module and the templates it bundles) never touch the package.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::kept::{Kept, PACKAGE_CAP, SKIPPED, inputs_digest};
use super::{BuildEnv, BuildError, Built, Manifest, build_environment, finished, run_bounded};
use crate::child::Counted;
use crate::jail::{Jail, Reach};
use crate::language::Language;
use crate::toolchain::Tool;
use seams_core::Progress;

/// The protocol the SDKs build against.
const WIT: &str = include_str!("../../../../sdk/wit/since_v0.2.0/generator.wit");

/// The JavaScript module the build adds: it registers the bundled
/// templates before the generator's module runs, then exports the
/// generator the way componentize-js looks for it.
const JS_ENTRY: &str = "seams-entry.js";
const JS_TEMPLATES: &str = "seams-templates.js";

/// Builds the `language` package `name` in `dir` in `target`.
pub(super) fn build(
    dir: &Path,
    language: Language,
    manifest: &Manifest,
    name: &str,
    target: &Path,
    env: BuildEnv,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let tool = match language {
        Language::Python => Tool::ComponentizePy,
        _ => Tool::ComponentizeJs,
    };
    let failed = |output: String| BuildError::Failed {
        dir: dir.to_owned(),
        output,
    };
    // Said only when it happens: once per build directory.
    let installing = !tool.is_ready(target);
    if installing {
        progress.start(&format!("installing {}", tool.label()), None);
    }
    let program = tool.provision(target);
    if installing {
        progress.finish();
    }
    let program = program?;
    let packages = target.join("packages");
    let stage = packages.join(language.name()).join(name);
    stage_package(dir, &stage).map_err(|e| match e {
        Staging::Refused(message) => BuildError::Package {
            path: dir.to_owned(),
            message,
        },
        Staging::Io(e) => failed(format!(
            "cannot copy the package to {}: {e}",
            stage.display()
        )),
    })?;
    let wit = packages.join("wit");
    let io = |e: std::io::Error| failed(format!("cannot write the build's files: {e}"));
    std::fs::create_dir_all(&wit).map_err(io)?;
    std::fs::write(wit.join("generator.wit"), WIT).map_err(io)?;
    // A package's own copy of the SDK is the one it builds with; else
    // this seams's.
    if !stage.join(language.sdk_dir()).exists() {
        for (path, text) in language.sdk_files() {
            let file = stage.join(path);
            std::fs::create_dir_all(file.parent().unwrap_or(&stage)).map_err(io)?;
            std::fs::write(&file, text).map_err(io)?;
        }
    }
    // What the tool is given: the module to build, and for JavaScript the
    // entry module and the bundled templates, added to the copy.
    let module = match language {
        Language::Python => python_module(dir, manifest)?,
        _ => {
            // tsc writes each module's JavaScript beside it in the copy.
            let main = match language {
                Language::Ts => {
                    let main = ts_main(dir, manifest)?;
                    format!("{}.js", main.strip_suffix(".ts").unwrap_or(&main))
                }
                _ => js_main(dir, manifest)?,
            };
            std::fs::write(stage.join(JS_TEMPLATES), js_templates(&stage)?).map_err(io)?;
            std::fs::write(stage.join(JS_ENTRY), js_entry(&main)).map_err(io)?;
            JS_ENTRY.to_owned()
        }
    };
    let built = packages.join(language.name());
    let kept = Kept::at(&built, name);
    let component = kept.component.clone();
    let inputs =
        inputs_digest(&stage, &[&tool.label(), language.name(), &module, WIT], &[]).map_err(io)?;
    if let Some(built) = kept.get(&inputs) {
        return Ok(built);
    }
    kept.forget();
    // componentize-py hands its build-time interpreter, read-write, the
    // `site-packages` of `$VIRTUAL_ENV`, else of whatever `python3` it
    // finds (and the user's own): a module run at build time could drop a
    // `.pth` there that every later start of that Python runs. An empty
    // environment of the build's own, removed after it, is all it gets.
    // The tools (tsc, then componentize), and the module they run, see the
    // system, the toolchain and the copy, and write only the packages'
    // directory and a temporary directory of their own, with no network.
    let tmp = tempfile::Builder::new()
        .prefix("tmp-")
        .tempdir_in(&built)
        .map_err(io)?;
    let mut read = vec![target.join("toolchains"), wit.clone()];
    read.extend(interpreters(&program));
    // wizer (inside componentize-js) keeps wasmtime's compiled code under
    // the home the password database names, whatever the environment
    // says: the build gets its own there, not the user's.
    let cache = tmp.path().join("wasmtime-cache");
    std::fs::create_dir_all(&cache).map_err(io)?;
    let cover = match (language, passwd_home()) {
        (Language::Js | Language::Ts, Some(home)) => {
            vec![(home.join(".cache").join("wasmtime"), cache)]
        }
        _ => Vec::new(),
    };
    let reach = Reach {
        read,
        write: vec![built.clone()],
        cover,
    };
    let confined = |program: &Path| -> Result<Command, BuildError> {
        let mut command = Command::new(program);
        command
            .current_dir(&stage)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        build_environment(&mut command, env);
        // A home and caches of the build's own: what one build leaves
        // there (wizer's compiled code, say) never reaches another's.
        for var in ["TMPDIR", "HOME", "XDG_CACHE_HOME"] {
            command.env(var, tmp.path());
        }
        Jail::new(&reach)?.confine(&mut command);
        Ok(command)
    };
    // The tools embed WebAssembly engines, which reserve far more address
    // space than they use: their bound counts what they write.
    let bounds = env.bounds().counting(Counted::Writable);
    // What a tool printed, with the package's paths for the copy's.
    let run = |command: Command, what: &str| -> Result<(), BuildError> {
        progress.start(&format!("{what} {name}"), None);
        let mut printed = String::new();
        let result = run_bounded(command, bounds, |line| {
            if printed.len() < 64 << 10 {
                printed.push_str(line);
                printed.push('\n');
            }
        });
        progress.finish();
        let (ended, stderr) = result.map_err(|e| failed(format!("cannot run the {what}: {e}")))?;
        let stage_text = stage.display().to_string();
        let output = format!("{printed}{stderr}").replace(&stage_text, &dir.display().to_string());
        finished(dir, env, ended, output)
    };
    if language == Language::Ts {
        let main = ts_main(dir, manifest)?;
        let mut tsc = confined(&Tool::ComponentizeJs.typescript(target))?;
        tsc.args(TSC_FLAGS).arg(&main);
        run(tsc, "type-checking and compiling")?;
    }
    let mut command = confined(&program)?;
    match language {
        Language::Python => {
            command
                .arg("-d")
                .arg(&wit)
                .args(["-w", "generator", "componentize", &module, "-p"])
                .arg(&stage)
                .arg("-o")
                .arg(&component);
        }
        _ => {
            command
                .arg(&module)
                .arg("--wit")
                .arg(wit.join("generator.wit"))
                .args(["--world-name", "generator"])
                // No network: a fetch would only trap, and the SDK says so.
                .args(["-d", "http", "fetch-event"])
                .arg("-o")
                .arg(&component);
        }
    }
    let _no_site = match language {
        Language::Python => {
            let empty = tempfile::Builder::new()
                .prefix("no-site-")
                .tempdir_in(&built)
                .map_err(io)?;
            std::fs::create_dir_all(empty.path().join("lib").join("site-packages")).map_err(io)?;
            command.env("VIRTUAL_ENV", empty.path());
            Some(empty)
        }
        _ => None,
    };
    run(command, "building")?;
    let bytes = std::fs::read(&component).map_err(|e| {
        failed(format!(
            "the build gave no component at {}: {e}",
            component.display()
        ))
    })?;
    kept.record(&inputs).map_err(io)?;
    Ok(Built {
        path: component,
        bytes,
    })
}

/// This user's home as the password database says (what a program finds
/// with an empty environment).
fn passwd_home() -> Option<PathBuf> {
    let mut buffer = vec![0 as libc::c_char; 16 << 10];
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffer and the entry outlive the call, which writes the
    // entry's strings into the buffer.
    let status = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() || entry.pw_dir.is_null() {
        return None;
    }
    // SAFETY: `pw_dir` points into `buffer`, NUL-terminated.
    let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())))
}

/// What the tool at `program` runs on besides itself, for the sandbox to
/// let it read: the Python a virtual environment was made from (its
/// `pyvenv.cfg`'s `home`), and the Node.js on `PATH` (`#!/usr/bin/env
/// node`), each as the installation prefix its program is in.
fn interpreters(program: &Path) -> Vec<PathBuf> {
    let prefix = |bin: &Path| {
        let bin = std::fs::canonicalize(bin).ok()?;
        Some(bin.parent()?.parent()?.to_owned())
    };
    let mut found = Vec::new();
    let venv = program.parent().and_then(Path::parent);
    if let Some(config) = venv.and_then(|v| std::fs::read_to_string(v.join("pyvenv.cfg")).ok()) {
        let home = config.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "home").then(|| PathBuf::from(value.trim()))
        });
        if let Some(home) = home {
            found.extend(prefix(&home.join("python3")));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        found.extend(
            std::env::split_paths(&path)
                .map(|dir| dir.join("node"))
                .find(|node| node.is_file())
                .and_then(|node| prefix(&node)),
        );
    }
    found
}

/// Why a package could not be copied.
enum Staging {
    /// The package holds what a build must not take.
    Refused(String),
    /// The copy failed.
    Io(std::io::Error),
}

impl From<std::io::Error> for Staging {
    fn from(e: std::io::Error) -> Staging {
        Staging::Io(e)
    }
}

/// Copies the regular files of the package in `dir` to `stage`, which is
/// emptied first; hidden entries and [`SKIPPED`] directories stay out.
fn stage_package(dir: &Path, stage: &Path) -> Result<(), Staging> {
    if stage.exists() {
        std::fs::remove_dir_all(stage)?;
    }
    std::fs::create_dir_all(stage)?;
    let mut total = 0u64;
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(&rel))?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let name = entry.file_name();
            let shown = name.to_string_lossy();
            if shown.starts_with('.') || (entry.path().is_dir() && SKIPPED.contains(&&*shown)) {
                continue;
            }
            let path = rel.join(&name);
            let kind = entry.file_type()?;
            if kind.is_symlink() {
                return Err(Staging::Refused(format!(
                    "{} is a symbolic link; a package's files must be its own (copy the file in)",
                    path.display()
                )));
            }
            if kind.is_dir() {
                std::fs::create_dir_all(stage.join(&path))?;
                todo.push(path);
            } else if kind.is_file() {
                total += entry.metadata()?.len();
                if total > PACKAGE_CAP {
                    return Err(Staging::Refused(format!(
                        "holds more than {} MiB of files; a generator package is source and templates",
                        PACKAGE_CAP >> 20
                    )));
                }
                std::fs::copy(entry.path(), stage.join(&path))?;
            }
        }
    }
    Ok(())
}

/// The module componentize-py builds: `[tool.seams] module` in
/// `pyproject.toml`, else `generator`.
fn python_module(dir: &Path, manifest: &Manifest) -> Result<String, BuildError> {
    let fail = |message: String| manifest.refuse(message);
    let module = manifest
        .text("/tool/seams/module")
        .unwrap_or("generator")
        .to_owned();
    let identifier = module.split('.').all(|part| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    if !identifier {
        return Err(fail(format!(
            "[tool.seams] module {module:?} is not a Python module name"
        )));
    }
    let file = dir.join(format!("{}.py", module.replace('.', "/")));
    let package = dir.join(module.replace('.', "/")).join("__init__.py");
    if !file.is_file() && !package.is_file() {
        return Err(fail(format!(
            "its generator module {module:?} is not in the package: write {} (or name another in [tool.seams] module)",
            file.strip_prefix(dir).unwrap_or(&file).display()
        )));
    }
    Ok(module)
}

/// The generator module `"main"` in `package.json` names (else
/// `generator.js`): a `.js` or `.mjs` path inside the package.
fn js_main(dir: &Path, manifest: &Manifest) -> Result<String, BuildError> {
    main_module(
        dir,
        manifest,
        "generator.js",
        &[".js", ".mjs"],
        "a .js module",
    )
}

/// The generator module of a TypeScript package, as [`js_main`]: a `.ts`
/// path (not a declaration file), by default `generator.ts`.
fn ts_main(dir: &Path, manifest: &Manifest) -> Result<String, BuildError> {
    let main = main_module(dir, manifest, "generator.ts", &[".ts"], "a .ts module")?;
    if main.ends_with(".d.ts") {
        return Err(manifest.refuse(format!(
            "\"main\" {main:?} is a declaration file; name the generator's .ts module"
        )));
    }
    Ok(main)
}

/// `"main"` in `package.json`, else `default`: a path inside the package
/// (no `..`, no hidden part) ending in one of `suffixes`, to a file that
/// is there.
fn main_module(
    dir: &Path,
    manifest: &Manifest,
    default: &str,
    suffixes: &[&str],
    shown: &str,
) -> Result<String, BuildError> {
    let fail = |message: String| manifest.refuse(message);
    let main = manifest.text("/main").unwrap_or(default);
    let main = main.strip_prefix("./").unwrap_or(main);
    let inside = !main.is_empty()
        && !main.starts_with('/')
        && main
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != "." && !part.starts_with('.'));
    if !inside || !suffixes.iter().any(|suffix| main.ends_with(suffix)) {
        return Err(fail(format!(
            "\"main\" {main:?} must name {shown} inside the package"
        )));
    }
    if !dir.join(main).is_file() {
        return Err(fail(format!(
            "its generator module {main:?} is not in the package: write it (or name another in \"main\")"
        )));
    }
    Ok(main.to_owned())
}

/// How a TypeScript package is compiled: strict, against the SDK's
/// declarations, as ES modules resolved the way Node.js resolves them
/// (imports name `./extract.js` for `extract.ts`), each module's
/// JavaScript beside it, and nothing at all when a type is wrong. The
/// package's `tsconfig.json` is for the author's editor: tsc is told to
/// ignore it, so that a package cannot turn the checks off.
const TSC_FLAGS: [&str; 11] = [
    "--ignoreConfig",
    "--strict",
    "--noEmitOnError",
    "--target",
    "es2022",
    "--module",
    "nodenext",
    "--moduleResolution",
    "nodenext",
    "--pretty",
    "false",
];

/// The module that imports the generator's default export and serves it.
fn js_entry(main: &str) -> String {
    let main = serde_json::to_string(&format!("./{main}")).expect("a string serializes");
    format!(
        "// Made by seams: the component's entry. The templates register first.\n\
         import './{JS_TEMPLATES}';\n\
         import {{ serve }} from './seams-sdk/component.js';\n\
         import generator from {main};\n\
         export const generatorApi = serve(generator);\n"
    )
}

/// The module that registers the package's `templates/` (every file, by
/// its path in the package) with the SDK.
fn js_templates(stage: &Path) -> Result<String, BuildError> {
    let mut files = std::collections::BTreeMap::new();
    let root = stage.join("templates");
    let mut todo = vec![root.clone()];
    while let Some(current) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path.strip_prefix(stage).unwrap_or(&path);
                let key = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let text = std::fs::read_to_string(&path).map_err(|e| BuildError::Package {
                    path: rel.to_owned(),
                    message: format!("a template must be UTF-8 text: {e}"),
                })?;
                files.insert(key, text);
            }
        }
    }
    let files = serde_json::to_string_pretty(&files).expect("strings serialize");
    Ok(format!(
        "// Made by seams: the package's templates, in the component.\n\
         import {{ registerTemplateFiles }} from './seams-sdk/index.js';\n\
         registerTemplateFiles({files});\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_copied_without_links_caches_or_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let stage = tempfile::tempdir().unwrap();
        let stage = stage.path().join("stage");
        std::fs::create_dir_all(dir.path().join("templates/part")).unwrap();
        std::fs::create_dir_all(dir.path().join("node_modules/x")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("generator.js"), "x").unwrap();
        std::fs::write(dir.path().join("templates/part/a.html"), "a").unwrap();
        std::fs::write(dir.path().join("node_modules/x/i.js"), "x").unwrap();
        std::fs::write(dir.path().join(".git/config"), "x").unwrap();
        assert!(stage_package(dir.path(), &stage).is_ok());
        assert!(stage.join("generator.js").is_file());
        assert!(stage.join("templates/part/a.html").is_file());
        assert!(!stage.join("node_modules").exists());
        assert!(!stage.join(".git").exists());
        let templates = js_templates(&stage).unwrap();
        assert!(
            templates.contains("\"templates/part/a.html\": \"a\""),
            "{templates}"
        );

        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("templates/loot.html")).unwrap();
        match stage_package(dir.path(), &stage) {
            Err(Staging::Refused(message)) => {
                assert!(
                    message.contains("templates/loot.html is a symbolic link"),
                    "{message}"
                )
            }
            _ => panic!("a link must be refused"),
        }
        std::fs::remove_file(dir.path().join("templates/loot.html")).unwrap();
        // A package past the cap (a sparse file: no disk spent).
        std::fs::File::create(dir.path().join("huge.bin"))
            .unwrap()
            .set_len(PACKAGE_CAP + 1)
            .unwrap();
        match stage_package(dir.path(), &stage) {
            Err(Staging::Refused(message)) => {
                assert!(message.contains("more than 64 MiB"), "{message}")
            }
            _ => panic!("a package past the cap must be refused"),
        }
    }

    #[test]
    fn the_generator_module_is_named_inside_the_package() {
        let js = |d: &Path| js_main(d, &Manifest::read(d, Language::Js)?);
        let py = |d: &Path| python_module(d, &Manifest::read(d, Language::Python)?);
        let dir = tempfile::tempdir().unwrap();
        let manifest = |text: &str| std::fs::write(dir.path().join("package.json"), text).unwrap();
        manifest("{\"name\": \"a\"}");
        let missing = js(dir.path()).unwrap_err().to_string();
        assert!(
            missing.contains("\"generator.js\" is not in the package"),
            "{missing}"
        );
        std::fs::write(dir.path().join("generator.js"), "").unwrap();
        assert_eq!(js(dir.path()).unwrap(), "generator.js");
        for bad in ["../x.js", "/etc/x.js", "a/../../x.js", "x.ts", ".hidden.js"] {
            manifest(&format!("{{\"main\": \"{bad}\"}}"));
            assert!(js(dir.path()).is_err(), "{bad}");
        }
        assert!(js_entry("lib/gen.js").contains("import generator from \"./lib/gen.js\";"));

        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname = \"a\"\n",
        )
        .unwrap();
        assert!(
            py(dir.path())
                .unwrap_err()
                .to_string()
                .contains("write generator.py")
        );
        std::fs::write(dir.path().join("generator.py"), "").unwrap();
        assert_eq!(py(dir.path()).unwrap(), "generator");
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.seams]\nmodule = \"os; rm\"\n",
        )
        .unwrap();
        assert!(py(dir.path()).is_err());
    }
}
