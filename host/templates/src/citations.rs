//! The model IRIs a thread's sidecars cite, numbered as the thread meets
//! them, and each one's number in the run's table of terms.
//!
//! A page of a site cites the same thousands of IRIs as every other page
//! (a navigation list, read once and shared by every page's context): the
//! same strings, at the same addresses. An IRI met before is found by its
//! address, not hashed again, and it is not cloned: at expense x1000 a
//! traced run numbers 9 million citations, and cloning them counted shared
//! reference counts up and down on the threads that render and on those
//! that finish renders at once. An address is only a hint: a string freed
//! and another made in its place has it too, so what it finds is checked
//! against the text.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use minijinja::value::Value;

use crate::view::{IriReader, add_view_iris};

/// One thread's numbering of the IRIs its sidecars cite.
#[derive(Default)]
pub struct Citations {
    /// Local numbers by the address and length of a string met before.
    by_address: HashMap<(usize, usize), u32, foldhash::fast::RandomState>,
    /// Local numbers by text: equal IRIs at different addresses are one.
    by_text: HashMap<Arc<str>, u32, foldhash::fast::RandomState>,
    /// The text of each local number.
    texts: Vec<Arc<str>>,
    /// Each local number's number in the run's table, once it has one.
    run: Vec<Option<u32>>,
    /// The strings the last trace cited, in order, and those this one
    /// has so far: a trace mostly cites what the one before did, in
    /// the same order (the navigation list on every page), and a string
    /// found where the last trace had it is not looked up in `by_address`,
    /// whose buckets, spread over megabytes, each cost a cache miss.
    last: Vec<Cited>,
    this: Vec<Cited>,
    /// Where in `last` this trace is.
    cursor: usize,
    /// The last trace's local numbers sorted by text, and a stamp per
    /// local number: [`Citations::sort_by_text`].
    sorted: Vec<u32>,
    stamps: Vec<Stamps>,
    /// The stamp of the numbers in `sorted`, and of those being sorted.
    sorted_stamp: u32,
    sorting_stamp: u32,
    /// View objects met lately, and their IRIs' numbers (in
    /// `object_iris`): a page's lines cite the thousands of objects of
    /// the navigation list, shared by every page, whose maps were last
    /// touched by the thread rendering, so that reading their IRIs missed
    /// the cache for each (a tenth of a finishing thread's time at expense
    /// x1000). Each object is held while it is here, so that no other
    /// takes its address; those not met in the last trace go once they
    /// are more than twice as many as those met in it.
    objects: Vec<Met>,
    /// Where each object is in `objects`, by address.
    object_at: HashMap<usize, u32, foldhash::fast::RandomState>,
    object_iris: Vec<u32>,
    /// The objects the last trace met, in order (where in `objects`), and
    /// those this one has so far: found in that order first, like
    /// strings, since a lookup in `object_at` costs a cache miss.
    last_objects: Vec<u32>,
    this_objects: Vec<u32>,
    /// Where in `last_objects` this trace is.
    object_cursor: usize,
    /// The trace being numbered, counted from the first, and how many
    /// objects it met.
    trace: u64,
    objects_met: usize,
    /// How many strings were found where the last trace had them.
    #[cfg(test)]
    followed: usize,
    /// How many objects were.
    #[cfg(test)]
    objects_followed: usize,
}

/// Whether a local number is in [`Citations::sorted`], and in the trace
/// being sorted: equal to the matching stamp when it is.
#[derive(Clone, Copy, Default)]
struct Stamps {
    sorted: u32,
    sorting: u32,
}

/// A view object met lately ([`Citations::objects`]).
struct Met {
    /// Its address.
    address: usize,
    /// Held, so that its address stays its own.
    _object: Value,
    /// Where its IRIs' numbers are in `object_iris`, and how many.
    iris: (usize, usize),
    /// Whether it is a view object.
    view: bool,
    /// The last trace that met it.
    trace: u64,
}

/// A string's address and length, and its local number.
#[derive(Clone, Copy)]
struct Cited {
    address: (usize, usize),
    local: u32,
}

impl Citations {
    /// The most addresses kept: strings read afresh for every page (each
    /// page's own objects) leave theirs behind, and past this many they
    /// are forgotten at once.
    const ADDRESSES: usize = 1 << 16;

    /// The most citations of a trace kept for the next to follow: a page
    /// of millions keeps its first million (24 MB).
    const KEPT: usize = 1 << 20;

    /// How far past where the last trace's order says a trace may look
    /// for a string there: a page's own objects, cited before its shared
    /// list, shift it by a few.
    const AHEAD: usize = 8;

    /// A numbering with nothing in it.
    pub fn new() -> Citations {
        Citations::default()
    }

    /// Objects kept beside those the last trace met, at least.
    const OBJECTS: usize = 1024;

    /// Starts numbering the citations of another trace.
    pub(crate) fn next_trace(&mut self) {
        std::mem::swap(&mut self.last, &mut self.this);
        self.this.clear();
        self.cursor = 0;
        std::mem::swap(&mut self.last_objects, &mut self.this_objects);
        self.this_objects.clear();
        self.object_cursor = 0;
        if self.objects.len() > 2 * self.objects_met + Self::OBJECTS {
            self.forget_objects();
        }
        self.trace += 1;
        self.objects_met = 0;
    }

    /// Forgets the objects the last trace did not meet.
    fn forget_objects(&mut self) {
        let trace = self.trace;
        let mut moved = vec![u32::MAX; self.objects.len()];
        let mut iris = Vec::with_capacity(self.object_iris.len() / 2);
        let mut kept = Vec::with_capacity(self.objects_met);
        for (at, mut met) in std::mem::take(&mut self.objects).into_iter().enumerate() {
            if met.trace != trace {
                continue;
            }
            moved[at] = kept.len() as u32;
            let (start, len) = met.iris;
            met.iris.0 = iris.len();
            iris.extend_from_slice(&self.object_iris[start..start + len]);
            kept.push(met);
        }
        self.object_at = kept
            .iter()
            .enumerate()
            .map(|(at, met)| (met.address, at as u32))
            .collect();
        self.objects = kept;
        self.object_iris = iris;
        // The last trace met only objects that stay.
        for at in &mut self.last_objects {
            *at = moved[*at as usize];
        }
    }

    /// Where the object at `address` is in `objects`: looked for where the
    /// last trace's order says first.
    fn find_object(&mut self, address: usize) -> Option<u32> {
        let ahead = &self.last_objects[self.object_cursor.min(self.last_objects.len())..];
        let objects = &self.objects;
        if let Some(step) = ahead.iter().take(Self::AHEAD).position(|&at| {
            objects
                .get(at as usize)
                .is_some_and(|o| o.address == address)
        }) {
            self.object_cursor += step + 1;
            #[cfg(test)]
            {
                self.objects_followed += 1;
            }
            return Some(ahead[step]);
        }
        self.object_at.get(&address).copied()
    }

    /// Adds the numbers of `object`'s IRIs to `iris`, read once while it
    /// is met trace after trace; whether it is a view object.
    fn object_iris(&mut self, object: &Value, iris: &mut Vec<u32>) -> bool {
        // Its address, without reading it (only maps read from JSON: the
        // view objects of contexts).
        let address = object
            .downcast_object_ref::<BTreeMap<Value, Value>>()
            .map(|map| std::ptr::from_ref(map) as usize);
        if let Some(address) = address
            && let Some(at) = self.find_object(address)
        {
            if self.this_objects.len() < Self::KEPT {
                self.this_objects.push(at);
            }
            let met = &mut self.objects[at as usize];
            if met.trace != self.trace {
                met.trace = self.trace;
                self.objects_met += 1;
            }
            let (start, len) = met.iris;
            iris.extend_from_slice(&self.object_iris[start..start + len]);
            return met.view;
        }
        let mut found = Vec::new();
        let view = add_view_iris(object, &mut found);
        let start = self.object_iris.len();
        for value in &found {
            let local = self.local(value);
            self.object_iris.push(local);
        }
        iris.extend_from_slice(&self.object_iris[start..]);
        match address {
            Some(address) => {
                let at = self.objects.len() as u32;
                self.objects.push(Met {
                    address,
                    _object: object.clone(),
                    iris: (start, self.object_iris.len() - start),
                    view,
                    trace: self.trace,
                });
                self.object_at.insert(address, at);
                if self.this_objects.len() < Self::KEPT {
                    self.this_objects.push(at);
                }
                self.objects_met += 1;
            }
            None => self.object_iris.truncate(start),
        }
        view
    }

    /// The local number of `iri`, a string value.
    pub(crate) fn local(&mut self, iri: &Value) -> u32 {
        let text = iri.as_str().unwrap_or_default();
        let address = heap_address(iri, text);
        let Some(address) = address else {
            return self.by_text(text);
        };
        let texts = &self.texts;
        let found = |c: &Cited| c.address == address && *texts[c.local as usize] == *text;
        let ahead = &self.last[self.cursor.min(self.last.len())..];
        if let Some(at) = ahead.iter().take(Self::AHEAD).position(found) {
            let cited = ahead[at];
            self.cursor += at + 1;
            self.keep(cited);
            #[cfg(test)]
            {
                self.followed += 1;
            }
            return cited.local;
        }
        let known = self.by_address.get(&address).copied();
        let local = match known.filter(|&l| *self.texts[l as usize] == *text) {
            Some(local) => local,
            None => {
                let local = self.by_text(text);
                if self.by_address.len() >= Self::ADDRESSES {
                    self.by_address.clear();
                }
                self.by_address.insert(address, local);
                local
            }
        };
        self.keep(Cited { address, local });
        local
    }

    /// Keeps a citation of this trace for the next to follow.
    fn keep(&mut self, cited: Cited) {
        if self.this.len() < Self::KEPT {
            self.this.push(cited);
        }
    }

    /// The local number of the IRI `text`.
    fn by_text(&mut self, text: &str) -> u32 {
        if let Some(&local) = self.by_text.get(text) {
            return local;
        }
        // More distinct IRIs than u32 numbers cannot be met: the run's
        // table refuses them first (one string each).
        let local = self.texts.len() as u32;
        let shared: Arc<str> = Arc::from(text);
        self.by_text.insert(shared.clone(), local);
        self.texts.push(shared);
        self.run.push(None);
        local
    }

    /// The text of local number `local`.
    pub(crate) fn text(&self, local: u32) -> &str {
        &self.texts[local as usize]
    }

    /// Sorts `cited`, local numbers each once, by their texts. Most are
    /// those the last trace sorted (every page cites the navigation
    /// list): they keep that order, and only the others are sorted by
    /// text and put in among them, so that a page of thousands of
    /// citations compares a few texts, not thousands of times their log.
    pub(crate) fn sort_by_text(&mut self, cited: &mut Vec<u32>) {
        if self.sorting_stamp == u32::MAX || self.sorted_stamp == u32::MAX {
            // Four billion traces on: the stamps start again, from none.
            self.stamps.iter_mut().for_each(|s| *s = Stamps::default());
            self.sorting_stamp = 0;
            self.sorted_stamp = 0;
            self.sorted.clear();
        }
        self.stamps.resize(self.texts.len(), Stamps::default());
        self.sorting_stamp += 1;
        let (sorting, sorted) = (self.sorting_stamp, self.sorted_stamp);
        for &l in cited.iter() {
            self.stamps[l as usize].sorting = sorting;
        }
        let stamps = &self.stamps;
        let kept = self
            .sorted
            .iter()
            .copied()
            .filter(|&l| stamps[l as usize].sorting == sorting);
        let mut new: Vec<u32> = cited
            .iter()
            .copied()
            .filter(|&l| sorted == 0 || stamps[l as usize].sorted != sorted)
            .collect();
        let texts = &self.texts;
        new.sort_unstable_by(|a, b| texts[*a as usize].cmp(&texts[*b as usize]));
        let mut merged = Vec::with_capacity(cited.len());
        let mut new = new.into_iter().peekable();
        for kept in kept {
            while let Some(n) = new.next_if(|&n| texts[n as usize] < texts[kept as usize]) {
                merged.push(n);
            }
            merged.push(kept);
        }
        merged.extend(new);
        self.sorted_stamp += 1;
        for &l in &merged {
            self.stamps[l as usize].sorted = self.sorted_stamp;
        }
        self.sorted.clone_from(&merged);
        *cited = merged;
    }

    /// The run's numbers of the IRIs `start` cites, in its order (by
    /// text). The IRIs without one yet are given to `number`, texts in
    /// order, which returns theirs, each with the run's string of it:
    /// once per IRI and thread, not once per citation. The thread keeps
    /// the run's string instead of its own copy.
    ///
    /// # Errors
    ///
    /// What `number` returns.
    pub fn run_numbers<E>(
        &mut self,
        start: &SidecarStart,
        number: impl FnOnce(&[&str]) -> Result<Vec<(u32, Arc<str>)>, E>,
    ) -> Result<Vec<u32>, E> {
        let cited = &start.cited;
        let new: Vec<u32> = cited
            .iter()
            .copied()
            .filter(|&l| self.run[l as usize].is_none())
            .collect();
        if !new.is_empty() {
            let texts: Vec<&str> = new.iter().map(|&l| self.text(l)).collect();
            let numbers = number(&texts)?;
            for (&l, (n, shared)) in new.iter().zip(numbers) {
                let l = l as usize;
                self.run[l] = Some(n);
                if *shared == *self.texts[l] {
                    self.by_text.remove(&*shared);
                    self.by_text.insert(shared.clone(), l as u32);
                    self.texts[l] = shared;
                }
            }
        }
        // Each one has a number now, unless `number` returned fewer.
        Ok(cited.iter().filter_map(|&l| self.run[l as usize]).collect())
    }
}

/// A sidecar's IRIs, read as this thread's numbers.
impl IriReader for Citations {
    type Iri = u32;

    fn view_iris(&mut self, object: &Value, iris: &mut Vec<u32>) -> bool {
        self.object_iris(object, iris)
    }

    fn iris(&mut self, values: &[Value], iris: &mut Vec<u32>) {
        for value in values {
            let local = self.local(value);
            iris.push(local);
        }
    }

    fn sort(&self, iris: &mut Vec<u32>) {
        // Each text has one number.
        iris.sort_unstable();
        iris.dedup();
        iris.sort_by(|a, b| self.text(*a).cmp(self.text(*b)));
    }
}

/// Where `value`'s string `text` lies, when outside the value itself:
/// a short string is held inline, in the value, and its address is only
/// where that copy of the value happens to be.
fn heap_address(value: &Value, text: &str) -> Option<(usize, usize)> {
    let start = std::ptr::from_ref(value) as usize;
    let at = text.as_ptr() as usize;
    let inline = (start..start + std::mem::size_of::<Value>()).contains(&at);
    (!inline && !text.is_empty()).then_some((at, text.len()))
}

/// The start of a traced output's sidecar, and the model IRIs its lines
/// cite ([`TemplateService::trace_to_sidecar`]).
#[derive(Debug)]
pub struct SidecarStart {
    /// The sidecar's text up to its lines' end (see [`crate::sidecar_tail`]).
    pub head: String,
    /// The terms cited, sorted by text and once each, as numbered in the
    /// [`Citations`] the trace was given.
    pub(crate) cited: Vec<u32>,
}

impl SidecarStart {
    /// The model IRIs the lines cite, sorted, each once: the output's lock
    /// sources. `citations` is the numbering the trace was given.
    pub fn sources<'a>(&'a self, citations: &'a Citations) -> impl Iterator<Item = &'a str> {
        self.cited.iter().map(|&c| citations.text(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_iri_has_one_number_whether_met_by_address_or_by_text() {
        let mut c = Citations::new();
        let long = "https://example.org/a-long-enough-iri-to-live-on-the-heap";
        let shared = Value::from(long);
        let apart = Value::from(long.to_owned());
        let short = Value::from("urn:b");
        let a = c.local(&shared);
        assert_eq!(c.local(&shared.clone()), a, "a clone: the same address");
        assert_eq!(c.local(&apart), a, "equal text at another address");
        let b = c.local(&short);
        // A short string lives in the value: each copy elsewhere.
        let copies: Vec<Value> = (0..3).map(|_| short.clone()).collect();
        assert!(copies.iter().all(|v| c.local(v) == b));
        assert_ne!(a, b);
        assert_eq!(c.text(a), long);
        assert_eq!(c.text(b), "urn:b");
        // Only heap strings are found by address.
        assert_eq!(c.by_address.len(), 2, "the shared string and the apart one");
    }

    #[test]
    fn a_string_freed_and_its_address_reused_is_not_taken_for_it() {
        // Each value is dropped after it was met: the next string of the
        // same size is likely made in its place, at its address, and must
        // get its own number, in a trace's order as out of it.
        let mut c = Citations::new();
        let mut numbers = std::collections::BTreeMap::new();
        for i in 0..200 {
            if i % 2 == 0 {
                c.next_trace();
            }
            let text = format!("https://example.org/{i:0>40}");
            let value = Value::from(text.clone());
            numbers.insert(text, c.local(&value));
        }
        assert_eq!(numbers.len(), 200);
        for (text, &n) in &numbers {
            assert_eq!(c.text(n), text);
            assert_eq!(c.local(&Value::from(text.clone())), n);
        }
    }

    #[test]
    fn traces_citing_in_the_order_of_the_last_are_followed_and_number_alike() {
        let iri = |i: usize| format!("https://example.org/expense#page_{i:0>30}");
        let shared: Vec<Value> = (0..40).map(|i| Value::from(iri(i))).collect();
        // Each trace: its own objects first (read afresh), then the shared
        // list, shifted, cut, repeated or reordered.
        let orders: [(&str, Vec<usize>, usize); 6] = [
            ("in order", (0..40).collect(), 0),
            ("the same again", (0..40).collect(), 40),
            (
                "three missing",
                (0..40).filter(|i| i % 17 != 3).collect(),
                37,
            ),
            (
                "each twice, three new",
                (0..40).flat_map(|i| [i, i]).collect(),
                37,
            ),
            ("reversed", (0..40).rev().collect(), 1),
            ("in order after", (0..40).collect(), 1),
        ];
        let mut c = Citations::new();
        for (t, (what, order, followed)) in orders.into_iter().enumerate() {
            c.next_trace();
            let own: Vec<Value> = (0..3).map(|i| Value::from(iri(100 + 10 * t + i))).collect();
            let before = c.followed;
            for value in own.iter().chain(order.iter().map(|&i| &shared[i])) {
                let local = c.local(value);
                assert_eq!(c.text(local), value.as_str().unwrap(), "{what}");
            }
            assert_eq!(c.followed - before, followed, "{what}");
        }
    }

    #[test]
    fn run_numbers_are_asked_for_once_per_iri() {
        let mut c = Citations::new();
        let values: Vec<Value> = ["urn:x", "urn:y", "urn:z"].map(Value::from).into();
        let locals: Vec<u32> = values.iter().map(|v| c.local(v)).collect();
        let mut asked = Vec::new();
        let mut number = |texts: &[&str]| -> Result<Vec<(u32, Arc<str>)>, ()> {
            asked.push(texts.iter().map(|t| t.to_string()).collect::<Vec<_>>());
            let n = asked.len() as u32;
            Ok(texts
                .iter()
                .map(|t| (t.len() as u32 * 10 + n, Arc::from(*t)))
                .collect())
        };
        let start = |cited: &[u32]| SidecarStart {
            head: String::new(),
            cited: cited.to_vec(),
        };
        let first = c.run_numbers(&start(&locals[..2]), &mut number).unwrap();
        let all = c.run_numbers(&start(&locals), &mut number).unwrap();
        assert_eq!(first, [51, 51]);
        assert_eq!(all, [51, 51, 52]);
        assert_eq!(asked, [vec!["urn:x", "urn:y"], vec!["urn:z"]]);
        let failed = c.run_numbers(&start(&locals[2..]), |_| Err::<Vec<_>, _>("full"));
        assert_eq!(failed, Ok(vec![52]), "numbered already: not asked again");
        // The run's strings replaced the thread's copies, and serve.
        assert!(c.texts.iter().all(|t| Arc::strong_count(t) == 2));
        assert_eq!(
            values.iter().map(|v| c.local(v)).collect::<Vec<_>>(),
            locals
        );
    }

    #[test]
    fn traces_sorted_after_one_another_sort_as_by_text_alone() {
        // Texts whose numbers (the order met) are not their text order.
        let mut c = Citations::new();
        let locals: Vec<u32> = (0..60)
            .map(|i| c.local(&Value::from(format!("urn:x:{}", (i * 37) % 101))))
            .collect();
        let by_text = |c: &Citations, set: &[u32]| {
            let mut set = set.to_vec();
            set.sort_by(|a, b| c.text(*a).cmp(c.text(*b)));
            set
        };
        let some = |f: fn(usize) -> bool| -> Vec<u32> {
            (0..60).filter(|&i| f(i)).map(|i| locals[i]).collect()
        };
        let traces: [(&str, Vec<u32>); 8] = [
            ("the first", some(|i| i < 40)),
            ("the same", some(|i| i < 40)),
            ("a few more", some(|i| i < 45)),
            ("a few fewer", some(|i| (3..40).contains(&i))),
            ("none in common", some(|i| i >= 45)),
            ("every one", some(|_| true)),
            ("one", some(|i| i == 7)),
            ("none", Vec::new()),
        ];
        for (what, mut cited) in traces {
            cited.sort_unstable();
            let expected = by_text(&c, &cited);
            c.sort_by_text(&mut cited);
            assert_eq!(cited, expected, "{what}");
        }
        // The stamps at their end start again, and still sort.
        c.sorting_stamp = u32::MAX - 1;
        for _ in 0..3 {
            let mut cited = some(|i| i % 3 != 1);
            cited.sort_unstable();
            let expected = by_text(&c, &cited);
            c.sort_by_text(&mut cited);
            assert_eq!(cited, expected, "past the stamps' end");
        }
    }

    #[test]
    fn view_objects_are_read_once_while_met_and_forgotten_after() {
        let object = |iri: &str, origins: &[&str]| -> Value {
            let json = serde_json::json!({"iri": iri, "origins": origins, "label": "x"});
            serde_json::from_str(&json.to_string()).unwrap()
        };
        let texts = |c: &Citations, numbers: &[u32]| -> Vec<String> {
            numbers.iter().map(|&n| c.text(n).to_owned()).collect()
        };
        let mut c = Citations::new();
        let shared: Vec<Value> = (0..50)
            .map(|i| object(&format!("urn:nav:{i}"), &[&format!("urn:o:{i}")]))
            .collect();
        let mut met_again = 0;
        for trace in 0..3000 {
            c.next_trace();
            met_again += if trace > 0 { 50 - trace % 7 } else { 0 };
            // Shared objects, met trace after trace: read once each.
            for (i, item) in shared.iter().enumerate().skip(trace % 7) {
                let mut iris = Vec::new();
                assert!(c.view_iris(item, &mut iris));
                assert_eq!(
                    texts(&c, &iris),
                    [format!("urn:nav:{i}"), format!("urn:o:{i}")]
                );
            }
            // A page's own object, made, read and dropped: the next one is
            // likely made at its address once it is forgotten.
            let own = object(&format!("urn:own:{trace}"), &[]);
            let mut iris = Vec::new();
            assert!(c.view_iris(&own, &mut iris));
            assert_eq!(texts(&c, &iris), [format!("urn:own:{trace}")]);
            // Not a view object, read alike.
            let mut none = Vec::new();
            assert!(!c.view_iris(&object_without_iri(), &mut none));
            assert!(none.is_empty());
            assert!(
                c.objects.len() <= 2 * 52 + Citations::OBJECTS + 2,
                "{}",
                c.objects.len()
            );
        }
        // Found in the last trace's order, the shared ones, but where a
        // trace starts further on than the last.
        assert!(
            c.objects_followed * 100 >= met_again * 97,
            "{} of {met_again}",
            c.objects_followed
        );
        // The shared objects stayed, read once: one number each per IRI.
        assert_eq!(c.texts.len(), 100 + 3000);
        assert!(c.object_iris.len() < 2 * (c.objects.len() * 2));
    }

    fn object_without_iri() -> Value {
        serde_json::from_str("{\"label\": \"no iri\"}").unwrap()
    }
}
