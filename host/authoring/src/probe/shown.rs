//! How a line shows the model's values, and whether a line printed on a
//! changed model shows the new values where the old line showed the old
//! ones, every other character kept.
//!
//! A value may be printed as written or transformed: lower- or
//! upper-cased, capitalised, in snake, kebab, Pascal or camel case, its
//! words run together or spaced, followed by a plural `s`. The old line is
//! read left to right; where a form of a value starts at a word boundary,
//! the longest one there is a *slot*, and the new line must show, in that
//! place, the same form of a new value that an old value of the slot's
//! text had. A kept value counts only as written: a changed value's form
//! that a kept value also spells (a path that is the lower-cased label)
//! must then change, or a line that copies the kept value would pass.

use std::collections::HashSet;

/// A value of an element on the changed model: `old` became `new`; equal
/// when the value was kept.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Swap {
    /// The value on the model the reference was drawn from.
    pub old: String,
    /// The value on the changed model.
    pub new: String,
}

impl Swap {
    /// A value the change keeps.
    pub fn kept(value: &str) -> Swap {
        Swap {
            old: value.to_owned(),
            new: value.to_owned(),
        }
    }
}

/// The (old form, new form) pairs of `swaps`: every form of a changed
/// value, a kept value only as written unless `loose`; longest old form
/// first.
pub fn forms(swaps: &[&Swap], loose: bool) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for swap in swaps {
        if swap.old.is_empty() {
            continue;
        }
        if swap.old == swap.new && !loose {
            pairs.push((swap.old.clone(), swap.new.clone()));
        } else {
            pairs.extend(transforms(&swap.old).into_iter().zip(transforms(&swap.new)));
        }
    }
    pairs.retain(|(old, _)| !old.is_empty());
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    pairs.dedup();
    pairs
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

/// A part of an old line: text as it was, or a value shown there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Characters that must stay as they are.
    Text(String),
    /// A value's form: what the old line shows, and what the new one may.
    Slot {
        /// The old line's text.
        old: String,
        /// The forms of the new values that may stand in its place: the
        /// old text first when a kept value allows it.
        new: Vec<String>,
    },
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

/// `line` read as text and slots for `forms` (from [`forms`]).
pub fn pattern(line: &str, forms: &[(String, String)]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut before: Option<char> = None;
    let mut at = 0;
    while let Some(c) = line[at..].chars().next() {
        let rest = &line[at..];
        let found = if starts_word(before, c) {
            forms.iter().find(|(old, _)| {
                rest.starts_with(old.as_str())
                    && old
                        .chars()
                        .next_back()
                        .is_some_and(|last| ends_word(last, &rest[old.len()..]))
            })
        } else {
            None
        };
        match found {
            Some((old, _)) => {
                // The text kept first, when a kept value allows it: it is
                // what the message shows.
                let mut new: Vec<String> = forms
                    .iter()
                    .filter(|(o, _)| o == old)
                    .map(|(_, n)| n.clone())
                    .collect();
                new.sort_by_key(|n| n != old);
                new.dedup();
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Slot {
                    old: old.clone(),
                    new,
                });
                at += old.len();
                before = old.chars().next_back();
            }
            None => {
                text.push(c);
                at += c.len_utf8();
                before = Some(c);
            }
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    pieces
}

/// Whether `line` reads as `pieces` with each slot filled by one of its
/// new forms.
pub fn shows(pieces: &[Piece], line: &str) -> bool {
    // (piece, byte) pairs already known not to match: each is tried once,
    // so a line costs at most pieces x bytes x forms.
    fn go(
        pieces: &[Piece],
        i: usize,
        line: &str,
        at: usize,
        failed: &mut HashSet<(usize, usize)>,
    ) -> bool {
        let Some(piece) = pieces.get(i) else {
            return at == line.len();
        };
        if failed.contains(&(i, at)) {
            return false;
        }
        let rest = &line[at..];
        let matched = match piece {
            Piece::Text(text) => {
                rest.starts_with(text.as_str()) && go(pieces, i + 1, line, at + text.len(), failed)
            }
            Piece::Slot { new, .. } => new.iter().any(|n| {
                rest.starts_with(n.as_str()) && go(pieces, i + 1, line, at + n.len(), failed)
            }),
        };
        if !matched {
            failed.insert((i, at));
        }
        matched
    }
    go(pieces, 0, line, 0, &mut HashSet::new())
}

/// The line `pieces` expect, each slot filled with its likeliest form.
pub fn expected(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(text) => text.as_str(),
            Piece::Slot { old, new } => new.first().unwrap_or(old).as_str(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swap(old: &str, new: &str) -> Swap {
        Swap {
            old: old.into(),
            new: new.into(),
        }
    }

    fn follows(old: &str, new: &str, swaps: &[Swap]) -> bool {
        let swaps: Vec<&Swap> = swaps.iter().collect();
        shows(&pattern(old, &forms(&swaps, false)), new)
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
    }

    #[test]
    fn a_line_follows_when_each_shown_value_changed_in_the_form_it_had() {
        let name = swap("Conversation", "Value07");
        let relation = swap("conversation", "Value03");
        let cases: &[(&str, &str, &[Swap], bool)] = &[
            // The linked entity's name, lower-cased: either value may fill it.
            (
                "REFERENCES conversation(id)",
                "REFERENCES value07(id)",
                &[name.clone(), relation.clone()],
                true,
            ),
            (
                "REFERENCES conversation(id)",
                "REFERENCES Value03(id)",
                &[name.clone(), relation.clone()],
                true,
            ),
            (
                "REFERENCES conversation(id)",
                "REFERENCES conversation(id)",
                &[name.clone(), relation.clone()],
                false,
            ),
            // Snake case and plural.
            (
                "expense_reports = []",
                "value01s = []",
                &[swap("ExpenseReport", "Value01")],
                true,
            ),
            (
                "class ExpenseReportCreate:",
                "class Value01Create:",
                &[swap("ExpenseReport", "Value01")],
                true,
            ),
            // A kept value longer than the changed one holds its text.
            (
                "<h2>Start a conversation</h2>",
                "<h2>Start a conversation</h2>",
                &[swap("Start", "Value02"), Swap::kept("Start a conversation")],
                true,
            ),
            (
                "<button>Start</button>",
                "<button>Value02</button>",
                &[swap("Start", "Value02"), Swap::kept("Start a conversation")],
                true,
            ),
            (
                "<button>Start</button>",
                "<button>Start</button>",
                &[swap("Start", "Value02"), Swap::kept("Start a conversation")],
                false,
            ),
            // A kept value's transformed form does not excuse a changed
            // value written as it is: a path copied from the label.
            (
                "href=\"conversations.html\"",
                "href=\"conversations.html\"",
                &[
                    swap("conversations", "Value01"),
                    Swap::kept("Conversations"),
                ],
                false,
            ),
            (
                "href=\"conversations.html\"",
                "href=\"Value01.html\"",
                &[
                    swap("conversations", "Value01"),
                    Swap::kept("Conversations"),
                ],
                true,
            ),
            // ...but a kept value written as it is may stay.
            (
                "id=\"conversations\"",
                "id=\"conversations\"",
                &[
                    swap("Conversations", "Relabel01"),
                    Swap::kept("conversations"),
                ],
                true,
            ),
            // Inside a longer word a value is not shown.
            ("textarea", "textarea", &[swap("text", "Value01")], true),
            (
                "type=\"text\"",
                "type=\"text\"",
                &[swap("text", "Value01")],
                false,
            ),
            // Other text must not change.
            ("<li>A</li>", "<li>A</li>!", &[], false),
        ];
        for (old, new, swaps, expected) in cases {
            assert_eq!(
                follows(old, new, swaps),
                *expected,
                "{old:?} -> {new:?} with {swaps:?}"
            );
        }
        // Loose: a class named after a name that spells the label.
        let swaps = [swap("Status", "Relabel01"), Swap::kept("status")];
        let refs: Vec<&Swap> = swaps.iter().collect();
        assert!(shows(
            &pattern("class Status(Enum):", &forms(&refs, true)),
            "class Status(Enum):"
        ));
        assert!(!shows(
            &pattern("class Status(Enum):", &forms(&refs, false)),
            "class Status(Enum):"
        ));
    }

    #[test]
    fn the_expected_line_keeps_what_a_kept_value_allows() {
        let swaps = [swap("Start", "Value02"), Swap::kept("Start")];
        let refs: Vec<&Swap> = swaps.iter().collect();
        let pieces = pattern("<b>Start</b>", &forms(&refs, false));
        assert_eq!(expected(&pieces), "<b>Start</b>");
        assert!(shows(&pieces, "<b>Value02</b>"));
        let swaps = [swap("Start", "Value02")];
        let refs: Vec<&Swap> = swaps.iter().collect();
        let pieces = pattern("<b>Start</b>", &forms(&refs, false));
        assert_eq!(expected(&pieces), "<b>Value02</b>");
        assert!(!shows(&pieces, "<b>Start</b>"));
    }
}
