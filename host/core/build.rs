//! Compiles the built-in generators to components (wasm32-wasip2) so the
//! host can embed them: `cargo build` and `cargo test` need no other step.

use std::path::PathBuf;

include!("build/guest.rs");

/// (crate directory under generators/, crate name, env var for its path)
const BUILTINS: &[(&str, &str, &str)] = &[
    ("htmx", "seams_htmx", "SEAMS_BUILTIN_HTMX"),
    ("fastapi", "seams_fastapi", "SEAMS_BUILTIN_FASTAPI"),
    ("compose", "seams_compose", "SEAMS_BUILTIN_COMPOSE"),
];

fn main() {
    let core = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = core.ancestors().nth(2).unwrap().to_owned();
    for dir in [
        "host/core/build",
        "sdk/src",
        "sdk/Cargo.toml",
        "wit",
        "generators",
        // The UI vocabulary and its shapes, which the built-ins embed.
        "vocabulary",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let target_dir = guest_target_dir();
    // The fuzz targets (fuzz/, under cargo-fuzz's `--cfg fuzzing`) read
    // records, never components, and are built by a nightly toolchain that
    // may lack the wasm target: there the built-ins are empty.
    let fuzzing = std::env::var_os("CARGO_CFG_FUZZING").is_some();
    for (dir, krate, var) in BUILTINS {
        let manifest = root.join("generators").join(dir).join("Cargo.toml");
        let wasm = if fuzzing {
            let empty =
                PathBuf::from(std::env::var("OUT_DIR").unwrap()).join(format!("{krate}.wasm"));
            std::fs::write(&empty, b"").expect("OUT_DIR is writable");
            empty
        } else {
            build_guest(&manifest, &target_dir, krate)
        };
        println!("cargo:rustc-env={var}={}", wasm.display());
        let bytes = std::fs::read(&wasm).expect("the built component is readable");
        let sha256: String =
            sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(&bytes))
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
        println!("cargo:rustc-env={var}_SHA256={sha256}");
    }
}
