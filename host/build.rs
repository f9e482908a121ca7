//! Compiles the built-in generators to components (wasm32-wasip2) so the
//! host can embed them: `cargo build` and `cargo test` need no other step.

use std::path::{Path, PathBuf};

include!("build/guest.rs");

/// (crate directory under generators/, crate name, env var for its path)
const BUILTINS: &[(&str, &str, &str)] = &[("htmx", "seams_htmx", "SEAMS_BUILTIN_HTMX")];

fn main() {
    let host = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = host.parent().unwrap().to_owned();
    for dir in ["host/build", "sdk/src", "sdk/Cargo.toml", "wit", "generators", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let target_dir = guest_target_dir();
    for (dir, krate, var) in BUILTINS {
        let manifest = root.join("generators").join(dir).join("Cargo.toml");
        let wasm = build_guest(&manifest, &target_dir, krate);
        println!("cargo:rustc-env={var}={}", wasm.display());
    }
}

/// Guests get their own target directory beside the host's, shared by every
/// profile (build, test, clippy), so each is compiled once.
fn guest_target_dir() -> PathBuf {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // OUT_DIR is <target>/<profile>/build/<pkg>/out (or one level deeper
    // with --target): find the directory that holds the profile.
    let target = out
        .ancestors()
        .find(|p| p.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out.ancestors().nth(4).unwrap().to_path_buf());
    target.join("guests")
}

