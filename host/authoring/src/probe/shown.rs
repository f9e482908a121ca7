//! How a line shows the model's texts, and whether a line printed on a
//! changed model follows the change.
//!
//! A text is held by a literal of an element or by an element's IRI (its
//! local name), and may be printed as written or transformed: lower- or
//! upper-cased, capitalised, in snake, kebab, Pascal or camel case, its
//! words run together or spaced, followed by a plural `s`. A probe gives
//! some holders new texts and keeps the others. A line on the changed
//! model follows when it reads as the old line with some of the places
//! that showed a holder's text (a *slot*, starting and ending at a word
//! boundary) showing, in the same form, that holder's new text; where
//! several holders' texts met at one place, any of them may fill it. The
//! one thing a line may not do is show, where a changed text stood, that
//! text again when no holder on the changed model has it in any form:
//! that is the proof that no generator reading the model printed it.

use std::collections::BTreeSet;

use aho_corasick::{AhoCorasick, MatchKind};

/// Where a text of the model is held.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holder {
    /// The element.
    pub element: String,
    /// The property whose literal holds it; `None` for the local name of
    /// the element's IRI.
    pub property: Option<String>,
    /// The text.
    pub text: String,
}

/// A holder and its text on the changed model: `None` when it is kept.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// The holder, with its old text.
    pub holder: Holder,
    /// Its new text, if it changed.
    pub new: Option<String>,
}

/// The words of `value`: its runs of letters and digits, split again where
/// a lower-case letter or digit meets an upper-case one.
pub fn words(value: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last: Option<char> = None;
    for c in value.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        } else {
            if c.is_uppercase()
                && last.is_some_and(|l| l.is_lowercase() || l.is_numeric())
                && !word.is_empty()
            {
                words.push(std::mem::take(&mut word));
            }
            word.push(c);
        }
        last = Some(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect::<String>()
    })
}

/// The forms of `value`, always the same number in the same order, so
/// that an old value's forms pair with a new one's.
fn transforms(value: &str) -> [String; 11] {
    let words = words(value);
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let title: Vec<String> = lower.iter().map(|w| capitalised(w)).collect();
    let camel = match title.split_first() {
        Some((_, rest)) => lower.first().cloned().unwrap_or_default() + &rest.concat(),
        None => String::new(),
    };
    [
        value.to_owned(),
        value.to_lowercase(),
        value.to_uppercase(),
        capitalised(value),
        lower.join("_"),
        lower.join("-"),
        lower.join("_").to_uppercase(),
        title.concat(),
        camel,
        lower.concat(),
        lower.join(" "),
    ]
}

/// The words of `value` ([`words`]), lower-cased.
pub fn lower_words(value: &str) -> Vec<String> {
    words(value).iter().map(|w| w.to_lowercase()).collect()
}

/// The literal text of a template line: its tags (`{{ }}`, `{% %}`,
/// `{# #}` and their bracket forms) each read as a space.
pub fn literal_text(line: &str) -> String {
    const TAGS: [(&str, &str); 6] = [
        ("{{", "}}"),
        ("{%", "%}"),
        ("{#", "#}"),
        ("[[", "]]"),
        ("[%", "%]"),
        ("[#", "#]"),
    ];
    // One pass: a tag's opening is looked for only where the scan is, so a
    // line of many tags (a generator's template is untrusted) costs its
    // length, not its length times its tags.
    let mut out = String::with_capacity(line.len());
    let (bytes, mut at, mut copied) = (line.as_bytes(), 0, 0);
    while at < bytes.len() {
        let Some((open, close)) = TAGS
            .iter()
            .find(|(open, _)| bytes[at..].starts_with(open.as_bytes()))
        else {
            at += 1;
            continue;
        };
        // The tags are ASCII: `at` is a character boundary.
        out.push_str(&line[copied..at]);
        out.push(' ');
        let inside = at + open.len();
        match line[inside..].find(close) {
            Some(end) => at = inside + end + close.len(),
            None => return out,
        }
        copied = at;
    }
    out.push_str(&line[copied..]);
    out
}

/// Whether `text` shows `word` as it is, at word boundaries.
pub fn has_word(text: &str, word: &str) -> bool {
    !word.is_empty()
        && text.match_indices(word).any(|(at, _)| {
            let first = word.chars().next().unwrap_or(' ');
            let last = word.chars().next_back().unwrap_or(' ');
            starts_word(text[..at].chars().next_back(), first)
                && ends_word(last, &text[at + word.len()..])
        })
}

/// Whether a form may start after `before` (a word boundary, or a case
/// change into an upper-case letter).
fn starts_word(before: Option<char>, first: char) -> bool {
    match before {
        None => true,
        Some(b) if !b.is_alphanumeric() => true,
        Some(b) => (b.is_lowercase() || b.is_numeric()) && first.is_uppercase(),
    }
}

/// Whether a form ending in `last` may end before `rest`: a word boundary,
/// a case change, or a plural `s` or `es` that ends the word.
fn ends_word(last: char, rest: &str) -> bool {
    let bounded = |rest: &str| match rest.chars().next() {
        None => true,
        Some(c) if !c.is_alphanumeric() => true,
        Some(c) => (last.is_lowercase() || last.is_numeric()) && c.is_uppercase(),
    };
    bounded(rest)
        || ["s", "es"]
            .iter()
            .any(|plural| rest.strip_prefix(plural).is_some_and(bounded))
}

/// One form of the old texts, as a line may show it.
#[derive(Debug)]
struct Form {
    /// The text of the form on the old model.
    old: String,
    /// The same form of the new text of each changed holder that had it.
    fills: Vec<String>,
    /// The changes that gave it, for the message.
    changes: Vec<usize>,
    /// The changes whose holder's text has this form, changed or kept.
    of: Vec<usize>,
    /// Whether a kept holder still has it: then it may stay as it was.
    kept: bool,
}

/// Why a line does not follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfollowed {
    /// The line with each changed text in its likeliest new form.
    pub expected: String,
    /// A changed text the line still shows, though no holder has it.
    pub still: Option<String>,
    /// What became of that text's holders: (holder, new text).
    pub became: Vec<(Holder, String)>,
}

/// The forms of a probe's changes, found in lines at once.
#[derive(Debug)]
pub struct Reading {
    changes: Vec<Change>,
    forms: Vec<Form>,
    finder: Option<AhoCorasick>,
}

impl Reading {
    /// The reading of `changes`: each holder's forms, every one of a
    /// changed holder paired with the same form of its new text; a form
    /// in `fixed` (a word of the output's format) may stay as it was.
    pub fn new(changes: Vec<Change>, fixed: &[String]) -> Reading {
        let mut forms: Vec<Form> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (index, change) in changes.iter().enumerate() {
            let old = transforms(&change.holder.text);
            let new = change.new.as_deref().map(transforms);
            for (k, old_form) in old.iter().enumerate() {
                if old_form.is_empty() {
                    continue;
                }
                let slot = *at.entry(old_form.clone()).or_insert_with(|| {
                    forms.push(Form {
                        old: old_form.clone(),
                        fills: Vec::new(),
                        changes: Vec::new(),
                        of: Vec::new(),
                        kept: false,
                    });
                    forms.len() - 1
                });
                let form = &mut forms[slot];
                if !form.of.contains(&index) {
                    form.of.push(index);
                }
                match &new {
                    Some(new) => {
                        if !form.fills.contains(&new[k]) {
                            form.fills.push(new[k].clone());
                        }
                        if !form.changes.contains(&index) {
                            form.changes.push(index);
                        }
                    }
                    None => form.kept = true,
                }
            }
        }
        for form in &mut forms {
            form.kept |= fixed.contains(&form.old);
        }
        let finder = (!forms.is_empty())
            .then(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(forms.iter().map(|f| f.old.as_str()))
                    .ok()
            })
            .flatten();
        Reading {
            changes,
            forms,
            finder,
        }
    }

    /// For each byte of `line`, the forms that start there and end there
    /// at word boundaries.
    fn occurrences(&self, line: &str) -> Vec<Vec<usize>> {
        let mut found = vec![Vec::new(); line.len() + 1];
        let Some(finder) = &self.finder else {
            return found;
        };
        for m in finder.find_overlapping_iter(line) {
            let (start, end) = (m.start(), m.end());
            let before = line[..start].chars().next_back();
            let (Some(first), Some(last)) = (
                line[start..end].chars().next(),
                line[start..end].chars().next_back(),
            ) else {
                continue;
            };
            if starts_word(before, first) && ends_word(last, &line[end..]) {
                found[start].push(m.pattern().as_usize());
            }
        }
        for starts in &mut found {
            // Longest first: the likeliest reading, for the message.
            starts.sort_by_key(|&p| std::cmp::Reverse(self.forms[p].old.len()));
        }
        found
    }

    /// The changed texts `line` shows (as forms) where no holder of them
    /// is `near` the line: the words of a format that a model text
    /// happens to spell (a key `"submit"` on every form's line, the
    /// submit label of one of them "Submit").
    pub fn unheld(&self, line: &str, near: impl Fn(&str) -> bool) -> Vec<String> {
        self.occurrences(line)
            .into_iter()
            .flatten()
            .map(|p| &self.forms[p])
            .filter(|form| {
                !form.kept
                    && !form
                        .changes
                        .iter()
                        .any(|&c| near(&self.changes[c].holder.element))
            })
            .map(|form| form.old.clone())
            .collect()
    }

    /// The changes (by index) whose holders' texts `line` shows, in some
    /// form.
    pub fn shown(&self, line: &str) -> BTreeSet<usize> {
        self.occurrences(line)
            .into_iter()
            .flatten()
            .flat_map(|p| self.forms[p].of.iter().copied())
            .collect()
    }

    /// Whether `line` shows any of the texts in some form.
    pub fn mentions(&self, line: &str) -> bool {
        self.occurrences(line).iter().any(|o| !o.is_empty())
    }

    /// Whether `new` follows `old`; else why not.
    #[cfg(test)]
    pub fn follows(&self, old: &str, new: &str) -> Result<(), Unfollowed> {
        self.follows_keeping(old, new, &|_| false)
    }

    /// [`Reading::follows`], where an old text may also stay as it was
    /// when `may_stay` says so of it (a word the template wrote).
    pub fn follows_keeping(
        &self,
        old: &str,
        new: &str,
        may_stay: &dyn Fn(&str) -> bool,
    ) -> Result<(), Unfollowed> {
        let stays: Vec<bool> = self
            .forms
            .iter()
            .map(|f| f.kept || may_stay(&f.old))
            .collect();
        let kept = |p: usize| stays[p];
        let found = self.occurrences(old);
        // reach[i]: the bytes j of `new` that the first i bytes of `old`
        // may have become, each with where the text copied as it was up
        // to i starts (the latest such start: it allows the most). Every
        // step moves on in `old`, so one pass in order visits each (i, j)
        // once.
        let mut reach: Vec<Vec<(usize, usize)>> = vec![Vec::new(); old.len() + 1];
        reach[0].push((0, 0));
        // Where texts end, and the latest start of a changed text no
        // holder keeps that ends there: a copy may not run over the whole
        // of one ("page_" kept before a relabelled "loans" is no copy of
        // the IRI "page_loans").
        let mut ends = vec![false; old.len() + 1];
        let mut gone_from: Vec<Option<usize>> = vec![None; old.len() + 1];
        for (i, starts) in found.iter().enumerate() {
            for &p in starts {
                let end = i + self.forms[p].old.len();
                ends[end] = true;
                if !kept(p) {
                    gone_from[end] = gone_from[end].max(Some(i));
                }
            }
        }
        for i in 0..old.len() {
            let mut states = std::mem::take(&mut reach[i]);
            if states.is_empty() {
                continue;
            }
            // Per j, the latest copy start.
            states.sort_unstable_by_key(|&(j, from)| (j, std::cmp::Reverse(from)));
            states.dedup_by_key(|s| s.0);
            let c = old[i..].chars().next().unwrap_or_default();
            let step = c.len_utf8();
            for &(j, from) in &states {
                let rest = &new[j..];
                for &p in &found[i] {
                    let form = &self.forms[p];
                    let end = i + form.old.len();
                    if kept(p) && rest.starts_with(form.old.as_str()) {
                        reach[end].push((j + form.old.len(), end));
                    }
                    for fill in &form.fills {
                        if rest.starts_with(fill.as_str()) {
                            reach[end].push((j + fill.len(), end));
                        }
                    }
                }
                // Text as it was, but never the whole of a changed text
                // no holder keeps.
                if rest.starts_with(c) && gone_from[i + step].is_none_or(|s| s < from) {
                    reach[i + step].push((j + step, from));
                }
                // A quote next to a text may go when the new text needs
                // none (SQL quotes "order", not "relabel03").
                if matches!(c, '"' | '\'' | '`')
                    && (ends[i] || found.get(i + 1).is_some_and(|f| !f.is_empty()))
                {
                    reach[i + 1].push((j, i + 1));
                }
            }
        }
        if reach[old.len()].iter().any(|&(j, _)| j == new.len()) {
            return Ok(());
        }
        let new_found = self.occurrences(new);
        let still = (0..old.len()).find_map(|i| {
            found[i].iter().find_map(|&p| {
                (!kept(p) && new_found.iter().flatten().any(|&q| q == p)).then_some(p)
            })
        });
        Err(Unfollowed {
            expected: self.expected(old, &found),
            still: still.map(|p| self.forms[p].old.clone()),
            became: still
                .map(|p| {
                    self.forms[p]
                        .changes
                        .iter()
                        .filter_map(|&c| {
                            let change = &self.changes[c];
                            Some((change.holder.clone(), change.new.clone()?))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// `old` with each changed text in its likeliest new form: the
    /// longest form at each place, the first holder's new text.
    fn expected(&self, old: &str, found: &[Vec<usize>]) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < old.len() {
            match found[i].first().map(|&p| &self.forms[p]) {
                Some(form) => {
                    out.push_str(match form.fills.first() {
                        Some(fill) if !form.kept => fill,
                        _ => &form.old,
                    });
                    i += form.old.len();
                }
                None => {
                    let c = old[i..].chars().next().unwrap_or_default();
                    out.push(c);
                    i += c.len_utf8().max(1);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(text: &str) -> Holder {
        Holder {
            element: format!("urn:{text}"),
            property: Some("urn:p".into()),
            text: text.into(),
        }
    }

    fn changed(old: &str, new: &str) -> Change {
        Change {
            holder: holder(old),
            new: Some(new.into()),
        }
    }

    fn kept(text: &str) -> Change {
        Change {
            holder: holder(text),
            new: None,
        }
    }

    fn follows(old: &str, new: &str, changes: &[Change]) -> bool {
        Reading::new(changes.to_vec(), &[])
            .follows(old, new)
            .is_ok()
    }

    #[test]
    fn a_copy_may_run_into_a_changed_text_but_not_over_the_whole_of_one() {
        // The IRI `page_loans` and the path "loans" both changed: a
        // generator that prints "page_" and the path follows.
        let changes = [
            Change {
                holder: Holder {
                    element: "urn:page_loans".into(),
                    property: None,
                    text: "page_loans".into(),
                },
                new: Some("relabel05".into()),
            },
            changed("loans", "relabel07"),
        ];
        let old = "def page_loans() -> FileResponse:";
        assert!(follows(
            old,
            "def page_relabel07() -> FileResponse:",
            &changes
        ));
        assert!(follows(old, "def relabel05() -> FileResponse:", &changes));
        assert!(!follows(old, old, &changes));
        // A quote the old text needed may go (a keyword quoted in SQL).
        let order = [changed("order", "relabel15")];
        assert!(follows(
            "CREATE TABLE \"order\" (",
            "CREATE TABLE relabel15 (",
            &order
        ));
        assert!(!follows(
            "CREATE TABLE \"order\" (",
            "CREATE TABLE (",
            &order
        ));
        assert!(!follows(
            "CREATE TABLE \"order\" (",
            "CREATE TABLE \"order\" (",
            &order
        ));
        let many = "a{{ x }}".repeat(100_000);
        assert_eq!(literal_text(&many), "a ".repeat(100_000));
        assert_eq!(literal_text("é[[ x ]]ü {% open"), "é ü  ");
        assert!(has_word("request: Request", "Request"));
        assert!(!has_word("Requests: x", "Request s"));
        assert!(!has_word("ARequest", "Request"));
    }

    #[test]
    fn words_split_on_separators_and_case_changes() {
        assert_eq!(words("ExpenseReport"), ["Expense", "Report"]);
        assert_eq!(words("spent_on date"), ["spent", "on", "date"]);
        assert_eq!(words("Value07"), ["Value07"]);
        assert_eq!(
            transforms("Expense report")[4..8],
            [
                "expense_report",
                "expense-report",
                "EXPENSE_REPORT",
                "ExpenseReport"
            ]
        );
        assert_eq!(lower_words("loan_status_form"), ["loan", "status", "form"]);
        assert_eq!(lower_words("Request loan"), ["request", "loan"]);
    }

    #[test]
    fn a_line_follows_when_each_changed_text_shows_a_new_text_of_one_of_its_holders() {
        // A label equal to a name: both change, to distinct texts, and
        // either may stand where "Loan" stood.
        let loan = [changed("Loan", "Relabel01"), changed("Loan", "Relabel02")];
        let cases: &[(&str, &str, &[Change], bool)] = &[
            ("<h1>Loan</h1>", "<h1>Relabel01</h1>", &loan, true),
            ("<h1>Loan</h1>", "<h1>Relabel02</h1>", &loan, true),
            ("class Loan:", "class Relabel02:", &loan, true),
            ("loans = []", "relabel01s = []", &loan, true),
            ("<h1>Loan</h1>", "<h1>Loan</h1>", &loan, false),
            // Snake case of a value inside an IRI's local name: the IRI
            // changed too, so its text may stand there...
            (
                "\"form\": \"loan_status_form\"",
                "\"form\": \"value03\"",
                &[
                    changed("Loan status", "Value01"),
                    changed("loan_status_form", "value03"),
                ],
                true,
            ),
            // ...or the label's, the rest kept.
            (
                "\"form\": \"loan_status_form\"",
                "\"form\": \"value01_form\"",
                &[
                    changed("Loan status", "Value01"),
                    changed("loan_status_form", "value03"),
                ],
                true,
            ),
            (
                "\"form\": \"loan_status_form\"",
                "\"form\": \"loan_status_form\"",
                &[
                    changed("Loan status", "Value01"),
                    changed("loan_status_form", "value03"),
                ],
                false,
            ),
            // A value inside a longer one: a title made of the submit
            // label and fixed words follows as well as one read whole.
            (
                "<h2>Start a conversation</h2>",
                "<h2>Value02</h2>",
                &[
                    changed("Start", "Value01"),
                    changed("Start a conversation", "Value02"),
                ],
                true,
            ),
            (
                "<h2>Start a conversation</h2>",
                "<h2>Value01 a conversation</h2>",
                &[
                    changed("Start", "Value01"),
                    changed("Start a conversation", "Value02"),
                ],
                true,
            ),
            // A text a kept holder still has may stay, in any form.
            (
                "id=\"conversations\"",
                "id=\"conversations\"",
                &[changed("Conversation", "Relabel01"), kept("Conversations")],
                true,
            ),
            // Inside a longer word a text is not shown.
            ("textarea", "textarea", &[changed("text", "Value01")], true),
            (
                "type=\"text\"",
                "type=\"text\"",
                &[changed("text", "Value01")],
                false,
            ),
            // Other text must not change.
            ("<li>A</li>", "<li>A</li>!", &[], false),
            ("<li>A</li>", "<li>A</li>", &[], true),
        ];
        for (old, new, changes, expected) in cases {
            assert_eq!(
                follows(old, new, changes),
                *expected,
                "{old:?} -> {new:?} with {changes:?}"
            );
        }
    }

    #[test]
    fn a_word_of_the_format_that_a_text_spells_may_stay() {
        let changes = vec![changed("Submit", "Value01")];
        let reading = Reading::new(changes.clone(), &[]);
        let line = "{\"form\": \"f\", \"submit\": \"Save\"}";
        // The line of a form whose label is "Save": no holder of
        // "Submit" is near it, so "submit" is a word of the format.
        assert_eq!(reading.unheld(line, |e| e == "urn:f"), ["submit"]);
        assert!(reading.unheld(line, |e| e == "urn:Submit").is_empty());
        assert!(reading.follows(line, line).is_err());
        assert!(
            Reading::new(changes, &["submit".into()])
                .follows(line, line)
                .is_ok()
        );
    }

    #[test]
    fn a_refusal_names_the_text_no_holder_has_any_more() {
        let reading = Reading::new(vec![changed("Loan", "Relabel01"), kept("Start")], &[]);
        let why = reading
            .follows("<b>Loan</b> Start", "<b>Loan</b> Start")
            .unwrap_err();
        assert_eq!(why.expected, "<b>Relabel01</b> Start");
        assert_eq!(why.still.as_deref(), Some("Loan"));
        assert_eq!(why.became, [(holder("Loan"), "Relabel01".to_owned())]);
        let why = reading
            .follows("<b>Loan</b>", "<i>Relabel01</i>")
            .unwrap_err();
        assert_eq!(why.still, None);
    }

    #[test]
    fn a_long_line_costs_its_length_not_its_length_squared() {
        let old = "Loan ".repeat(20_000);
        let new = "Relabel01 ".repeat(20_000);
        let reading = Reading::new(vec![changed("Loan", "Relabel01")], &[]);
        assert!(reading.follows(&old, &new).is_ok());
        assert!(reading.follows(&old, &old).is_err());
    }
}
