// Shared by the build scripts of `seams` and `seams-tests` (through
// `include!`): builds one guest crate into a component.

/// Builds a guest crate for wasm32-wasip2 with the `guest` profile and
/// returns the component's path.
fn build_guest(manifest: &Path, target_dir: &Path, krate: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args(["build", "--quiet", "--profile", "guest", "--target", "wasm32-wasip2", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir);
    // The outer build's settings (clippy's wrapper, host rustflags, the
    // outer profile) must not leak into the guest build.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let inherited = (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || key.starts_with("RUSTC")
            || key == "RUSTFLAGS"
            || key == "RUSTDOCFLAGS";
        if inherited {
            cmd.env_remove(&key);
        }
    }
    let status = cmd.status().expect("cannot run cargo to build a guest component");
    if !status.success() {
        panic!("building the guest {} failed; run `cargo build --profile guest --target wasm32-wasip2 --manifest-path {}` to see why (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`)", krate, manifest.display());
    }
    target_dir.join("wasm32-wasip2").join("guest").join(format!("{krate}.wasm"))
}
