//! Names and order for SQL: what a generator that writes tables needs to
//! know of the model beyond its names.

use crate::Ui;

/// Words PostgreSQL reserves (or allows as a column but not as a table
/// name): a table or column so named is quoted in `schema.sql`.
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "binary",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "group",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "intersect",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "natural",
    "not",
    "notnull",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "overlaps",
    "placing",
    "primary",
    "references",
    "returning",
    "right",
    "select",
    "session_user",
    "similar",
    "some",
    "symmetric",
    "system_user",
    "table",
    "tablesample",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
];

/// A table or column name as `schema.sql` writes it. ui-model admits only
/// lowercase letters, digits and '_', so quoting is needed for reserved
/// words alone.
pub fn sql_name(name: &str) -> String {
    if RESERVED.contains(&name) {
        format!("\"{name}\"")
    } else {
        name.to_owned()
    }
}

/// The entities in an order that makes each table after those it refers
/// to, where it can (in a cycle, the reference that closes it comes
/// later, as an ALTER TABLE): the
/// positions in `ui.entities`.
pub fn table_order(ui: &Ui) -> Vec<usize> {
    let mut placed: Vec<usize> = Vec::new();
    let mut visiting = vec![false; ui.entities.len()];
    for i in 0..ui.entities.len() {
        place(ui, i, &mut visiting, &mut placed);
    }
    placed
}

fn place(ui: &Ui, i: usize, visiting: &mut [bool], placed: &mut Vec<usize>) {
    if placed.contains(&i) || visiting[i] {
        return;
    }
    visiting[i] = true;
    for r in &ui.entities[i].relations {
        if let Some(target) = ui.entities.iter().position(|e| e.iri == r.target) {
            place(ui, target, visiting, placed);
        }
    }
    placed.push(i);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{App, Entity, Relation};

    #[test]
    fn reserved_words_are_quoted_and_plain_names_are_not() {
        for (name, sql) in [
            ("order", "\"order\""),
            ("user", "\"user\""),
            ("table", "\"table\""),
            ("orders", "orders"),
            ("expense_report", "expense_report"),
            ("title", "title"),
        ] {
            assert_eq!(sql_name(name), sql, "{name}");
        }
    }

    fn entity(name: &str, targets: &[&str]) -> Entity {
        Entity {
            iri: format!("x:{name}"),
            label: name.into(),
            name: name.into(),
            slug: name.into(),
            attributes: Vec::new(),
            relations: targets
                .iter()
                .map(|t| Relation {
                    iri: format!("x:{name}_{t}"),
                    label: (*t).into(),
                    name: (*t).into(),
                    target: format!("x:{t}"),
                    required: false,
                })
                .collect(),
        }
    }

    #[test]
    fn a_table_comes_after_the_tables_it_refers_to_and_a_cycle_is_broken_where_it_closes() {
        for (entities, order) in [
            (vec![entity("a", &[]), entity("b", &[])], vec![0, 1]),
            (vec![entity("a", &["b"]), entity("b", &[])], vec![1, 0]),
            (
                vec![entity("a", &["c"]), entity("b", &["a"]), entity("c", &[])],
                vec![2, 0, 1],
            ),
            (vec![entity("a", &["b"]), entity("b", &["a"])], vec![1, 0]),
            (vec![entity("a", &["a"])], vec![0]),
        ] {
            let ui = Ui {
                app: App {
                    iri: "x:app".into(),
                    title: "App".into(),
                    home: None,
                    database: None,
                },
                pages: Vec::new(),
                entities,
                index: Default::default(),
            };
            assert_eq!(table_order(&ui), order);
        }
    }
}
