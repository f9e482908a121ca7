//! Finishes each render on a thread of its own while the generator goes
//! on: traces it (the second, tracing render of ADR-0019) and writes its
//! text and its sidecar's start to the run's sink. Tracing and writing are
//! as much work as the render itself and need nothing from the generator,
//! so on a machine with a second core they cost the run little time.
//!
//! Renders are taken in the order they were made, by two threads when a
//! second core can run them: where finishing is the slower side (large
//! sidecars), the generator's core finishes renders too while the
//! generator waits. A failure stops the finishing, and the run reports the
//! first render that failed (by the order they were made, once every
//! render before it is finished), whatever the generator did after it, so
//! a run fails the same way however the threads were scheduled. The queue
//! is short, so at most a few renders wait in memory; the threads charge
//! what they allocate to the run's budget and stop with it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use seams_templates::{Citations, Rendered, TemplateService};

use crate::budget::{self, Budget};
use crate::error::GeneratorErrorKind;
use crate::sink::{Blob, BlobWriter, Spill};
use crate::terms::Terms;

/// How many made renders may wait to be finished: enough to keep both
/// threads busy, few enough that waiting renders stay a small share of
/// the run's memory.
const QUEUE: usize = 4;

/// Below this many renders waiting or being finished (plus one per
/// finishing thread past the first), the finishing threads are about to
/// wait for work (see [`Keeper::idle`]). At expense x300, traced, with one
/// thread, 2 was the fastest: 2.39 s, against 2.49 s never handing a
/// render over to be made twice and 2.91 s always doing so.
const IDLE: usize = 2;

/// How many threads finish renders when the machine has a second core.
const WORKERS: usize = 2;

/// A render, finished: its text and sidecar start written, the model
/// terms its trace cites (indexes into the run's [`Terms`]).
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) text: Blob,
    pub(crate) sidecar: Option<BlobWriter>,
    pub(crate) sources: Vec<u32>,
}

/// What the finishing thread needs, owned.
struct Work {
    service: Arc<TemplateService>,
    tracing: bool,
    spill: Spill,
    generator: String,
    terms: Terms,
    /// Set at the first failure: no thread takes another render.
    failed: AtomicBool,
}

struct Job {
    number: u64,
    rendered: Rendered,
}

struct Done {
    number: u64,
    result: Result<Finished, GeneratorErrorKind>,
}

/// The run's finishing thread, seen from the generator's thread.
pub(crate) struct Keeper {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    /// The number the next render gets.
    next: u64,
    /// Renders finished before they were asked for, by number.
    ready: HashMap<u64, Finished>,
    /// Renders the generator dropped before they were finished.
    abandoned: HashSet<u64>,
    /// The first render that failed so far, and why; renders after it
    /// are not finished.
    failed: Option<(u64, Option<GeneratorErrorKind>)>,
    /// Renders handed over whose result has not come back.
    outstanding: BTreeSet<u64>,
    /// How many threads finish renders.
    threads: usize,
    /// Whether a second core runs them beside the generator's thread.
    beside: bool,
    budget: Arc<Budget>,
}

impl Keeper {
    /// Starts the finishing thread, charged to `budget`.
    pub(crate) fn start(
        service: Arc<TemplateService>,
        tracing: bool,
        spill: Spill,
        generator: &str,
        terms: Terms,
        budget: Arc<Budget>,
    ) -> std::io::Result<Keeper> {
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
        let queue = Arc::new(Mutex::new(queue));
        let (report, done) = std::sync::mpsc::channel::<Done>();
        let work = Arc::new(Work {
            service,
            tracing,
            spill,
            generator: generator.to_owned(),
            terms,
            failed: AtomicBool::new(false),
        });
        let beside = beside();
        let threads = if beside { WORKERS } else { 1 };
        for _ in 0..threads {
            let (work, queue, report, run) =
                (work.clone(), queue.clone(), report.clone(), budget.clone());
            // A thread that cannot start leaves the others to end once
            // the queue's sender (dropped with the error) is gone.
            std::thread::Builder::new()
                .name("seams-keeper".to_owned())
                .spawn(move || {
                    let _entered = run.enter();
                    budget::enforced(|| work.serve(&queue, &report, &run));
                })?;
        }
        Ok(Keeper {
            jobs: Some(jobs),
            done,
            next: 0,
            ready: HashMap::new(),
            abandoned: HashSet::new(),
            failed: None,
            outstanding: BTreeSet::new(),
            threads,
            beside,
            budget,
        })
    }

    /// Whether the finishing thread would wait for work: then a render to
    /// be traced is better made plainly on the generator's thread and
    /// traced, in a second render, on this one. Made once, the tracing
    /// render is the only render, on the generator's thread; made
    /// twice, the run spends more but on two cores, and the text and trace
    /// are the same (see `TemplateService::render_json_to_trace`).
    pub(crate) fn idle(&mut self) -> bool {
        self.collect();
        self.beside && self.outstanding.len() < IDLE + self.threads - 1
    }

    /// Hands `rendered` over to be finished, waiting while the queue is
    /// full; its number, or `None` once a render has failed.
    pub(crate) fn submit(&mut self, rendered: Rendered) -> Option<u64> {
        self.collect();
        if self.failed.is_some() {
            return None;
        }
        let number = self.next;
        let mut job = Job { number, rendered };
        loop {
            let Some(jobs) = &self.jobs else {
                return None;
            };
            match jobs.try_send(job) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) => {
                    job = back;
                    // Results come back while the queue drains.
                    if !self.receive(Some(Duration::from_millis(50))) {
                        return None;
                    }
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.lost();
                    return None;
                }
            }
        }
        self.next += 1;
        self.outstanding.insert(number);
        Some(number)
    }

    /// Render `number`, finished; `None` when it or an earlier render
    /// failed (see [`Keeper::take_failure`]).
    pub(crate) fn wait(&mut self, number: u64) -> Option<Finished> {
        loop {
            if let Some(finished) = self.ready.remove(&number) {
                return Some(finished);
            }
            if self.failed.as_ref().is_some_and(|(at, _)| *at <= number) {
                return None;
            }
            if !self.receive(None) {
                return None;
            }
        }
    }

    /// Forgets render `number`: the generator dropped it.
    pub(crate) fn discard(&mut self, number: u64) {
        if self.ready.remove(&number).is_none() {
            self.abandoned.insert(number);
        }
    }

    /// Whether a render has failed, from the results back so far.
    pub(crate) fn has_failed(&mut self) -> bool {
        self.collect();
        self.failed.is_some()
    }

    /// Waits until every render handed over is finished; false when one
    /// failed.
    pub(crate) fn finish(&mut self) -> bool {
        while !self.outstanding.is_empty() && self.failed.is_none() {
            if !self.receive(None) {
                break;
            }
        }
        self.failed.is_none()
    }

    /// Why the first failed render failed, once every render before it is
    /// finished (one of them may fail too, and be the first); asked once.
    pub(crate) fn take_failure(&mut self) -> Option<GeneratorErrorKind> {
        while let Some((at, _)) = &self.failed
            && self.outstanding.first().is_some_and(|first| first < at)
        {
            if !self.receive(None) {
                break;
            }
        }
        self.failed.as_mut().and_then(|(_, why)| why.take())
    }

    /// Takes every result already back.
    fn collect(&mut self) {
        while !self.outstanding.is_empty()
            && self.failed.is_none()
            && self.receive(Some(Duration::ZERO))
        {}
    }

    /// Takes one result, waiting up to `wait` (until one comes when
    /// `None`); false when none came, or none can come.
    fn receive(&mut self, wait: Option<Duration>) -> bool {
        let done = match wait {
            None => loop {
                match self.done.recv_timeout(Duration::from_millis(100)) {
                    // A stopped budget stops the finishing thread for good.
                    Err(RecvTimeoutError::Timeout) if self.budget.stopped().is_some() => {
                        break Err(RecvTimeoutError::Disconnected);
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    other => break other,
                }
            },
            Some(wait) if wait.is_zero() => self.done.try_recv().map_err(|e| match e {
                std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            }),
            Some(wait) => self.done.recv_timeout(wait),
        };
        match done {
            Ok(done) => {
                self.record(done);
                true
            }
            Err(RecvTimeoutError::Timeout) => {
                wait.is_some_and(|w| !w.is_zero()) && self.budget.stopped().is_none()
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.lost();
                false
            }
        }
    }

    /// Takes in one result.
    fn record(&mut self, Done { number, result }: Done) {
        self.outstanding.remove(&number);
        match result {
            Ok(finished) => {
                if !self.abandoned.remove(&number) {
                    self.ready.insert(number, finished);
                }
            }
            Err(why) => {
                if self.failed.as_ref().is_none_or(|(at, _)| number < *at) {
                    self.failed = Some((number, Some(why)));
                }
            }
        }
    }

    /// The threads are gone: they stopped after a failure, panicked past
    /// their catch, or their budget stopped them (then the run is
    /// reported stopped anyway).
    fn lost(&mut self) {
        self.jobs = None;
        // What they sent before they went says why, when anything does:
        // threads that stop after a failure have sent it (a render handed
        // over meanwhile finds them gone before that failure is read).
        while let Ok(done) = self.done.try_recv() {
            self.record(done);
        }
        // Nothing more comes back: what was not is what failed.
        let first = self.outstanding.first().copied().unwrap_or(self.next);
        self.outstanding.clear();
        if self.failed.as_ref().is_none_or(|(at, _)| first < *at) {
            self.failed = Some((
                first,
                Some(GeneratorErrorKind::Internal(
                    "the thread finishing renders ended early".to_owned(),
                )),
            ));
        }
    }
}

/// Whether the machine has a second core.
fn beside() -> bool {
    seams_model::cores() > 1
}

impl Work {
    /// Finishes jobs in order until the generator's side hangs up; after a
    /// failure, takes no more.
    fn serve(
        &self,
        queue: &Mutex<Receiver<Job>>,
        report: &std::sync::mpsc::Sender<Done>,
        budget: &Budget,
    ) {
        // Jobs are taken in order, so when one fails, every job before it
        // is taken already and is finished by the thread that took it.
        let mut citations = Citations::new();
        while !self.failed.load(Ordering::Relaxed) {
            let job = queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv_timeout(Duration::from_millis(100));
            let job = match job {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) if budget.stopped().is_none() => continue,
                Err(_) => return,
            };
            let Job { number, rendered } = job;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.finish(rendered, &mut citations)
            }))
            .unwrap_or_else(|payload| Err(GeneratorErrorKind::from_panic(&*payload)));
            if result.is_err() {
                self.failed.store(true, Ordering::Relaxed);
            }
            if report.send(Done { number, result }).is_err() {
                return;
            }
        }
    }

    fn finish(
        &self,
        mut rendered: Rendered,
        citations: &mut Citations,
    ) -> Result<Finished, GeneratorErrorKind> {
        let start = if self.tracing {
            Some(
                self.service
                    .trace_to_sidecar(&mut rendered, &self.generator, citations)?,
            )
        } else {
            None
        };
        let written = |e: std::io::Error| GeneratorErrorKind::Write {
            dir: self.spill.dir().display().to_string(),
            message: e.to_string(),
        };
        let mut text = BlobWriter::new(&self.spill);
        text.write(rendered.text.as_bytes()).map_err(written)?;
        let text = text.finish();
        drop(rendered);
        let (sidecar, sources) = match start {
            Some(start) => {
                let mut sidecar = BlobWriter::new(&self.spill);
                sidecar.write(start.head.as_bytes()).map_err(written)?;
                let sources =
                    citations.run_numbers(&start, |texts| self.terms.intern_shared(texts))?;
                (Some(sidecar), sources)
            }
            None => (None, Vec::new()),
        };
        Ok(Finished {
            text,
            sidecar,
            sources,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::Sink;
    use std::time::Instant;

    fn spill(dir: &std::path::Path) -> Spill {
        Spill::of(&Sink::Files {
            dir: dir.to_owned(),
            hold_bytes: 1 << 20,
        })
        .unwrap()
    }

    fn start(service: &Arc<TemplateService>, spill: &Spill, budget: &Arc<Budget>) -> Keeper {
        Keeper::start(
            service.clone(),
            true,
            spill.clone(),
            "g",
            Terms::default(),
            budget.clone(),
        )
        .unwrap()
    }

    #[test]
    fn threads_gone_after_a_failure_report_that_failure() {
        // The threads stop once a render failed, after saying so: a render
        // handed over before that word is read finds them gone, and the
        // failure, not their going, is what the run reports.
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
        let (report, done) = std::sync::mpsc::channel::<Done>();
        let mut keeper = Keeper {
            jobs: Some(jobs),
            done,
            next: 2,
            ready: HashMap::new(),
            abandoned: HashSet::new(),
            failed: None,
            outstanding: BTreeSet::from([0, 1]),
            threads: 1,
            beside: false,
            budget: Budget::new(1 << 30, Instant::now() + Duration::from_secs(600)),
        };
        let failure =
            GeneratorErrorKind::Protocol(crate::error::ProtocolError::Untraceable { handle: 0 });
        report
            .send(Done {
                number: 0,
                result: Err(failure),
            })
            .unwrap();
        drop((queue, report));
        keeper.lost();
        assert!(!keeper.finish());
        let why = keeper.take_failure().unwrap().to_string();
        assert!(why.contains("render 0 cannot be traced"), "{why}");
        // Gone without a word: what did not come back failed.
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
        let (report, done) = std::sync::mpsc::channel::<Done>();
        keeper.jobs = Some(jobs);
        keeper.done = done;
        keeper.failed = None;
        keeper.outstanding = BTreeSet::from([3]);
        drop((queue, report));
        keeper.lost();
        let why = keeper.take_failure().unwrap().to_string();
        assert!(why.contains("ended early"), "{why}");
    }

    #[test]
    fn every_render_is_finished_in_order_and_the_first_failure_is_the_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path());
        let service = Arc::new(
            TemplateService::new(
                [
                    (
                        "a.txt".to_owned(),
                        "{% for x in xs %}\n- {{ x }}\n{% endfor %}\n".to_owned(),
                    ),
                    (
                        "bad.txt".to_owned(),
                        "one\n{% filter length %}abc{% endfilter %}\n".to_owned(),
                    ),
                ],
                seams_templates::Syntax::Jinja,
            )
            .unwrap(),
        );
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(600));
        let _entered = budget.enter();
        // The loop template alone is made in one render.
        let once = Arc::new(
            TemplateService::new(
                [(
                    "a.txt".to_owned(),
                    "{% for x in xs %}\n- {{ x }}\n{% endfor %}\n".to_owned(),
                )],
                seams_templates::Syntax::Jinja,
            )
            .unwrap(),
        );
        assert!(once.renders_once().is_ok());
        assert!(service.renders_once().is_err());

        // Many renders in a row, made twice or once: the queue fills and
        // the generator's side waits; each gives its text and sidecar.
        for service in [&service, &once] {
            let mut keeper = start(service, &spill, &budget);
            let mut handed = Vec::new();
            for n in 0..200 {
                let context = format!("{{\"xs\": [{n}, {}]}}", n + 1);
                let mut rendered = service.render_json_to_trace("a.txt", &context).unwrap();
                handed.push((n, keeper.submit(rendered.detach()).unwrap()));
            }
            for (n, number) in handed {
                let finished = keeper.wait(number).unwrap();
                let text = format!("- {n}\n- {}\n", n + 1);
                assert_eq!(&*finished.text.read().unwrap(), text.as_bytes());
                let sidecar = finished.sidecar.unwrap().finish();
                let head = String::from_utf8(sidecar.read().unwrap().into_owned()).unwrap();
                assert!(head.contains("\"a.txt:2\""), "{head}");
            }
            assert!(keeper.finish());
        }

        // A render that cannot be traced: it is the failure, however many
        // renders follow it.
        let mut keeper = start(&service, &spill, &budget);
        let bad = service.render_json("bad.txt", "{}").unwrap();
        let mut bad = Some(bad);
        for n in 0..50 {
            let mut rendered = match bad.take() {
                Some(bad) => bad,
                None => service
                    .render_json("a.txt", &format!("{{\"xs\": [{n}]}}"))
                    .unwrap(),
            };
            let _ = keeper.submit(rendered.detach());
        }
        assert!(!keeper.finish());
        let why = keeper.take_failure().unwrap().to_string();
        assert!(
            why.contains("template bad.txt") && why.contains("output line 2"),
            "{why}"
        );
        assert!(
            keeper
                .submit(service.render_json("a.txt", "{\"xs\": []}").unwrap())
                .is_none()
        );
    }

    #[test]
    fn a_failure_finished_first_on_another_thread_is_not_the_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path());
        // Both fail to trace; the first made is slow to, the second quick.
        let failing = "{% filter length %}abc{% endfilter %}\n";
        let service = Arc::new(
            TemplateService::new(
                [
                    (
                        "slow.txt".to_owned(),
                        format!(
                            "{{% for i in range(30000) %}}{{{{ i }}}}{{% endfor %}}\n{failing}"
                        ),
                    ),
                    ("quick.txt".to_owned(), format!("one\n{failing}")),
                ],
                seams_templates::Syntax::Jinja,
            )
            .unwrap(),
        );
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(600));
        let _entered = budget.enter();
        for _ in 0..10 {
            let mut keeper = start(&service, &spill, &budget);
            for name in ["slow.txt", "quick.txt", "quick.txt"] {
                let rendered = service.render_json(name, "{}").unwrap();
                let _ = keeper.submit(rendered);
            }
            assert!(!keeper.finish());
            let why = keeper.take_failure().unwrap().to_string();
            assert!(why.contains("template slow.txt"), "{why}");
        }
    }
}
