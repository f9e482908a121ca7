//! The benchmark's models, made from the examples: k renamed copies of the
//! expense example's pages, lists, forms and entities under one
//! application; the chat example beside many unrelated triples; and the
//! chat example beside many blank nodes.

use std::fmt::Write;
use std::io::Write as _;
use std::path::Path;

/// One model to generate from, as files to write into a project.
pub struct Case {
    /// How the table names it.
    pub name: String,
    /// Copies of the expense example, when it is one of those.
    pub copies: Option<usize>,
    /// `(file name, content)`, in `[model] files` order.
    files: Vec<(String, Content)>,
}

/// A model file's content: large ones are written as they are made, so
/// that the benchmark's own peak memory (which every child it starts
/// inherits into its count) stays small.
enum Content {
    Text(String),
    Unrelated(usize),
    BlankNodes(usize),
}

impl Case {
    /// Writes the model files into `dir`; their names, in order.
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<String>> {
        let mut names = Vec::new();
        for (name, content) in &self.files {
            let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join(name))?);
            match content {
                Content::Text(text) => out.write_all(text.as_bytes())?,
                Content::Unrelated(n) => {
                    for i in 0..*n {
                        writeln!(
                            out,
                            "<urn:seams:bench:s{}> <urn:seams:bench:p{}> \"value {i}\" .",
                            i / 8,
                            i % 8
                        )?;
                    }
                }
                Content::BlankNodes(n) => {
                    for i in 0..*n {
                        writeln!(
                            out,
                            "_:b{i} <urn:seams:bench:value> \"{i}\" .\n_:b{i} <urn:seams:bench:next> _:b{} .",
                            (i + 1) % n
                        )?;
                    }
                }
            }
            out.flush()?;
            names.push(name.clone());
        }
        Ok(names)
    }
}

const EXPENSE: &str = include_str!("../../examples/expense/model.ttl");
const CHAT: &str = include_str!("../../examples/chat/model.ttl");

/// `k` copies of the expense example: every `exp:` IRI but the
/// application's and the database's gets a `_cN` suffix, every label a
/// ` N` and every page path a `-cN`, so that copies share nothing but the
/// application (which lists every copy's pages) and the database.
pub fn expense(k: usize) -> Case {
    // The head: prefixes, the application and the database, up to the
    // first section comment; the body is everything after.
    let split = EXPENSE
        .find("# --- ")
        .expect("the expense example has sections");
    let (head, body) = EXPENSE.split_at(split);
    let app_start = head
        .find("exp:app a ui:Application")
        .expect("an application");
    let app_end = app_start + head[app_start..].find(" .\n").expect("its end") + 3;
    let pages_line = head[app_start..app_end]
        .lines()
        .find_map(|l| l.trim().strip_prefix("ui:page "))
        .expect("the application lists its pages");
    let pages: Vec<&str> = pages_line
        .trim_end_matches(" ;")
        .split(", ")
        .map(|p| p.trim_start_matches("exp:"))
        .collect();
    let mut text = String::with_capacity(body.len() * k + head.len());
    text.push_str(&head[..app_start]);
    let listed: Vec<String> = (0..k)
        .flat_map(|i| pages.iter().map(move |p| format!("exp:{p}_c{i}")))
        .collect();
    let _ = write!(
        text,
        "exp:app a ui:Application ;\n    rdfs:label \"Expenses\" ;\n    ui:homePage exp:{}_c0 ;\n    ui:page {} ;\n    ui:database exp:expenses_db .\n",
        pages[0],
        listed.join(", ")
    );
    text.push_str(&head[app_end..]);
    for i in 0..k {
        text.push_str(&renamed(body, i));
    }
    Case {
        name: format!("expense x{k}"),
        copies: Some(k),
        files: vec![("model.ttl".into(), Content::Text(text))],
    }
}

/// `body` with its IRIs, labels, paths and entity names (which name
/// routes and tables) made copy `i`'s.
fn renamed(body: &str, i: usize) -> String {
    let mut out = String::with_capacity(body.len() + body.len() / 4);
    let mut in_entity = false;
    for line in body.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            in_entity = line.contains(" a ui:Entity");
        }
        let mut line = suffix_iris(line, i);
        let entity_name = if in_entity { "ui:name \"" } else { "\u{0}" };
        for (key, sep) in [
            ("rdfs:label \"", " "),
            ("ui:path \"", "-c"),
            (entity_name, "C"),
        ] {
            if let Some(at) = line.find(key) {
                let start = at + key.len();
                if let Some(len) = line[start..].find('"') {
                    line.insert_str(start + len, &format!("{sep}{i}"));
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `exp:NAME` as `exp:NAME_cI`, but for the shared application and
/// database.
fn suffix_iris(line: &str, i: usize) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(at) = rest.find("exp:") {
        let name_start = at + 4;
        let len = rest[name_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len() - name_start);
        let name = &rest[name_start..name_start + len];
        out.push_str(&rest[..name_start + len]);
        if !matches!(name, "app" | "expenses_db") {
            let _ = write!(out, "_c{i}");
        }
        rest = &rest[name_start + len..];
    }
    out.push_str(rest);
    out
}

/// The chat example beside `n` unrelated triples (no blank nodes).
pub fn chat_beside_unrelated(n: usize) -> Case {
    Case {
        name: format!("chat + {}k unrelated", n / 1000),
        copies: None,
        files: vec![
            ("model.ttl".into(), Content::Text(CHAT.to_owned())),
            ("unrelated.nt".into(), Content::Unrelated(n)),
        ],
    }
}

/// The chat example beside `n` blank nodes, each with a distinct value
/// and linked in a ring, so that canonical labelling has work to do.
pub fn chat_beside_blank_nodes(n: usize) -> Case {
    Case {
        name: format!("chat + {}k blank nodes", n / 1000),
        copies: None,
        files: vec![
            ("model.ttl".into(), Content::Text(CHAT.to_owned())),
            ("blank.nt".into(), Content::BlankNodes(n)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_renamed_apart_and_listed_by_the_application() {
        let dir = tempfile::tempdir().unwrap();
        let text = |case: Case| {
            case.write(dir.path()).unwrap();
            std::fs::read_to_string(dir.path().join("model.ttl")).unwrap()
        };
        let one = text(expense(1));
        let two = text(expense(2));
        let text = &two;
        assert!(text.contains("exp:reports_page_c0 a ui:Page"));
        assert!(text.contains("exp:reports_page_c1 a ui:Page"));
        assert!(text.contains("ui:path \"reports-c1\""));
        assert!(text.contains("rdfs:label \"Reports 1\""));
        assert!(text.contains("ui:database exp:expenses_db ."));
        assert!(text.contains("ui:homePage exp:reports_page_c0"));
        assert!(text.contains("exp:approvals_page_c1"));
        assert!(!text.contains("exp:expenses_db_c"));
        assert!(text.contains("ui:name \"ExpenseReportC1\""), "{text}");
        let m1 = seams_model::Model::parse("model.ttl", &one).unwrap();
        let m2 = seams_model::Model::parse("model.ttl", text).unwrap();
        assert!(
            m2.len() > m1.len() * 19 / 10,
            "{} vs {}",
            m2.len(),
            m1.len()
        );
    }
}
