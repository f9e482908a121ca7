//! The database side of an entity: its SQLAlchemy column in `app.py` and
//! its line in `schema.sql` (PostgreSQL's dialect), decided here once so
//! that the two agree.

use seams_ui_model::sql::sql_name;
use seams_ui_model::{Attribute, Datatype, Entity, Relation, Ui};

/// The table of the states a status attribute may hold.
pub fn states_table(entity: &Entity, attribute: &Attribute) -> String {
    format!("{}_{}_states", entity.slug, attribute.name)
}

/// An attribute's SQLAlchemy column arguments (after its name) and its
/// `schema.sql` definition.
pub fn attribute_column(entity: &Entity, a: &Attribute) -> (String, String) {
    if let Some(initial) = a.states.iter().find(|s| s.initial) {
        let states = states_table(entity, a);
        return (
            format!(
                "Text, ForeignKey(\"{states}.name\"), nullable=False, server_default=\"{}\"",
                initial.name
            ),
            format!(
                "{} TEXT NOT NULL DEFAULT '{}' REFERENCES {} (name)",
                sql_name(&a.name),
                initial.name,
                sql_name(&states)
            ),
        );
    }
    let (python, sql) = match a.datatype {
        Datatype::String => ("Text", "TEXT"),
        Datatype::Integer => ("Integer", "INTEGER"),
        Datatype::Decimal => ("Decimal", "NUMERIC"),
        Datatype::Boolean => ("Boolean", "BOOLEAN"),
        Datatype::Date => ("Date", "DATE"),
    };
    // An unticked checkbox is not sent: a boolean is false, never missing,
    // also in the records made before the attribute was.
    if a.datatype == Datatype::Boolean {
        return (
            format!("{python}, nullable=False, server_default=false()"),
            format!("{} {sql} NOT NULL DEFAULT false", sql_name(&a.name)),
        );
    }
    let (python_null, sql_null) = if a.required {
        (", nullable=False", " NOT NULL")
    } else {
        ("", "")
    };
    (
        format!("{python}{python_null}"),
        format!("{} {sql}{sql_null}", sql_name(&a.name)),
    )
}

/// A relation's SQLAlchemy column arguments and its `schema.sql`
/// definition; `inline` is false when its target's table is made after
/// its own (a cycle), and the reference is added after both.
pub fn relation_column(ui: &Ui, r: &Relation, inline: bool) -> (String, String) {
    let target = ui.entity(&r.target).map_or("", |e| e.slug.as_str());
    let (python_null, sql_null) = if r.required {
        (", nullable=False", " NOT NULL")
    } else {
        ("", "")
    };
    let reference = if inline {
        format!(" REFERENCES {} (id)", sql_name(target))
    } else {
        String::new()
    };
    (
        format!("Integer, ForeignKey(\"{target}.id\"){python_null}"),
        format!("{} INTEGER{sql_null}{reference}", sql_name(&r.name)),
    )
}
