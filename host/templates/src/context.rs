//! A render's context, read from its JSON text into the template engine's
//! values, its large fields read once while they recur.

use std::collections::BTreeMap;

use minijinja::value::Value;

/// The large fields of recent contexts, read: a generator passes the same
/// navigation, say, to every page, and reading it for every page cost as
/// much as a tenth of a run. A field is looked up by its exact text, so a
/// context reads the same whether or not its fields were kept.
#[derive(Default)]
pub(crate) struct SharedFields {
    pub(crate) kept: std::sync::Mutex<std::collections::VecDeque<(Box<str>, Value)>>,
}

impl SharedFields {
    /// Fields shorter than this are read again: looking them up would
    /// cost about as much.
    pub(crate) const MIN_BYTES: usize = 4096;
    /// How many fields are kept, the most recently used first.
    pub(crate) const KEPT: usize = 4;
    /// Fields longer than this are not kept: the copy kept would cost
    /// more memory than a navigation list ever needs.
    pub(crate) const MAX_BYTES: usize = 8 << 20;

    /// `context` read, when it is a JSON object whose fields all read and
    /// one of them may be long enough to keep.
    pub(crate) fn read(&self, context: &str) -> Option<Value> {
        if context.len() < Self::MIN_BYTES {
            return None;
        }
        // The kept fields found in the context are taken while it is
        // split; the others are read after.
        let fields: Vec<(String, Result<Value, &str>)> = {
            let mut kept = self.kept.lock().ok()?;
            let texts: Vec<&str> = kept.iter().map(|(text, _)| &**text).collect();
            let fields = object_fields(context, &texts)?;
            let mut last = None;
            let fields = fields
                .into_iter()
                .map(|(key, field)| match field {
                    Field::Kept(at) => {
                        last = Some(at);
                        (key, Ok(kept[at].1.clone()))
                    }
                    Field::Raw(text) => (key, Err(text)),
                })
                .collect();
            if let Some(entry) = last.and_then(|at| kept.remove(at)) {
                kept.push_front(entry);
            }
            fields
        };
        // Later duplicates win, as when read whole.
        let mut pairs = BTreeMap::new();
        for (key, field) in fields {
            let value = match field {
                Ok(value) => value,
                Err(text) if (Self::MIN_BYTES..=Self::MAX_BYTES).contains(&text.len()) => {
                    self.field(text)?
                }
                Err(text) => serde_json::from_str::<Value>(text).ok()?,
            };
            pairs.insert(key, value);
        }
        Some(Value::from(pairs))
    }

    fn field(&self, text: &str) -> Option<Value> {
        {
            let mut kept = self.kept.lock().ok()?;
            if let Some(at) = kept.iter().position(|(t, _)| **t == *text) {
                let entry = kept.remove(at)?;
                let value = entry.1.clone();
                kept.push_front(entry);
                return Some(value);
            }
        }
        let value = serde_json::from_str::<Value>(text).ok()?;
        let mut kept = self.kept.lock().ok()?;
        kept.push_front((text.into(), value.clone()));
        kept.truncate(Self::KEPT);
        Some(value)
    }
}

/// A field's value in a context's text.
pub(crate) enum Field<'a> {
    /// The kept field at this index, found there byte for byte.
    Kept(usize),
    /// Any other value's text.
    Raw(&'a str),
}

/// The fields of `context`, a JSON object, in order; `None` when it is
/// not one. A value that starts with one of `kept` (each the text of a
/// whole array, object or string) is that value: such a value ends where
/// its closing bracket or quote does, so it is compared, not parsed again,
/// which for a navigation list shown on every page was most of reading
/// its context.
pub(crate) fn object_fields<'a>(
    context: &'a str,
    kept: &[&str],
) -> Option<Vec<(String, Field<'a>)>> {
    fn blank(rest: &str) -> &str {
        rest.trim_start_matches([' ', '\t', '\n', '\r'])
    }
    /// One JSON value of type `T` at the start of `rest`, and what follows.
    fn one<'a, T: serde::Deserialize<'a>>(rest: &'a str) -> Option<(T, &'a str)> {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
        let value = values.next()?.ok()?;
        Some((value, &rest[values.byte_offset()..]))
    }
    let mut fields = Vec::new();
    let mut rest = blank(context).strip_prefix('{')?;
    if let Some(after) = blank(rest).strip_prefix('}') {
        return blank(after).is_empty().then_some(fields);
    }
    loop {
        let (key, after): (String, _) = one(blank(rest))?;
        rest = blank(blank(after).strip_prefix(':')?);
        let found = kept.iter().position(|text| {
            text.starts_with(['[', '{', '"']) && rest.as_bytes().starts_with(text.as_bytes())
        });
        let field = match found {
            Some(at) => {
                rest = &rest[kept[at].len()..];
                Field::Kept(at)
            }
            None => {
                let (value, after): (&serde_json::value::RawValue, _) = one(rest)?;
                rest = after;
                Field::Raw(value.get())
            }
        };
        fields.push((key, field));
        rest = blank(rest);
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else {
            let after = rest.strip_prefix('}')?;
            return blank(after).is_empty().then_some(fields);
        }
    }
}
