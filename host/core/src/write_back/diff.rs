//! Which lines of a text a change alters, found by a line diff (Myers'
//! algorithm from `similar`), so that a line added near the top of a file
//! is one change, not every line below it shifted.

use similar::{Algorithm, DiffTag, capture_diff_slices, group_diff_ops};

/// A run of lines that differ: where it starts (1-based, in the old text
/// and in the new), the old lines and the new ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hunk<'a> {
    pub(super) old_line: usize,
    pub(super) new_line: usize,
    pub(super) old: Vec<&'a str>,
    pub(super) new: Vec<&'a str>,
}

/// The runs of lines that differ between `old` and `new`, in order.
pub(super) fn hunks<'a>(old: &'a str, new: &'a str) -> Vec<Hunk<'a>> {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.split('\n').collect(), new.split('\n').collect());
    let ops = capture_diff_slices(Algorithm::Myers, &a, &b);
    group_diff_ops(ops, 0)
        .into_iter()
        .map(|group| {
            let mut hunk = Hunk {
                old_line: 0,
                new_line: 0,
                old: Vec::new(),
                new: Vec::new(),
            };
            for (i, op) in group.iter().enumerate() {
                let (tag, from, to) = op.as_tag_tuple();
                if i == 0 {
                    (hunk.old_line, hunk.new_line) = (from.start + 1, to.start + 1);
                }
                if tag != DiffTag::Equal {
                    hunk.old.extend(&a[from]);
                    hunk.new.extend(&b[to]);
                }
            }
            hunk
        })
        .collect()
}

/// The lines only one of `old` and `new` has, `-` or `+` first, each run
/// under a `@@ line N @@` header giving its first line in `old`.
pub(super) fn line_diff(old: &str, new: &str) -> Vec<String> {
    let mut out = Vec::new();
    for hunk in hunks(old, new) {
        out.push(format!("@@ line {} @@", hunk.old_line));
        out.extend(hunk.old.iter().map(|l| format!("-{l}")));
        out.extend(hunk.new.iter().map(|l| format!("+{l}")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_only_the_lines_that_differ() {
        let table: &[(&str, &str, &[&str])] = &[
            (
                "a\nb\nc\n",
                "a\nb\nx\ny\nc\n",
                &["@@ line 3 @@", "+x", "+y"],
            ),
            ("a\nb\nc", "a\nc", &["@@ line 2 @@", "-b"]),
            // Two changes far apart: two runs, nothing between them.
            (
                "a\nb\nc\nd\ne",
                "A\nb\nc\nd\nE",
                &["@@ line 1 @@", "-a", "+A", "@@ line 5 @@", "-e", "+E"],
            ),
            // A line added at the top shifts nothing else.
            ("b\nc\nd", "a\nb\nc\nd", &["@@ line 1 @@", "+a"]),
            ("same", "same", &[]),
        ];
        for (old, new, expected) in table {
            assert_eq!(line_diff(old, new), *expected, "{old:?} -> {new:?}");
        }
    }
}
