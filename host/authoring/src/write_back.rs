//! Writing a hand edit of one output line back into the model (ADR-0019's
//! T4), the first step: which one model literal, among the values of the
//! elements the line is traced to, explains the edit when it is given a
//! new value. The rest of the round trip (regenerating with that one-triple
//! patch and accepting it only when the edited line comes back exactly,
//! then rewriting the literal in its file with
//! [`seams_model::written::rewrite`]) builds on it.

/// A literal of the model: (element, property, value).
pub type Literal = (String, String, String);

/// The one change of the model that explains an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The element.
    pub element: String,
    /// The property.
    pub property: String,
    /// Its value now.
    pub old: String,
    /// The value that would print the edited line.
    pub new: String,
}

/// Why no single literal explains an edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unexplained {
    /// The line was not changed.
    #[error("the line is as generated: there is nothing to write back")]
    Unchanged,
    /// No value printed on the line covers the change.
    #[error(
        "no model value printed on this line covers the change: edit the model, or the template, by hand"
    )]
    Nothing,
    /// Several values would explain it.
    #[error("several model values would explain the edit: {}; edit the one you mean in the model", list(.0))]
    Several(Vec<Literal>),
    /// The change covers parts of several values.
    #[error("the edit spans several model values ({}): change one at a time", list(.0))]
    SpansSeveral(Vec<Literal>),
}

fn list(literals: &[Literal]) -> String {
    literals
        .iter()
        .map(|(e, p, v)| format!("<{e}> <{p}> {v:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one literal among `candidates` (the values of the elements the line
/// is traced to) whose new value turns `generated` into `edited`.
///
/// # Errors
///
/// [`Unexplained`], saying why.
pub fn explain(
    generated: &str,
    edited: &str,
    candidates: &[Literal],
) -> Result<Patch, Unexplained> {
    if generated == edited {
        return Err(Unexplained::Unchanged);
    }
    let g: Vec<char> = generated.chars().collect();
    let e: Vec<char> = edited.chars().collect();
    let prefix = g.iter().zip(&e).take_while(|(a, b)| a == b).count();
    let room = g.len().min(e.len()) - prefix;
    let suffix = g
        .iter()
        .rev()
        .zip(e.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    // The change: g[prefix..g.len() - suffix] became e[prefix..e.len() - suffix].
    let (from, to) = (prefix, g.len() - suffix);
    let grown = e.len() as isize - g.len() as isize;
    let mut patches: Vec<Patch> = Vec::new();
    let mut touched: Vec<Literal> = Vec::new();
    for (element, property, value) in candidates {
        let v: Vec<char> = value.chars().collect();
        if v.is_empty() || v.len() > g.len() {
            continue;
        }
        for start in 0..=g.len() - v.len() {
            if g[start..start + v.len()] != v[..] {
                continue;
            }
            let end = start + v.len();
            // Covers the whole change: its new value is what the edit left
            // between the unchanged text around it.
            if start <= from && end >= to {
                let new_end = (end as isize + grown) as usize;
                let new: String = e[start..new_end].iter().collect();
                let patch = Patch {
                    element: element.clone(),
                    property: property.clone(),
                    old: value.clone(),
                    new,
                };
                if !patches.contains(&patch) {
                    patches.push(patch);
                }
            } else if start < to.max(from + 1) && end > from {
                let literal = (element.clone(), property.clone(), value.clone());
                if !touched.contains(&literal) {
                    touched.push(literal);
                }
            }
        }
    }
    match patches.len() {
        1 => Ok(patches.remove(0)),
        0 if touched.len() > 1 => Err(Unexplained::SpansSeveral(touched)),
        0 => Err(Unexplained::Nothing),
        _ => Err(Unexplained::Several(
            patches
                .into_iter()
                .map(|p| (p.element, p.property, p.old))
                .collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (generated line, edited line, candidates, what explains it).
    type Case<'a> = (&'a str, &'a str, &'a [Literal], Result<Patch, Unexplained>);

    fn lit(e: &str, p: &str, v: &str) -> Literal {
        (e.into(), p.into(), v.into())
    }

    #[test]
    fn each_edit_is_explained_by_one_literal_or_refused_saying_why() {
        let title = lit("urn:app", "label", "Chat");
        let path = lit("urn:page", "path", "thread");
        let page = lit("urn:page", "label", "Thread");
        let same = lit("urn:other", "label", "Chat");
        let candidates = [title.clone(), path.clone(), page.clone()];
        let accented = [lit("urn:app", "label", "Chat")];
        let twins = [title.clone(), same.clone()];
        let patch = |l: &Literal, new: &str| Patch {
            element: l.0.clone(),
            property: l.1.clone(),
            old: l.2.clone(),
            new: new.into(),
        };
        let cases: Vec<Case<'_>> = vec![
            // A word replaced, grown, shrunk, emptied.
            (
                "<h1>Chat</h1>",
                "<h1>Talk</h1>",
                &candidates,
                Ok(patch(&title, "Talk")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1>Chat room</h1>",
                &candidates,
                Ok(patch(&title, "Chat room")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1>Ch</h1>",
                &candidates,
                Ok(patch(&title, "Ch")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1></h1>",
                &candidates,
                Ok(patch(&title, "")),
            ),
            // Inside a longer line, the right one of two values.
            (
                "<a href=\"thread.html\">Thread</a>",
                "<a href=\"thread.html\">Discussion</a>",
                &candidates,
                Ok(patch(&page, "Discussion")),
            ),
            (
                "<a href=\"thread.html\">Thread</a>",
                "<a href=\"threads.html\">Thread</a>",
                &candidates,
                Ok(patch(&path, "threads")),
            ),
            // Non-ASCII text around and in the change.
            (
                "<h1>Chat · é</h1>",
                "<h1>Châteaux · é</h1>",
                &accented,
                Ok(patch(&title, "Châteaux")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1>Chat</h1>",
                &candidates,
                Err(Unexplained::Unchanged),
            ),
            // Fixed text changed: no value covers it.
            (
                "<h1>Chat</h1>",
                "<h2>Chat</h1>",
                &candidates,
                Err(Unexplained::Nothing),
            ),
            // Two elements print the same value on the line.
            (
                "<h1>Chat</h1>",
                "<h1>Talk</h1>",
                &twins,
                Err(Unexplained::Several(vec![title.clone(), same.clone()])),
            ),
            // One edit across two values.
            (
                "<a href=\"thread.html\">Thread</a>",
                "<a href=\"x.html\">Y</a>",
                &candidates,
                Err(Unexplained::SpansSeveral(vec![path.clone(), page.clone()])),
            ),
        ];
        for (generated, edited, candidates, expected) in cases {
            assert_eq!(
                explain(generated, edited, candidates),
                expected,
                "{generated} -> {edited}"
            );
        }
    }

    #[test]
    fn refusals_name_the_values() {
        let text =
            Unexplained::Several(vec![lit("urn:a", "urn:p", "X"), lit("urn:b", "urn:p", "X")])
                .to_string();
        assert!(
            text.contains("<urn:a> <urn:p> \"X\", <urn:b> <urn:p> \"X\""),
            "{text}"
        );
    }
}
