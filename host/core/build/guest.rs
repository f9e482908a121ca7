// Shared by the build scripts of `seams` and `seams-tests` (through
// `include!`): builds guest crates into components.

include!("cargo_env.rs");

/// Builds a guest crate for wasm32-wasip2 with the `guest` profile and
/// returns the component's path.
fn build_guest(manifest: &std::path::Path, target_dir: &std::path::Path, krate: &str) -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args(["build", "--profile", "guest", "--target", "wasm32-wasip2", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir);
    remove_outer_cargo_env(&mut cmd);
    // cargo shows a build script's output only when it fails: on a first
    // build that would be minutes of silence. When the build runs on a
    // terminal, the nested cargo draws its progress there instead; without
    // one (CI, an IDE), it stays quiet.
    match std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        Ok(tty) => {
            use std::io::Write;
            let mut note = &tty;
            let _ = writeln!(note, "   Building {krate} (a built-in component, wasm32-wasip2)");
            let (out, err) = (tty.try_clone(), tty.try_clone());
            if let (Ok(out), Ok(err)) = (out, err) {
                cmd.stdout(out).stderr(err);
            }
        }
        Err(_) => {
            cmd.arg("--quiet");
        }
    }
    let status = cmd.status().expect("cannot run cargo to build a guest component");
    if !status.success() {
        panic!("building the guest {} failed; run `cargo build --profile guest --target wasm32-wasip2 --manifest-path {}` to see why (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`)", krate, manifest.display());
    }
    target_dir.join("wasm32-wasip2").join("guest").join(format!("{krate}.wasm"))
}

/// Guests get their own target directory beside the host's, shared by every
/// profile (build, test, clippy), so each is compiled once.
fn guest_target_dir() -> std::path::PathBuf {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // OUT_DIR is <target>/<profile>/build/<pkg>/out (or one level deeper
    // with --target): find the directory that holds the profile.
    let target = out
        .ancestors()
        .find(|p| p.join("CACHEDIR.TAG").is_file())
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| out.ancestors().nth(4).unwrap().to_path_buf());
    target.join("guests")
}

