//! The rules a path a generator returns must follow to stay inside the
//! output directory on every platform, and not to take a name the host
//! reserves for itself.

use crate::error::ProtocolError;

/// The name prefix of seams's temporary files. No output may use it.
pub const TEMP_PREFIX: &str = ".seams-tmp-";

/// Checks one path a generator returned: relative, normalized, posix
/// separators, no `..`, no absolute or drive prefix, no control
/// characters, and not a name the host reserves.
///
/// # Errors
///
/// The rule the path breaks.
pub fn validate(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("it is empty");
    }
    if path.len() > 1024 {
        return Err("it is longer than 1024 bytes");
    }
    if path.chars().any(char::is_control) {
        return Err("it contains a control character");
    }
    if path.chars().any(seams_model::input_text::unsafe_char) {
        return Err(
            "it contains an invisible formatting character (a bidi override or isolate, a zero-width character)",
        );
    }
    if path.contains('\\') {
        return Err("it contains '\\'; use '/' between directories");
    }
    if path.chars().any(|c| CONFUSABLE.contains(&c)) {
        return Err(
            "it contains a character that looks like '.', '/' or '\\' (a fullwidth dot, a division slash...), which reads as another path on screen and on some systems",
        );
    }
    if path.contains(':') {
        return Err("it contains ':', which is a drive or stream prefix on Windows");
    }
    if path.starts_with('/') {
        return Err("it is absolute; return a path relative to the output directory");
    }
    for segment in path.split('/') {
        match segment {
            "" => return Err("it has an empty segment ('//' or a trailing '/')"),
            "." => return Err("it has a '.' segment; normalize it"),
            ".." => {
                return Err("it has a '..' segment, which could lead outside the output directory");
            }
            _ => {}
        }
        if segment.len() > 255 {
            return Err("it has a name longer than 255 bytes, more than file systems take");
        }
        if segment.ends_with(['.', ' ']) {
            return Err("it has a name ending in '.' or ' ', which Windows drops");
        }
        if is_device_name(segment) {
            return Err(
                "it has a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9), with or without an extension",
            );
        }
    }
    if path
        .split('/')
        .any(|segment| segment.starts_with(TEMP_PREFIX))
    {
        return Err("names starting with .seams-tmp- are reserved for the host's temporary files");
    }
    // Any case: a case-insensitive file system takes `x.Trace.JSON` for one.
    if path
        .to_lowercase()
        .ends_with(seams_templates::SIDECAR_SUFFIX)
    {
        return Err("names ending in .trace.json are reserved for the host's trace sidecars");
    }
    Ok(())
}

/// Characters that look like `.`, `/` or `\`: `．．/x` or `..∕x` would read
/// as a way out of the output directory, and some systems map them to the
/// ASCII ones (Windows' best-fit code pages).
const CONFUSABLE: &[char] = &[
    '\u{2024}', // one dot leader
    '\u{2025}', // two dot leader
    '\u{3002}', // ideographic full stop
    '\u{FE52}', // small full stop
    '\u{FF0E}', // fullwidth full stop
    '\u{FF61}', // halfwidth ideographic full stop
    '\u{2044}', // fraction slash
    '\u{2215}', // division slash
    '\u{2571}', // box drawings diagonal
    '\u{29F8}', // big solidus
    '\u{FF0F}', // fullwidth solidus
    '\u{2216}', // set minus
    '\u{29F5}', // reverse solidus operator
    '\u{29F9}', // big reverse solidus
    '\u{FE68}', // small reverse solidus
    '\u{FF3C}', // fullwidth reverse solidus
];

/// Whether `segment` is a name Windows reserves for a device, whatever its
/// case and extension (`nul.txt` is NUL).
fn is_device_name(segment: &str) -> bool {
    let stem = segment.split('.').next().unwrap_or(segment).trim_end();
    let upper = stem.to_ascii_uppercase();
    matches!(upper.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.len() == 4
            && matches!(upper.as_bytes()[3], b'1'..=b'9'))
}

/// Checks that sorted paths are distinct and none is a directory of
/// another.
///
/// # Errors
///
/// The first clash, naming both paths.
pub fn check_distinct<'a>(sorted: impl IntoIterator<Item = &'a str>) -> Result<(), ProtocolError> {
    let paths: Vec<&str> = sorted.into_iter().collect();
    for pair in paths.windows(2) {
        if pair[0] == pair[1] {
            return Err(ProtocolError::PathTwice {
                path: pair[0].to_owned(),
            });
        }
    }
    let set: std::collections::BTreeSet<&str> = paths.iter().copied().collect();
    for path in &paths {
        let mut prefix = *path;
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            if set.contains(parent) {
                return Err(ProtocolError::PathInsideFile {
                    file: parent.to_owned(),
                    path: (*path).to_owned(),
                });
            }
            prefix = parent;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_could_leave_the_output_directory_are_refused() {
        for bad in [
            "../x",
            "/etc/x",
            "a/../../x",
            "C:\\x",
            "C:x",
            "a\u{0}b",
            "a\nb",
            "a\u{7f}",
            "",
            "a//b",
            "a/",
            "./a",
            "x.html.trace.json",
            ".seams-tmp-1-2",
            "a/.seams-tmp-x/b",
            "n".repeat(256).as_str(),
            "dir./x",
            "x ",
            "CON",
            "con.txt",
            "a/Lpt1.log",
            "COM9",
            "x\u{202e}txt.exe",
            "zero\u{200b}width",
            "\u{FF0E}\u{FF0E}/x",
            "..\u{2215}x",
            "a\u{FF0F}b",
            "x.Trace.JSON",
            "x.html.TRACE.json",
        ] {
            assert!(validate(bad).is_err(), "{bad:?} should be refused");
        }
        for good in [
            "index.html",
            "pages/thread.html",
            "a.b/c-d_e.txt",
            "ünïcode.md",
            "n".repeat(255).as_str(),
            "console.txt",
            "com10",
            "lpt",
            ".hidden",
        ] {
            assert_eq!(validate(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn clashing_paths_are_named() {
        assert_eq!(
            check_distinct(["a", "a"]),
            Err(ProtocolError::PathTwice { path: "a".into() })
        );
        let inside = check_distinct(["a", "a/b"]).unwrap_err();
        assert!(inside.to_string().contains("\"a\" as a file"), "{inside}");
        assert!(check_distinct(["a/b", "a/c", "b"]).is_ok());
    }
}
