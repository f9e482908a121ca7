//! Generators built into seams: compiled to components by the build script
//! and embedded in the binary, so they are pinned by the seams version.

/// The names of the built-in generators.
pub const NAMES: &[&str] = &["htmx", "fastapi", "compose"];

/// The component bytes of the built-in `name`.
pub fn component(name: &str) -> Option<&'static [u8]> {
    Some(embedded(name)?.0)
}

/// The built-in `name`'s component and its sha256 (hex), which the build
/// script computed: the bytes cannot change while seams runs.
pub(crate) fn embedded(name: &str) -> Option<(&'static [u8], &'static str)> {
    match name {
        "htmx" => Some((
            include_bytes!(env!("SEAMS_BUILTIN_HTMX")),
            env!("SEAMS_BUILTIN_HTMX_SHA256"),
        )),
        "fastapi" => Some((
            include_bytes!(env!("SEAMS_BUILTIN_FASTAPI")),
            env!("SEAMS_BUILTIN_FASTAPI_SHA256"),
        )),
        "compose" => Some((
            include_bytes!(env!("SEAMS_BUILTIN_COMPOSE")),
            env!("SEAMS_BUILTIN_COMPOSE_SHA256"),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_built_in_s_sha256_is_that_of_its_bytes() {
        for name in super::NAMES {
            let (bytes, sha256) = super::embedded(name).unwrap();
            assert_eq!(sha256, seams_model::sha256_hex(bytes), "{name}");
        }
    }
}
