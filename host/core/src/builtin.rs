//! Generators built into seams: compiled to components by the build script
//! and embedded in the binary, so they are pinned by the seams version.

/// The names of the built-in generators.
pub const NAMES: &[&str] = &["htmx", "fastapi", "compose"];

/// The component bytes of the built-in `name`.
pub fn component(name: &str) -> Option<&'static [u8]> {
    match name {
        "htmx" => Some(include_bytes!(env!("SEAMS_BUILTIN_HTMX"))),
        "fastapi" => Some(include_bytes!(env!("SEAMS_BUILTIN_FASTAPI"))),
        "compose" => Some(include_bytes!(env!("SEAMS_BUILTIN_COMPOSE"))),
        _ => None,
    }
}
