//! The model IRIs a run's outputs cite, each kept once, in a table: an
//! output's sources are indexes into it. Thousands of pages that each
//! cite the same thousands of IRIs share the table's strings and hold
//! four bytes per IRI (at expense x1000, 3,000 pages of 3,000 IRIs each:
//! as shared strings, 16 bytes a reference, they were 144 MB). Shared
//! with the threads that finish renders, which intern as they go.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::GeneratorErrorKind;

/// A run's table of terms.
#[derive(Debug, Clone, Default)]
pub(crate) struct Terms(Arc<Mutex<Table>>);

#[derive(Debug, Default)]
struct Table {
    index: HashMap<Arc<str>, u32, foldhash::fast::RandomState>,
    texts: Vec<Arc<str>>,
}

/// The table holds as many terms as an index can tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TableFull;

/// A generator that cites that many IRIs breaks the protocol's bounds.
impl From<TableFull> for GeneratorErrorKind {
    fn from(_: TableFull) -> Self {
        GeneratorErrorKind::Protocol(crate::error::ProtocolError::TooManyTerms { limit: u32::MAX })
    }
}

impl Terms {
    /// The index of each of `terms` in the table, in the order given; a
    /// term met for the first time is added.
    ///
    /// # Errors
    ///
    /// The table is full ([`u32::MAX`] terms).
    pub(crate) fn intern_all<S: AsRef<str>>(
        &self,
        terms: impl IntoIterator<Item = S>,
    ) -> Result<Vec<u32>, TableFull> {
        self.intern_each(terms, |at, _| at)
    }

    /// [`Terms::intern_all`], with each term's string in the table: a
    /// thread that keeps terms too keeps the table's strings, not copies.
    ///
    /// # Errors
    ///
    /// The table is full ([`u32::MAX`] terms).
    pub(crate) fn intern_shared<S: AsRef<str>>(
        &self,
        terms: impl IntoIterator<Item = S>,
    ) -> Result<Vec<(u32, Arc<str>)>, TableFull> {
        self.intern_each(terms, |at, text| (at, text.clone()))
    }

    fn intern_each<S: AsRef<str>, T>(
        &self,
        terms: impl IntoIterator<Item = S>,
        mut each: impl FnMut(u32, &Arc<str>) -> T,
    ) -> Result<Vec<T>, TableFull> {
        let mut table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Table { index, texts } = &mut *table;
        terms
            .into_iter()
            .map(|term| {
                let at = match index.get(term.as_ref()) {
                    Some(&at) => at,
                    None => {
                        let at = u32::try_from(texts.len()).map_err(|_| TableFull)?;
                        let shared: Arc<str> = Arc::from(term.as_ref());
                        index.insert(shared.clone(), at);
                        texts.push(shared);
                        at
                    }
                };
                Ok(each(at, &texts[at as usize]))
            })
            .collect()
    }

    /// The table: every term interned so far, at its index.
    pub(crate) fn all(&self) -> Vec<Arc<str>> {
        let table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        table.texts.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_interned_twice_has_one_index_and_one_string() {
        let terms = Terms::default();
        let a = terms.intern_all(["urn:b", "urn:a", "urn:b"]).unwrap();
        assert_eq!(a, [0, 1, 0]);
        // A clone is the same table (the finishing threads hold clones).
        let b = terms.clone().intern_all(["urn:a", "urn:c"]).unwrap();
        assert_eq!(b, [1, 2]);
        let shared = terms.intern_shared(["urn:c", "urn:d"]).unwrap();
        assert_eq!(shared.iter().map(|(at, _)| *at).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(&*shared[1].1, "urn:d");
        let all = terms.all();
        let texts: Vec<&str> = all.iter().map(|t| &**t).collect();
        assert_eq!(texts, ["urn:b", "urn:a", "urn:c", "urn:d"]);
        assert!(Arc::ptr_eq(&all[1], &terms.all()[1]));
        assert!(Arc::ptr_eq(&all[3], &shared[1].1), "the table's own string");
    }

    #[test]
    fn a_full_table_is_the_generators_error_not_a_panic() {
        let why = GeneratorErrorKind::from(TableFull).to_string();
        assert!(why.contains("more than 4294967295 distinct IRIs"), "{why}");
    }
}
