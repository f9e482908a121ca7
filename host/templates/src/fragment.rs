//! Shared loop fragments of the tracing render. A generator passes the
//! same list to every page (htmx: its navigation, thousands of links on
//! every page at 1000 copies), and a top-level `{% for x in list %}` whose
//! body prints only fields of `x` prints the same text, with the same
//! marks, every time it runs over that list. The tracing render keeps the
//! loop's output and marks ([`Kept`]) and prints them again when the next
//! render loops over the same list (the very same value: contexts share
//! their large fields, see `SharedFields`), instead of running it again.
//!
//! Which loops qualify is decided from the template's text alone
//! ([`shared_loop`]); whether a run of one may reuse a kept output is
//! decided when it starts (the same list, no include open). The normal
//! render never reuses anything: it decides, as ever, whether a render
//! passes, and a reused loop charges the fuel its first run spent, so
//! that the tracing render never spends less than the normal one.

use minijinja::value::Value;

use crate::scan::{Tag, next_tag, split_ws_prefix, split_ws_suffix, tag_end};
use crate::sentinel::{SENTINEL_CLOSE, SENTINEL_OPEN};
use crate::syntax::Delimiters;

/// The block keywords that make a template's top-level names mean
/// something other than its context's fields (inheritance, macros,
/// assignments), or that capture output: a template with one keeps no
/// fragments.
const RESOLVING_ELSEWHERE: [&str; 10] = [
    "extends",
    "block",
    "macro",
    "call",
    "filter",
    "set",
    "with",
    "import",
    "from",
    "autoescape",
];

/// Whether `source` may keep fragments: none of its block tags is one of
/// [`RESOLVING_ELSEWHERE`].
pub(crate) fn template_allows(source: &str, d: &Delimiters) -> bool {
    let mut rest = source;
    while let Some((at, tag)) = next_tag(rest, d) {
        let (open, close) = match tag {
            Tag::Var => d.var,
            Tag::Block => d.block,
            Tag::Comment => d.comment,
        };
        let tail = &rest[at..];
        let Some(end) = (match tag {
            Tag::Comment => tail[open.len()..]
                .find(close)
                .map(|e| open.len() + e + close.len()),
            _ => tag_end(tail, open.len(), close),
        }) else {
            // Unclosed: the parser refuses it anyway.
            return false;
        };
        if let Tag::Block = tag {
            let inner = tail[open.len()..end - close.len()]
                .trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
            let keyword = inner
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if RESOLVING_ELSEWHERE.contains(&keyword) {
                return false;
            }
        }
        rest = &tail[end..];
    }
    true
}

/// A loop whose output depends only on its list.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SharedLoop<'a> {
    /// The list's name, a field of the context.
    pub(crate) list: &'a str,
    /// Where its `endfor` tag starts, counted from the end of the `for` tag.
    pub(crate) endfor: usize,
}

/// Whether the `for` tag whose inside is `tag` (delimiters stripped), at
/// the top level of a template that allows fragments, opens a shared loop:
/// `for x in list`, no whitespace control on it or its `endfor`, and a body
/// (`body`: the source after the tag) of text and `{{ x }}` or
/// `{{ x.field... }}` tags only, up to its `endfor`.
pub(crate) fn shared_loop<'a>(tag: &'a str, body: &str, d: &Delimiters) -> Option<SharedLoop<'a>> {
    let (open_ws, inner) = split_ws_prefix(tag);
    let (inner, close_ws) = split_ws_suffix(inner);
    if !open_ws.is_empty() || !close_ws.is_empty() {
        return None;
    }
    let mut words = inner.split_whitespace();
    let ("for", Some(item), Some("in"), Some(list), None) = (
        words.next()?,
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return None;
    };
    if !is_name(item) || !is_name(list) || item == list {
        return None;
    }
    let mut at = 0;
    loop {
        let (start, kind) = next_tag(&body[at..], d)?;
        let tail = &body[at + start..];
        match kind {
            Tag::Comment => return None,
            Tag::Var => {
                let end = tag_end(tail, d.var.0.len(), d.var.1)?;
                let inner = &tail[d.var.0.len()..end - d.var.1.len()];
                let mut path = inner.trim().split('.');
                let reads_item = path.next() == Some(item) && path.all(is_name);
                let plain = !inner.starts_with(['-', '+']) && !inner.ends_with(['-', '+']);
                if !(reads_item && plain) {
                    return None;
                }
                at += start + end;
            }
            Tag::Block => {
                let end = tag_end(tail, d.block.0.len(), d.block.1)?;
                let inner = &tail[d.block.0.len()..end - d.block.1.len()];
                let plain = !inner.starts_with(['-', '+']) && !inner.ends_with(['-', '+']);
                return (plain && inner.trim() == "endfor").then_some(SharedLoop {
                    list,
                    endfor: at + start,
                });
            }
        }
    }
}

/// A plain name: an identifier (not a keyword, not `loop`), and not one
/// of a loop's own words.
fn is_name(word: &str) -> bool {
    crate::scan::is_identifier(word) && !matches!(word, "in" | "for" | "if")
}

/// A loop's output kept by the thread that rendered it, with the marks its
/// sentinels number (`M`), for the next run of that loop over the same
/// list.
#[derive(Debug)]
pub(crate) struct Kept<O, M> {
    /// The service it is of (`O`, held, so that no other service takes
    /// its address) and the loop's site in it.
    pub(crate) owner: std::sync::Arc<O>,
    pub(crate) site: (usize, usize),
    /// The list it ran over, held so that no other takes its address.
    pub(crate) list: Value,
    /// Its output, sentinels included, numbered from `base`.
    pub(crate) text: Value,
    pub(crate) base: usize,
    pub(crate) marks: Vec<M>,
    /// The fuel its run spent.
    pub(crate) fuel: u64,
}

/// The most fragments a thread keeps, and the most bytes of output: a
/// template has few shared loops, and the oldest kept goes first.
pub(crate) const KEPT_MAX: usize = 8;
pub(crate) const KEPT_BYTES_MAX: usize = 16 << 20;

/// Whether two lists are the same value (not merely equal): only lists
/// read from JSON, which nothing changes once read.
pub(crate) fn same_list(a: &Value, b: &Value) -> bool {
    match (list_of(a), list_of(b)) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        _ => false,
    }
}

/// The list a loop may keep its output for: a list read from JSON.
pub(crate) fn list_of(value: &Value) -> Option<&Vec<Value>> {
    value.downcast_object_ref::<Vec<Value>>()
}

/// Whether `text`'s sentinels number exactly `base`, `base + 1`, ... up to
/// `base + count`, in order, and nothing else looks like one: what a
/// loop's output must hold to be renumbered safely.
pub(crate) fn numbered_from(text: &str, base: usize, count: usize) -> bool {
    let mut expected = base;
    let mut rest = text;
    while let Some(at) = rest.find(SENTINEL_OPEN) {
        let after = &rest[at + SENTINEL_OPEN.len_utf8()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(number) = after[..digits].parse::<usize>() else {
            return false;
        };
        if number != expected || !after[digits..].starts_with(SENTINEL_CLOSE) {
            return false;
        }
        expected += 1;
        rest = &after[digits + SENTINEL_CLOSE.len_utf8()..];
    }
    // No stray closing character either.
    expected == base + count && text.matches(SENTINEL_CLOSE).count() == count
}

/// `text`, numbered from `base` (as [`numbered_from`] checked), numbered
/// from `to` instead.
pub(crate) fn renumber(text: &str, base: usize, to: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 64);
    let mut rest = text;
    let mut digits = itoa::Buffer::new();
    while let Some(at) = rest.find(SENTINEL_OPEN) {
        let start = at + SENTINEL_OPEN.len_utf8();
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let len = after.bytes().take_while(u8::is_ascii_digit).count();
        let number: usize = after[..len].parse().unwrap_or(base);
        out.push_str(digits.format(number.saturating_sub(base).saturating_add(to)));
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Syntax;

    fn jinja() -> Delimiters {
        Delimiters::for_syntax(Syntax::Jinja)
    }

    #[test]
    fn only_loops_whose_output_depends_on_their_list_alone_are_shared() {
        let body = "\n  <a href=\"{{ item.href }}\">{{ item.title }}</a>\n{% endfor %}\n";
        for (tag, body, expect) in [
            (" for item in nav ", body, Some("nav")),
            (" for item in nav ", "{{ item }}{% endfor %}", Some("nav")),
            (" for item in nav ", "{% endfor %}", Some("nav")),
            (" for item in nav ", "{{ item.a }}{%endfor%}", Some("nav")),
            // Whitespace control, on the loop or in it.
            ("- for item in nav ", body, None),
            (" for item in nav -", body, None),
            (" for item in nav ", "{{- item.a }}{% endfor %}", None),
            (" for item in nav ", "{{ item.a }}{%- endfor %}", None),
            // Anything but a field of the item.
            (" for item in nav ", "{{ page.title }}{% endfor %}", None),
            (" for item in nav ", "{{ item.a|upper }}{% endfor %}", None),
            (" for item in nav ", "{{ item['a'] }}{% endfor %}", None),
            (" for item in nav ", "{{ loop.index }}{% endfor %}", None),
            (" for item in nav ", "{{ item.a() }}{% endfor %}", None),
            (" for item in nav ", "{# c #}{% endfor %}", None),
            (
                " for item in nav ",
                "{% if item.a %}x{% endif %}{% endfor %}",
                None,
            ),
            (" for item in nav ", "{% else %}none{% endfor %}", None),
            // Loops of other shapes.
            (" for k, v in nav ", "{{ v }}{% endfor %}", None),
            (" for item in nav|reverse ", "{{ item }}{% endfor %}", None),
            (" for item in page.nav ", "{{ item }}{% endfor %}", None),
            (" for item in nav if item ", "{{ item }}{% endfor %}", None),
            (
                " for item in nav recursive ",
                "{{ item }}{% endfor %}",
                None,
            ),
            (" for loop in nav ", "{{ loop }}{% endfor %}", None),
            (" for item in item ", "{{ item }}{% endfor %}", None),
            // Never closed.
            (" for item in nav ", "{{ item }}", None),
        ] {
            let found = shared_loop(tag, body, &jinja());
            assert_eq!(found.as_ref().map(|s| s.list), expect, "{tag} / {body}");
            if let Some(found) = found {
                assert!(body[found.endfor..].starts_with("{%"), "{body}");
            }
        }
    }

    #[test]
    fn templates_that_resolve_names_elsewhere_keep_none() {
        for (source, expect) in [
            (
                "{% for x in xs %}{{ x }}{% endfor %}{% include \"a\" %}",
                true,
            ),
            ("{% if a %}{{ b }}{% endif %}{# set x = 1 #}", true),
            (
                "{% set nav = other %}{% for x in nav %}{{ x }}{% endfor %}",
                false,
            ),
            ("{% extends \"base\" %}", false),
            ("{% block b %}{% endblock %}", false),
            ("{%- macro m() %}{% endmacro %}", false),
            ("{%\n\tset nav = 1 %}", false),
            ("{% with nav = 1 %}{% endwith %}", false),
            ("{% from \"m\" import n %}", false),
            ("{% for x in xs", false),
        ] {
            assert_eq!(template_allows(source, &jinja()), expect, "{source}");
        }
    }

    #[test]
    fn a_kept_output_is_renumbered_only_when_its_sentinels_are_its_marks() {
        let s = |n: usize| format!("{SENTINEL_OPEN}{n}{SENTINEL_CLOSE}");
        let text = format!("a{}\nb{}c{}\n", s(7), s(8), s(9));
        assert!(numbered_from(&text, 7, 3));
        assert!(!numbered_from(&text, 7, 2));
        assert!(!numbered_from(&text, 6, 3));
        assert!(numbered_from("no marks\n", 4, 0));
        assert!(!numbered_from(&format!("a{}{}", s(7), s(9)), 7, 2));
        assert!(!numbered_from(&format!("a{SENTINEL_CLOSE}{}", s(7)), 7, 1));
        assert!(!numbered_from(&format!("a{SENTINEL_OPEN}{}", s(7)), 7, 1));
        assert!(!numbered_from(&format!("a{SENTINEL_OPEN}x{}", s(7)), 7, 1));
        assert_eq!(renumber(&text, 7, 7), text);
        assert_eq!(
            renumber(&text, 7, 98),
            format!("a{}\nb{}c{}\n", s(98), s(99), s(100))
        );
        assert_eq!(
            renumber(&text, 7, 0),
            format!("a{}\nb{}c{}\n", s(0), s(1), s(2))
        );
    }
}
