//! The model IRIs a run's outputs cite, each kept once: thousands of pages
//! that each cite the same thousands of IRIs share their strings. Shared
//! with the threads that finish renders, which intern as they go, so that
//! finished renders waiting for their output paths hold no copies (at
//! expense x1000 the copies were 3,000 pages of 3,000 IRIs each).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

/// A run's interned terms.
#[derive(Debug, Clone, Default)]
pub(crate) struct Terms(Arc<Mutex<HashSet<Arc<str>, foldhash::fast::RandomState>>>);

impl Terms {
    /// `terms`, each as the run's one shared string.
    pub(crate) fn intern_all<S: AsRef<str>>(
        &self,
        terms: impl IntoIterator<Item = S>,
    ) -> Vec<Arc<str>> {
        let mut set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        terms
            .into_iter()
            .map(|term| match set.get(term.as_ref()) {
                Some(shared) => shared.clone(),
                None => {
                    let shared: Arc<str> = Arc::from(term.as_ref());
                    set.insert(shared.clone());
                    shared
                }
            })
            .collect()
    }

    /// Every term interned so far.
    pub(crate) fn all(&self) -> Vec<Arc<str>> {
        let set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        set.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_interned_twice_is_one_string() {
        let terms = Terms::default();
        let a = terms.intern_all(["urn:a", "urn:b"]);
        let b = terms.clone().intern_all(["urn:b"]);
        assert!(Arc::ptr_eq(&a[1], &b[0]));
        let mut all: Vec<String> = terms.all().iter().map(|t| t.to_string()).collect();
        all.sort();
        assert_eq!(all, ["urn:a", "urn:b"]);
    }
}
