//! Rewrites a template's source for the tracing render (ADR-0019): every
//! piece of text a template line emits is followed by a call that prints a
//! sentinel naming that line, without changing what the template prints.
//!
//! The rewrite follows minijinja's lexer closely enough to respect what
//! breaks a naive per-line sentinel:
//!
//! - Tags that span lines are never cut: text gets its call after the last
//!   non-blank character of each line, outside any tag, and a `{{ }}` tag
//!   is wrapped whole (its line is the one it starts on).
//! - Whitespace control (`-%}`, `{%-`, `-}}`, `lstrip_blocks`,
//!   `trim_blocks`) still sees the same whitespace: calls are placed after
//!   non-blank text, never between a tag and the whitespace it trims.
//! - Raw blocks are split at each line's end with `{%+ endraw +%}` and
//!   `{% raw +%}`, whose `+` keeps the splits from trimming anything.
//! - Includes pass through a call that records the including line, so that
//!   origins list the include chain, outermost first.
//!
//! Each call also receives the variables of the enclosing `for` loops,
//! macros and `call` blocks (innermost first): the first that is a view
//! object is the line's fallback for terms.
//!
//! The walk also notes what could make the stripped tracing render differ
//! from the normal one ([`Instrumented::unsure`]): output a template
//! captures as a value (macros, `call`, `filter` and `set` blocks,
//! `super()`, `self`, recursive loops), which a filter may then measure or
//! pad with the sentinels inside, and ways to print the sentinel character
//! itself. A template with none of these prints, stripped, what the normal
//! render prints, so one render can serve as both.

use crate::error::TemplateError;
use crate::scan::{Tag, is_identifier, next_tag, split_ws_prefix, split_ws_suffix, tag_end};
use crate::sentinel::{
    FRAGMENT_FN, INCLUDE_FN, KEEP_FN, LINE_FN, OWNED_FN, REPLAY_FN, SENTINEL_CLOSE, SENTINEL_OPEN,
    VALUE_FN,
};
use crate::syntax::Delimiters;

const KEPT_VAR: &str = "__seams_kept";

/// A template, instrumented.
pub(crate) struct Instrumented {
    /// The rewritten source.
    pub(crate) source: String,
    /// How many shared loops keep their output ([`crate::fragment`]).
    pub(crate) shared_loops: usize,
    /// What in the template could make its stripped tracing render differ
    /// from its normal render, with its line; `None` when nothing can.
    pub(crate) unsure: Option<(usize, &'static str)>,
}

/// Instruments `source` (template `name`). `line_ids` maps each template
/// line to the id its calls pass: `register(line)` returns that id. With
/// `fragments` (the caller checked [`crate::fragment::template_allows`]
/// for every template of the service), its shared loops keep their
/// output.
pub(crate) fn instrument(
    name: &str,
    source: &str,
    d: &Delimiters,
    fragments: bool,
    register: &mut dyn FnMut(usize) -> usize,
) -> Result<Instrumented, TemplateError> {
    // The shared loop being copied: where its `endfor` starts, and what
    // follows that tag. How many this template has had.
    let mut shared: Option<(usize, String)> = None;
    let mut sites = 0;
    let mut out = String::with_capacity(source.len() * 2);
    let mut unsure = [SENTINEL_OPEN, SENTINEL_CLOSE]
        .iter()
        .filter_map(|c| source.find(*c))
        .min()
        .map(|at| {
            (
                source[..at].matches('\n').count() + 1,
                "the sentinel character",
            )
        });
    // The candidates for a line's enclosing view object, one entry per open
    // block that names some (loop targets, macro parameters, an `if`'s
    // plain-path condition), and which block each entry is for.
    let mut scopes: Vec<Vec<String>> = Vec::new();
    let mut blocks: Vec<&str> = Vec::new();
    let mut pos = 0;
    let mut line = 1;
    // The template line that already has a mark in the current run of text
    // and values (a block tag ends the run): one mark per line and run is
    // enough, and marks are what the tracing render pays for.
    let mut marked: Option<usize> = None;
    let error = |line: usize, message: &str| TemplateError {
        template: name.to_owned(),
        line: Some(line),
        message: format!("cannot instrument the template for tracing: {message}"),
    };

    while pos < source.len() {
        let rest = &source[pos..];
        let next = next_tag(rest, d);
        let data_end = next.map_or(rest.len(), |(at, _)| at);
        let var_follows = matches!(next, Some((_, Tag::Var)));
        let mut run = Run {
            line: &mut line,
            marked: &mut marked,
            var_follows,
        };
        emit_data(&rest[..data_end], &mut run, &scopes, d, register, &mut out);
        pos += data_end;
        let Some((_, tag)) = next else { break };

        let start_line = line;
        let rest = &source[pos..];
        match tag {
            Tag::Comment => {
                let end = rest[d.comment.0.len()..]
                    .find(d.comment.1)
                    .ok_or_else(|| error(start_line, "unclosed comment"))?
                    + d.comment.0.len()
                    + d.comment.1.len();
                out.push_str(&rest[..end]);
                line += rest[..end].matches('\n').count();
                pos += end;
            }
            Tag::Var => {
                let end = tag_end(rest, d.var.0.len(), d.var.1)
                    .ok_or_else(|| error(start_line, "unclosed variable tag"))?;
                let inner = &rest[d.var.0.len()..end - d.var.1.len()];
                let (open_ws, inner) = split_ws_prefix(inner);
                let (inner, close_ws) = split_ws_suffix(inner);
                marked = Some(start_line);
                if unsure.is_none() {
                    unsure = expression_unsure(inner).map(|why| (start_line, why));
                }
                let owner = owner_path(inner);
                // A value read off the innermost candidate, with another
                // one after it on this line and run: the last one's mark
                // says what this one's would (the same template line, the
                // same object's IRIs, in the same output line or the one
                // the next sentinel covers), so this one is printed bare.
                if owner.is_some()
                    && owner == first_candidate(&scopes)
                    && !rest[..end].contains('\n')
                    && read_off_later_on_line(&rest[end..], d, owner)
                {
                    out.push_str(&rest[..end]);
                    pos += end;
                    continue;
                }
                let id = register(start_line);
                let candidates = candidates(&scopes);
                // Read off the innermost candidate: it is named once, as
                // the owner (a lookup and a copy fewer per value printed).
                let (call, candidates) = match owner {
                    Some(owner) if candidates.first() == Some(&owner) => {
                        (OWNED_FN, &candidates[1..])
                    }
                    _ => (VALUE_FN, &candidates[..]),
                };
                let value = format!("({})", inner.trim());
                out.push_str(d.var.0);
                out.push_str(open_ws);
                out.push(' ');
                out.push_str(&tracing_call(
                    call,
                    id,
                    &[&value, owner.unwrap_or("none")],
                    candidates,
                ));
                out.push(' ');
                out.push_str(close_ws);
                out.push_str(d.var.1);
                line += rest[..end].matches('\n').count();
                pos += end;
            }
            Tag::Block => {
                let end = tag_end(rest, d.block.0.len(), d.block.1)
                    .ok_or_else(|| error(start_line, "unclosed block tag"))?;
                let inner = &rest[d.block.0.len()..end - d.block.1.len()];
                let (open_ws, body) = split_ws_prefix(inner);
                let (body, close_ws) = split_ws_suffix(body);
                let trimmed = body.trim();
                let keyword = trimmed
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("");
                marked = None;
                line += rest[..end].matches('\n').count();
                pos += end;
                if unsure.is_none() {
                    unsure = block_unsure(keyword, trimmed).map(|why| (start_line, why));
                }
                match keyword {
                    "raw" => {
                        out.push_str(&rest[..end]);
                        let consumed =
                            emit_raw(&source[pos..], &mut line, &scopes, d, register, &mut out)
                                .ok_or_else(|| error(start_line, "unclosed raw block"))?;
                        pos += consumed;
                    }
                    "include" => {
                        let expr = trimmed["include".len()..].trim();
                        let (expr, suffix) = match expr.strip_suffix("ignore missing") {
                            Some(e) => (e.trim(), " ignore missing"),
                            None => (expr, ""),
                        };
                        let id = register(start_line);
                        out.push_str(d.block.0);
                        out.push_str(open_ws);
                        out.push_str(" include ");
                        out.push_str(&tracing_call(
                            INCLUDE_FN,
                            id,
                            &[&format!("({expr})")],
                            &candidates(&scopes),
                        ));
                        out.push_str(suffix);
                        out.push(' ');
                        out.push_str(close_ws);
                        out.push_str(d.block.1);
                    }
                    _ => {
                        let tag_start = pos - end;
                        if let Some((_, after)) = shared.take_if(|(at, _)| *at == tag_start) {
                            out.push_str(&rest[..end]);
                            out.push_str(&after);
                            scopes.pop();
                            blocks.pop();
                            continue;
                        }
                        if keyword == "for"
                            && fragments
                            && blocks.is_empty()
                            && let Some(found) = crate::fragment::shared_loop(
                                &rest[d.block.0.len()..end - d.block.1.len()],
                                &source[pos..],
                                d,
                            )
                        {
                            let id = register(start_line);
                            let site = format!("{id}|{FRAGMENT_FN}({sites}, {})", found.list);
                            let (b, v) = (d.block, d.var);
                            out.push_str(&format!(
                                "{} if {site} {}{} {id}|{REPLAY_FN} {}{} else {}{} set {KEPT_VAR} {}",
                                b.0, b.1, v.0, v.1, b.0, b.1, b.0, b.1
                            ));
                            shared = Some((
                                pos + found.endfor,
                                format!(
                                    "{} endset {}{} {id}|{KEEP_FN}({sites}, {}, {KEPT_VAR}) {}{} endif {}",
                                    b.0, b.1, v.0, found.list, v.1, b.0, b.1
                                ),
                            ));
                            sites += 1;
                        }
                        let opened = match keyword {
                            "for" => Some(for_targets(trimmed)),
                            "macro" | "call" => Some(parameters(trimmed)),
                            // The lines an `if` chose depend on what its
                            // condition read: a view object there encloses
                            // them. Not so for `else`.
                            "if" => Some(condition_path(&trimmed[2..])),
                            _ => None,
                        };
                        if let Some(names) = opened {
                            scopes.push(names);
                            blocks.push(keyword);
                        }
                        match keyword {
                            "elif" | "else" if blocks.last() == Some(&"if") => {
                                let names = if keyword == "elif" {
                                    condition_path(&trimmed[4..])
                                } else {
                                    Vec::new()
                                };
                                if let Some(top) = scopes.last_mut() {
                                    *top = names;
                                }
                            }
                            "endfor" | "endmacro" | "endcall" | "endif" => {
                                scopes.pop();
                                blocks.pop();
                            }
                            _ => {}
                        }
                        out.push_str(&rest[..end]);
                    }
                }
            }
        }
    }
    Ok(Instrumented {
        source: out,
        unsure,
        shared_loops: sites,
    })
}

/// What in a block tag (`keyword`, then the whole tag) captures output
/// or may print the sentinel character.
fn block_unsure(keyword: &str, tag: &str) -> Option<&'static str> {
    match keyword {
        "filter" => Some("a filter block"),
        "macro" => Some("a macro"),
        "call" => Some("a call block"),
        "import" | "from" => Some("an imported macro"),
        "set" if !is_assignment(&tag["set".len()..]) => Some("a set block"),
        _ => expression_unsure(tag),
    }
}

/// `x = ...` or `a, b = ...`, not a `set` block's `x` or `x | f`.
fn is_assignment(rest: &str) -> bool {
    let targets_end = rest
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ',' | '.' | ' ' | '(' | ')')))
        .unwrap_or(rest.len());
    let after = &rest[targets_end..];
    after.starts_with('=') && !after.starts_with("==")
}

/// What in an expression captures output (`super()`, `self.block()`, a
/// recursive loop's `loop()`) or may print the sentinel character (an
/// escape in a string, `%c` in `format`). Words inside strings count too:
/// a false alarm only costs a second render.
fn expression_unsure(expr: &str) -> Option<&'static str> {
    if expr.contains('\\') {
        return Some("an escape sequence");
    }
    [
        ("super", "super()"),
        ("self", "self"),
        ("recursive", "a recursive loop"),
        ("format", "the format filter"),
        ("debug", "debug()"),
    ]
    .into_iter()
    .find(|(word, _)| find_word(expr, word).is_some())
    .map(|(_, why)| why)
}

/// Where text is being instrumented: the current template line, the line
/// already marked in this run, and whether a `{{ }}` tag follows the text
/// on its last line (its own mark then covers that line).
struct Run<'a> {
    line: &'a mut usize,
    marked: &'a mut Option<usize>,
    var_follows: bool,
}

/// Text: after the last non-blank character of each line, a call that
/// prints the line's sentinel, unless the line is marked otherwise.
fn emit_data(
    text: &str,
    run: &mut Run<'_>,
    scopes: &[Vec<String>],
    d: &Delimiters,
    register: &mut dyn FnMut(usize) -> usize,
    out: &mut String,
) {
    let pieces = text.split('\n').count();
    for (i, piece) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            *run.line += 1;
        }
        let content_end = piece.trim_end().len();
        // A call after a trailing `{` would read as `{{{`: it goes before
        // that run of the delimiter's first character instead.
        let opener = d.var.0.chars().next().unwrap_or('{');
        let at = piece[..content_end].trim_end_matches(opener).len();
        out.push_str(&piece[..at]);
        let last = i + 1 == pieces;
        let covered = *run.marked == Some(*run.line) || (last && run.var_follows);
        if content_end > 0 && !covered {
            let id = register(*run.line);
            *run.marked = Some(*run.line);
            out.push_str(&format!(
                "{} {} {}",
                d.var.0,
                tracing_call(LINE_FN, id, &[], &candidates(scopes)),
                d.var.1
            ));
        }
        out.push_str(&piece[at..]);
    }
}

/// The body of a raw block up to and including its `endraw` tag, split at
/// each line's end so the sentinel calls sit outside it. Returns the bytes
/// consumed, or `None` when the block is not closed.
fn emit_raw(
    rest: &str,
    line: &mut usize,
    scopes: &[Vec<String>],
    d: &Delimiters,
    register: &mut dyn FnMut(usize) -> usize,
    out: &mut String,
) -> Option<usize> {
    let mut search = 0;
    let (body_end, tag_len) = loop {
        let at = search + rest[search..].find(d.block.0)?;
        let after = &rest[at + d.block.0.len()..];
        let after_ws = after.strip_prefix(['-', '+']).unwrap_or(after).trim_start();
        if let Some(tail) = after_ws.strip_prefix("endraw") {
            let tail = tail.trim_start();
            let tail = tail.strip_prefix(['-', '+']).unwrap_or(tail);
            if tail.starts_with(d.block.1) {
                let tag_len = rest.len() - at - (tail.len() - d.block.1.len());
                break (at, tag_len);
            }
        }
        search = at + d.block.0.len();
    };
    let body = &rest[..body_end];
    for (i, piece) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            *line += 1;
        }
        let content_end = piece.trim_end().len();
        out.push_str(&piece[..content_end]);
        if content_end > 0 {
            let id = register(*line);
            out.push_str(&format!(
                "{}+ endraw +{}{} {} {}{} raw +{}",
                d.block.0,
                d.block.1,
                d.var.0,
                tracing_call(LINE_FN, id, &[], &candidates(scopes)),
                d.var.1,
                d.block.0,
                d.block.1
            ));
        }
        out.push_str(&piece[content_end..]);
    }
    let tag = &rest[body_end..body_end + tag_len];
    *line += tag.matches('\n').count();
    out.push_str(tag);
    Some(body_end + tag_len)
}

/// `ID|NAME(ARGS, a, b)`: a tracing call on origin `id`, given `args`
/// and then the candidates for its enclosing view object ([`candidates`]).
/// A filter on the id, not a function: minijinja finds a filter once per
/// template run, while a function's name is looked up through every frame
/// of the context (and the context's own keys) at each call, and a page
/// makes thousands.
fn tracing_call(name: &str, id: usize, args: &[&str], candidates: &[&str]) -> String {
    let all: Vec<&str> = args.iter().chain(candidates).copied().collect();
    if all.is_empty() {
        format!("{id}|{name}")
    } else {
        format!("{id}|{name}({})", all.join(", "))
    }
}

/// The variables of the open blocks, innermost first, each once.
fn candidates(scopes: &[Vec<String>]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for scope in scopes.iter().rev().flatten() {
        if !seen.contains(&scope.as_str()) {
            seen.push(scope);
        }
    }
    seen
}

/// The candidate a tracing call names first (see [`candidates`]): the
/// innermost block's first, skipping blocks that name none.
fn first_candidate(scopes: &[Vec<String>]) -> Option<&str> {
    scopes.iter().rev().flatten().next().map(String::as_str)
}

/// Whether a `{{ }}` tag whose value is read off `owner` comes later on
/// this template line, with only text and other `{{ }}` tags before it
/// (a block or comment tag ends the run).
fn read_off_later_on_line(rest: &str, d: &Delimiters, owner: Option<&str>) -> bool {
    let mut rest = rest;
    loop {
        let Some((at, Tag::Var)) = next_tag(rest, d) else {
            return false;
        };
        if rest[..at].contains('\n') {
            return false;
        }
        let tag = &rest[at..];
        let Some(end) = tag_end(tag, d.var.0.len(), d.var.1) else {
            return false;
        };
        let (_, inner) = split_ws_prefix(&tag[d.var.0.len()..end - d.var.1.len()]);
        let (inner, _) = split_ws_suffix(inner);
        if owner_path(inner) == owner {
            return true;
        }
        rest = &tag[end..];
    }
}

/// `for k, v in ...` -> `[v, k]`: both are candidates, and the value is
/// usually the last target, so it comes first.
fn for_targets(tag: &str) -> Vec<String> {
    let after = tag["for".len()..].trim_start();
    let Some(in_at) = find_word(after, "in") else {
        return Vec::new();
    };
    let mut names: Vec<String> = after[..in_at]
        .split(',')
        .map(|t| t.trim().trim_matches(['(', ')']).trim().to_owned())
        .filter(|t| is_identifier(t))
        .collect();
    names.reverse();
    names
}

/// `if a.b` -> `[a.b]`: a condition that is a plain path is a candidate;
/// any other condition names none.
fn condition_path(condition: &str) -> Vec<String> {
    let path = condition.trim();
    if !path.is_empty() && path.split('.').all(is_identifier) {
        vec![path.to_owned()]
    } else {
        Vec::new()
    }
}

/// `macro m(a, b=1)` or `call(a) m()` -> `[a, b]`.
fn parameters(tag: &str) -> Vec<String> {
    let Some(open) = tag.find('(') else {
        return Vec::new();
    };
    let Some(close) = tag[open..].find(')') else {
        return Vec::new();
    };
    tag[open + 1..open + close]
        .split(',')
        .map(|p| p.split('=').next().unwrap_or("").trim().to_owned())
        .filter(|p| is_identifier(p))
        .collect()
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(word) {
        let at = from + at;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if boundary(before) && boundary(after) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// For `a.b.c`, the object the value is read off: `a.b`. Only plain
/// attribute paths, optionally through filters without arguments
/// (`a.b.c|tojson`, which print the same value differently): a filter with
/// arguments, a call or an operator loses the origin.
fn owner_path(expr: &str) -> Option<&str> {
    let mut parts = expr.split('|');
    let path = parts.next()?.trim();
    if !parts.all(|f| is_identifier(f.trim())) {
        return None;
    }
    let (owner, field) = path.rsplit_once('.')?;
    let parts_ok = owner.split('.').chain([field]).all(is_identifier);
    parts_ok.then_some(owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jinja() -> Delimiters {
        Delimiters::for_syntax(crate::Syntax::Jinja)
    }

    fn run(source: &str) -> (String, Vec<usize>) {
        let mut lines = Vec::new();
        let out = instrument("t", source, &jinja(), false, &mut |l| {
            lines.push(l);
            lines.len() - 1
        })
        .unwrap();
        (out.source, lines)
    }

    #[test]
    fn what_could_make_the_stripped_tracing_render_differ_is_found() {
        let unsure = |source: &str| {
            instrument("t", source, &jinja(), false, &mut |_| 0)
                .unwrap()
                .unsure
        };
        for (source, expect) in [
            (
                "{% for x in xs %}\n{{ x.a|upper }} {{ loop.index }}\n{% endfor %}\n",
                None,
            ),
            ("{% include \"a\" %}{% if a == b %}x{% endif %}\n", None),
            ("{% set x = a == b %}{% set a, b = 1, 2 %}{{ x }}\n", None),
            ("{% extends \"base\" %}{% block b %}x{% endblock %}", None),
            ("{% raw %}{{ self }}{% endraw %}{# format #}\n", None),
            (
                "a\n{% filter upper %}x{% endfilter %}\n",
                Some((2, "a filter block")),
            ),
            (
                "{% macro m() %}x{% endmacro %}{{ m() }}",
                Some((1, "a macro")),
            ),
            ("{% call m() %}x{% endcall %}", Some((1, "a call block"))),
            ("{% import \"m\" as m %}", Some((1, "an imported macro"))),
            ("{% from \"m\" import f %}", Some((1, "an imported macro"))),
            ("{% set x %}y{% endset %}", Some((1, "a set block"))),
            ("{% set x | upper %}y{% endset %}", Some((1, "a set block"))),
            (
                "{% block b %}{{ super() }}{% endblock %}",
                Some((1, "super()")),
            ),
            ("{{ self.b() }}", Some((1, "self"))),
            (
                "{% for x in xs recursive %}{{ loop(x.c) }}{% endfor %}",
                Some((1, "a recursive loop")),
            ),
            ("{{ \"%c\"|format(63728) }}", Some((1, "the format filter"))),
            ("\n{{ \"\\uf8f0\" }}", Some((2, "an escape sequence"))),
            ("{{ debug() }}", Some((1, "debug()"))),
            ("a\n\u{f8f1}\n", Some((2, "the sentinel character"))),
        ] {
            assert_eq!(unsure(source), expect, "{source}");
        }
    }

    #[test]
    fn text_gets_a_call_after_its_last_non_blank_character() {
        let (out, lines) = run("a b  \n\n  c\n");
        assert_eq!(
            out,
            "a b{{ 0|__seams_line }}  \n\n  c{{ 1|__seams_line }}\n"
        );
        assert_eq!(lines, [1, 3]);
    }

    #[test]
    fn an_if_on_a_plain_path_is_a_candidate_in_its_branch_only() {
        let (out, _) = run(
            "{% for c in cs %}{% if c.db %}\nx\n{% elif c.other %}\ny\n{% else %}\nz\n{% endif %}\nw\n{% endfor %}\n",
        );
        assert!(out.contains("x{{ 0|__seams_line(c.db, c) }}"), "{out}");
        assert!(out.contains("y{{ 1|__seams_line(c.other, c) }}"), "{out}");
        assert!(out.contains("z{{ 2|__seams_line(c) }}"), "{out}");
        assert!(out.contains("w{{ 3|__seams_line(c) }}"), "{out}");
        let (out, _) = run("{% if a == 1 %}\nx\n{% endif %}\n");
        assert!(out.contains("x{{ 0|__seams_line }}"), "{out}");
    }

    #[test]
    fn a_path_keeps_its_owner_through_filters_without_arguments() {
        assert_eq!(owner_path(" a.b.c|tojson | upper "), Some("a.b"));
        assert_eq!(owner_path("a.b|default(x.y)"), None);
        assert_eq!(owner_path("a.b ~ c"), None);
        assert_eq!(owner_path("a"), None);
    }

    #[test]
    fn a_line_ending_in_an_opening_brace_gets_its_call_before_the_brace() {
        let (out, lines) = run("d = {\n  x = {\n}\n");
        assert_eq!(
            out,
            "d = {{ 0|__seams_line }}{\n  x = {{ 1|__seams_line }}{\n}{{ 2|__seams_line }}\n"
        );
        assert_eq!(lines, [1, 2, 3]);
    }

    #[test]
    fn a_variable_is_wrapped_whole_with_its_owner_and_whitespace_control() {
        let (out, lines) = run("{%- for item in items -%}\n{{- item.title -}}\n{% endfor %}");
        assert_eq!(
            out,
            "{%- for item in items -%}\n{{- 0|__seams_owned((item.title), item) -}}\n{% endfor %}"
        );
        assert_eq!(lines, [2]);
    }

    #[test]
    fn a_tag_spanning_lines_is_not_cut() {
        let (out, lines) = run("x {{\n  a\n}} y\n{% if\n  b %}z{% endif %}\n");
        assert_eq!(
            out,
            "x {{ 0|__seams_value((a), none) }} y{{ 1|__seams_line }}\n{% if\n  b %}z{{ 2|__seams_line(b) }}{% endif %}\n"
        );
        assert_eq!(lines, [1, 3, 5]);
    }

    #[test]
    fn a_line_is_marked_once_per_run_of_text_and_values() {
        let (out, _) = run("<a href=\"{{ u }}\">{{ t }}</a>\n");
        assert_eq!(
            out,
            "<a href=\"{{ 0|__seams_value((u), none) }}\">{{ 1|__seams_value((t), none) }}</a>\n"
        );
        let (out, _) = run("a{% if x %}b{% endif %}\n");
        assert_eq!(
            out,
            "a{{ 0|__seams_line }}{% if x %}b{{ 1|__seams_line(x) }}{% endif %}\n"
        );
    }

    #[test]
    fn a_value_read_off_the_innermost_candidate_is_marked_by_the_last_such_value_on_its_line() {
        let (out, _) = run(concat!(
            "{% for item in items %}\n",
            "<a href=\"{{ item.href }}\">{{ item.title|upper }}</a> {{ page.x }}\n",
            "{{ page.a }}{{ page.b }}{{ item.a }}\n",
            // A comment ends the run; a tag spanning lines is marked, on
            // the line it starts on.
            "{{ item.a }}{# c #}{{ item.b }}{{ item.c\n}}{{ item.d }}\n",
            "{% endfor %}\n",
        ));
        assert_eq!(
            out,
            concat!(
                "{% for item in items %}\n",
                "<a href=\"{{ item.href }}\">{{ 0|__seams_owned((item.title|upper), item) }}</a> {{ 1|__seams_value((page.x), page, item) }}\n",
                "{{ 2|__seams_value((page.a), page, item) }}{{ 3|__seams_value((page.b), page, item) }}{{ 4|__seams_owned((item.a), item) }}\n",
                "{{ 5|__seams_owned((item.a), item) }}{# c #}{{ item.b }}{{ 6|__seams_owned((item.c), item) }}{{ 7|__seams_owned((item.d), item) }}\n",
                "{% endfor %}\n",
            )
        );
    }

    #[test]
    fn includes_record_their_line() {
        let (out, _) = run("{% for c in cs %}\n{% include \"part.html\" %}\n{% endfor %}\n");
        assert_eq!(
            out,
            "{% for c in cs %}\n{% include 0|__seams_include((\"part.html\"), c) %}\n{% endfor %}\n"
        );
    }

    #[test]
    fn raw_blocks_are_split_at_line_ends() {
        let (out, lines) = run("{% raw %}\n{{ a }}\n{% endraw %}\n");
        assert_eq!(
            out,
            "{% raw %}\n{{ a }}{%+ endraw +%}{{ 0|__seams_line }}{% raw +%}\n{% endraw %}\n"
        );
        assert_eq!(lines, [2]);
    }

    #[test]
    fn quotes_do_not_close_tags() {
        let (out, _) = run("{{ \"}}\" }}\n");
        assert_eq!(out, "{{ 0|__seams_value((\"}}\"), none) }}\n");
    }

    #[test]
    fn macro_and_loop_variables_are_candidates_innermost_first() {
        let (out, _) = run(
            "{% macro m(field, x=1) %}{% for k, v in field.items %}t\n{% endfor %}{% endmacro %}",
        );
        assert!(out.contains("0|__seams_line(v, k, field, x)"), "{out}");
    }

    #[test]
    fn a_tag_with_an_escape_before_a_wide_character_is_read_without_panicking() {
        // Found by the template fuzz target: a backslash in a string
        // skipped a byte into `·`, and the closer was looked for there.
        // (tail, where the tag ends): a closed string hides nothing after
        // it; an open one swallows the closer.
        for (tail, closed) in [
            ("\"\\·\" }}", true),
            ("'\\·' }}", true),
            ("\\· }}", true),
            ("\"\\·}} x", false),
        ] {
            let source = format!("{{{{ a{tail}");
            assert_eq!(tag_end(&source, 2, "}}").is_some(), closed, "{source}");
            let _ = crate::TemplateService::new(
                [("t.html".to_owned(), format!("<p>{source}</p>\n"))],
                crate::Syntax::Jinja,
            );
        }
        let fuzzed = include_str!(
            "../../../fuzz/crashes/template/crash-784e4b8fd4a664397fb71ab1991d666a4bbf6746"
        );
        for syntax in [crate::Syntax::Jinja, crate::Syntax::Brackets] {
            let _ = crate::TemplateService::new([("t.html".to_owned(), fuzzed.to_owned())], syntax);
        }
    }
}
