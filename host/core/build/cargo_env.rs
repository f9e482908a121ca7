// Shared by the build scripts (through build/guest.rs) and by
// `seams test-generator` (through `include!`): a nested cargo must not
// inherit the outer one's settings (clippy's wrapper, host rustflags, the
// outer profile and target directory).

/// Removes the outer cargo's and rustc's settings from `command`'s
/// environment, keeping `CARGO_HOME`.
fn remove_outer_cargo_env(command: &mut std::process::Command) {
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let inherited = (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || key.starts_with("RUSTC")
            || key == "RUSTFLAGS"
            || key == "RUSTDOCFLAGS";
        if inherited {
            command.env_remove(&key);
        }
    }
}
