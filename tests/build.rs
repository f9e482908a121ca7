//! Builds the hostile fixture components from source for the tests.

include!("../host/core/build/guest.rs");

fn main() {
    let tests = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = tests.parent().unwrap().to_owned();
    for dir in [
        "tests/fixtures",
        "host/core/build",
        "sdk/src",
        "wit",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let target_dir = guest_target_dir();
    let fixtures = tests.join("fixtures");
    let hostile = build_guest(
        &fixtures.join("hostile/Cargo.toml"),
        &target_dir,
        "seams_hostile",
    );
    println!("cargo:rustc-env=SEAMS_HOSTILE_WASM={}", hostile.display());
    let other = hostile.with_file_name("other-world.wasm");
    println!("cargo:rustc-env=SEAMS_OTHER_WORLD_WASM={}", other.display());
    let future = build_guest(
        &fixtures.join("future-version/Cargo.toml"),
        &target_dir,
        "seams_future_version",
    );
    println!("cargo:rustc-env=SEAMS_FUTURE_WASM={}", future.display());
    let attacker = build_guest(
        &fixtures.join("attacker/Cargo.toml"),
        &target_dir,
        "seams_attacker",
    );
    println!("cargo:rustc-env=SEAMS_ATTACKER_WASM={}", attacker.display());
    let labels = build_guest(
        &fixtures.join("labels/Cargo.toml"),
        &target_dir,
        "seams_labels",
    );
    println!("cargo:rustc-env=SEAMS_LABELS_WASM={}", labels.display());
}
