//! A generator's store data: its locked-down WASI context and the host
//! services it may call, each bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::budget::{self, Alongside, Budget};
use crate::capture::Capture;
use crate::error::GeneratorErrorKind;
use crate::keeper::{Finished, Keeper};
use crate::limits::Limits;
use crate::seeded::Seeded;
use crate::sink::{Blob, BlobWriter, Sink, Spill};
use crate::terms::Terms;
use seams_model::{Model, QueryError};
use seams_templates::{Rendered, TemplateError, TemplateService};

/// A limit hit inside a host service or the limiter, recorded because the
/// trap itself does not say which.
#[derive(Debug, Clone)]
pub(crate) enum Violation {
    Memory,
    Deadline,
    OutputSize,
    Handles,
    Fuel,
}

/// Why a host service refused a call (the call returns it to the guest;
/// each protocol version maps it to its own error type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServiceError {
    /// The query was refused or failed.
    Query(String),
    /// The template could not be rendered.
    Template(String),
}

/// A render handed to the run's [`Keeper`] to be traced and written to
/// its [`Sink`]: finished or not yet.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The length of its text.
    len: usize,
    state: SlotState,
}

#[derive(Debug)]
enum SlotState {
    Waiting(u64),
    Finished(Box<Finished>),
}

/// A render written to the run's [`Sink`] as soon as it was made: what
/// stays of it in memory.
#[derive(Debug)]
pub(crate) struct Kept {
    /// The text.
    pub(crate) text: Blob,
    /// The sidecar's start, written; it is finished once the render's
    /// output path is known.
    pub(crate) sidecar: Option<BlobWriter>,
    /// The union of the trace's terms, as indexes into the run's terms.
    pub(crate) sources: Vec<u32>,
}

/// Templates being parsed on a thread of their own, and what the run
/// needs once they are (see [`Sandbox::set_templates`]).
struct Parsing {
    parsed: Alongside<Result<TemplateService, TemplateError>>,
    tracing: bool,
    sink: Sink,
    generator: String,
}

/// A trap raised by a host service.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct HostTrap(&'static str);

pub(crate) struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    model: Arc<Model>,
    templates: Option<Arc<TemplateService>>,
    /// The templates being parsed beside the generator's `extract`, and
    /// what [`Sandbox::set_templates`] takes once they are.
    parsing: Option<Parsing>,
    /// Whether each render is traced as it is made.
    tracing: bool,
    /// What traces renders and writes them to the run's sink as they
    /// are made; `None` to keep them in memory with the outputs.
    keeper: Option<Keeper>,
    /// The sink's directory, for messages.
    spill_dir: Option<std::path::PathBuf>,
    /// Renders handed to the keeper, by handle.
    kept: HashMap<u32, Slot>,
    /// Every model IRI the run's outputs cite, once: thousands of pages
    /// that each cite the same thousands of IRIs share their strings.
    terms: Terms,
    /// A failure of the host's own work for the generator (its tracing
    /// render), which the trap it raises does not carry.
    failure: Option<GeneratorErrorKind>,
    limits: Limits,
    budget: Arc<Budget>,
    log: Arc<Mutex<Capture>>,
    /// Linear memory charged to the budget.
    memory_bytes: usize,
    /// Fuel the host's work for the generator cost (query answers,
    /// renders), and how much of it is already taken from the store.
    host_fuel: u64,
    host_fuel_settled: u64,
    rendered_bytes: usize,
    rendered_live: usize,
    violation: Option<Violation>,
}

impl Sandbox {
    pub(crate) fn new(model: Arc<Model>, limits: Limits, budget: Arc<Budget>) -> Sandbox {
        let log = Arc::new(Mutex::new(Capture::new(limits.max_log_bytes)));
        // The builder's defaults deny everything else: no preopened
        // directories, no environment or arguments, empty stdin, no sockets.
        let wasi = WasiCtx::builder()
            .stdout(crate::capture::Stream::new(log.clone(), "stdout"))
            .stderr(crate::capture::Stream::new(log.clone(), "stderr"))
            .wall_clock(crate::clock::FixedClock)
            .monotonic_clock(crate::clock::FixedClock)
            .secure_random(Seeded::new(model.hash()))
            .insecure_random(Seeded::new(model.hash()))
            .insecure_random_seed(Seeded::seed(model.hash()))
            .allow_ip_name_lookup(false)
            .allow_tcp(false)
            .allow_udp(false)
            .build();
        Sandbox {
            wasi,
            table: ResourceTable::new(),
            model,
            templates: None,
            parsing: None,
            tracing: false,
            keeper: None,
            spill_dir: None,
            kept: HashMap::new(),
            terms: Terms::default(),
            failure: None,
            limits,
            budget,
            log,
            memory_bytes: 0,
            host_fuel: 0,
            host_fuel_settled: 0,
            rendered_bytes: 0,
            rendered_live: 0,
            violation: None,
        }
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.budget.deadline()
    }

    pub(crate) fn violation(&self) -> Option<&Violation> {
        self.violation.as_ref()
    }

    /// The generator's templates; with `tracing`, each render is traced
    /// as it is made, so that its context need not be kept; then written
    /// to `sink`, so that its text need not be kept either.
    ///
    /// # Errors
    ///
    /// The thread that finishes renders could not be started.
    fn set_templates(
        &mut self,
        templates: Arc<TemplateService>,
        tracing: bool,
        sink: Sink,
        generator: &str,
    ) -> Result<(), GeneratorErrorKind> {
        self.tracing = tracing;
        if let Some(spill) = Spill::of(&sink) {
            self.spill_dir = Some(spill.dir().to_owned());
            let keeper = Keeper::start(
                templates.clone(),
                tracing,
                spill,
                generator,
                self.terms.clone(),
                self.budget.clone(),
            )
            .map_err(|e| {
                GeneratorErrorKind::Internal(format!(
                    "cannot start a thread to finish renders: {e}"
                ))
            })?;
            self.keeper = Some(keeper);
        }
        self.templates = Some(templates);
        Ok(())
    }

    /// Parses `templates` on a thread of their own, charged to the run's
    /// budget, while the generator extracts its view (which seldom
    /// renders):
    /// then [`Sandbox::set_templates`] with the rest, at the first render
    /// or at [`Sandbox::parsed_templates`].
    ///
    /// # Errors
    ///
    /// The thread could not be started.
    pub(crate) fn parse_templates(
        &mut self,
        templates: Vec<(String, String)>,
        syntax: seams_templates::Syntax,
        tracing: bool,
        sink: Sink,
        generator: &str,
    ) -> Result<(), GeneratorErrorKind> {
        let parsed = budget::alongside(&self.budget, "seams-templates", move || {
            if tracing {
                TemplateService::new(templates, syntax)
            } else {
                TemplateService::untraced(templates, syntax)
            }
        })
        .map_err(|e| {
            GeneratorErrorKind::Internal(format!("cannot start a thread to parse templates: {e}"))
        })?;
        self.parsing = Some(Parsing {
            parsed,
            tracing,
            sink,
            generator: generator.to_owned(),
        });
        Ok(())
    }

    /// The generator's templates, waited for if they are being parsed;
    /// `None` before [`Sandbox::parse_templates`].
    ///
    /// # Errors
    ///
    /// They do not parse (named with the template and line), or the
    /// thread finishing renders could not be started.
    pub(crate) fn parsed_templates(
        &mut self,
    ) -> Result<Option<Arc<TemplateService>>, GeneratorErrorKind> {
        if let Some(parsing) = self.parsing.take() {
            let service = match parsing.parsed.join() {
                Some(Ok(service)) => Arc::new(service),
                Some(Err(e)) => return Err(e.into()),
                None => {
                    return Err(GeneratorErrorKind::Internal(
                        "parsing the templates stopped before it finished".to_owned(),
                    ));
                }
            };
            self.set_templates(service, parsing.tracing, parsing.sink, &parsing.generator)?;
        }
        Ok(self.templates.clone())
    }

    /// The failure of the host's own work, if that is what stopped the run:
    /// a render that failed to be traced or written comes first, as it
    /// came before whatever the generator did after it.
    pub(crate) fn take_failure(&mut self) -> Option<GeneratorErrorKind> {
        self.keeper_failure().or_else(|| self.failure.take())
    }

    /// Waits for every render handed to the keeper; the first that failed.
    pub(crate) fn keeper_failure(&mut self) -> Option<GeneratorErrorKind> {
        let keeper = self.keeper.as_mut()?;
        if keeper.finish() {
            return None;
        }
        keeper.take_failure()
    }

    pub(crate) fn take_log(&mut self) -> Vec<String> {
        self.log.lock().expect("log lock").take_lines()
    }

    /// The render behind a handle the generator returned, and what of it
    /// went to the sink (see [`Sandbox::kept`]).
    pub(crate) fn take_rendered(
        &mut self,
        resource: Resource<Rendered>,
    ) -> Result<(Rendered, Option<Slot>), wasmtime::component::ResourceTableError> {
        let rep = resource.rep();
        let rendered = self.table.delete(resource)?;
        let slot = self.kept.remove(&rep);
        self.rendered_live -= 1;
        Ok((rendered, slot))
    }

    /// What of a render went to the sink, once it is finished.
    ///
    /// # Errors
    ///
    /// It, or a render before it, failed to be traced or written.
    pub(crate) fn kept(&mut self, slot: Slot) -> Result<Kept, GeneratorErrorKind> {
        let finished = match slot.state {
            SlotState::Finished(finished) => *finished,
            SlotState::Waiting(number) => self.wait(number)?,
        };
        Ok(Kept {
            text: finished.text,
            sidecar: finished.sidecar,
            sources: finished.sources,
        })
    }

    fn wait(&mut self, number: u64) -> Result<Finished, GeneratorErrorKind> {
        let keeper = self.keeper.as_mut().expect("a waiting render has a keeper");
        keeper.wait(number).ok_or_else(|| {
            keeper.take_failure().unwrap_or_else(|| {
                GeneratorErrorKind::Internal("a render was not finished".to_owned())
            })
        })
    }

    /// The index of each of `terms` in the run's table of terms.
    ///
    /// # Errors
    ///
    /// The table is full.
    pub(crate) fn intern_all(
        &mut self,
        terms: Vec<String>,
    ) -> Result<Vec<u32>, GeneratorErrorKind> {
        self.terms
            .intern_all(terms)
            .map_err(GeneratorErrorKind::from)
    }

    /// The run's table of terms: every term its outputs cite so far, at
    /// its index.
    pub(crate) fn terms(&self) -> Vec<Arc<str>> {
        self.terms.all()
    }

    fn trap(&mut self, violation: Violation, message: &'static str) -> wasmtime::Error {
        self.violation.get_or_insert(violation);
        wasmtime::Error::new(HostTrap(message))
    }

    /// Charges host work to the generator's fuel: one unit per byte the
    /// host reads or writes for it, so that the same model passes or fails
    /// the same way on every machine. Taken from the store's fuel after
    /// each export call ([`Sandbox::unsettled_fuel`]); a call that alone
    /// passes the whole budget stops at once.
    fn charge_fuel(&mut self, bytes: usize) -> wasmtime::Result<()> {
        self.host_fuel = self.host_fuel.saturating_add(bytes as u64);
        if self.host_fuel > self.limits.fuel {
            return Err(self.trap(Violation::Fuel, "fuel ran out in host work"));
        }
        Ok(())
    }

    /// Host fuel not yet taken from the store's, now marked taken.
    pub(crate) fn unsettled_fuel(&mut self) -> u64 {
        let due = self.host_fuel - self.host_fuel_settled;
        self.host_fuel_settled = self.host_fuel;
        due
    }

    /// Host services are not interrupted by epochs; each checks the
    /// deadline itself.
    fn check_deadline(&mut self) -> wasmtime::Result<()> {
        if Instant::now() >= self.deadline() {
            return Err(self.trap(Violation::Deadline, "deadline passed"));
        }
        Ok(())
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wasmtime::ResourceLimiter for Sandbox {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Linear memory shares the budget with what the host allocates for
        // the generator.
        let total = self.memory_bytes - current.min(self.memory_bytes) + desired;
        if total > self.limits.memory_bytes
            || !crate::budget::grow(total.saturating_sub(self.memory_bytes))
        {
            return Err(self.trap(Violation::Memory, "memory cap reached"));
        }
        self.memory_bytes = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Table elements are memory too: 8 bytes or more each.
        if desired.saturating_mul(8) > self.limits.memory_bytes {
            return Err(self.trap(Violation::Memory, "table cap reached"));
        }
        Ok(true)
    }
}

/// The host services, independent of the protocol version: each version's
/// bindings (`since_v0_1_0`, `since_v0_2_0`) implement their `Host` traits
/// with these.
/// Each checks the deadline (epochs do not interrupt host code) and
/// counts what it allocates against the generator's limits.
impl Sandbox {
    pub(crate) fn query(&mut self, sparql: &str) -> wasmtime::Result<Result<String, ServiceError>> {
        self.check_deadline()?;
        let deadline = self.deadline();
        match self.model.query(sparql, deadline, self.limits.memory_bytes) {
            Ok(answer) => {
                self.charge_fuel(sparql.len() + answer.len())?;
                Ok(Ok(answer))
            }
            Err(QueryError::Timeout) => {
                Err(self.trap(Violation::Deadline, "deadline passed in a query"))
            }
            Err(e) => Ok(Err(ServiceError::Query(e.to_string()))),
        }
    }

    /// The model, shared with host work on other threads.
    pub(crate) fn shared_model(&self) -> Arc<Model> {
        self.model.clone()
    }

    /// The run's budget, for host work on other threads.
    pub(crate) fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    pub(crate) fn model(&self) -> &Model {
        &self.model
    }

    pub(crate) fn render(
        &mut self,
        name: &str,
        context: &str,
    ) -> wasmtime::Result<Result<Resource<Rendered>, ServiceError>> {
        self.check_deadline()?;
        if self.rendered_live >= self.limits.max_handles {
            return Err(self.trap(Violation::Handles, "handle cap reached"));
        }
        let service = match self.parsed_templates() {
            Ok(Some(service)) => service,
            Ok(None) => {
                return Ok(Err(ServiceError::Template(
                    "render was called before meta".into(),
                )));
            }
            Err(why) => {
                self.failure = Some(why);
                return Err(wasmtime::Error::new(HostTrap(
                    "the templates could not be used",
                )));
            }
        };
        if self.keeper.as_mut().is_some_and(Keeper::has_failed) {
            return Err(self.keeper_trap());
        }
        let context_bytes = context.len();
        // A render to be traced is made once, instrumented, unless the
        // keeper would otherwise wait: then it traces in a second render.
        // Not when the tracing render reuses loops' output: it then costs
        // less than the normal render.
        let once = self.tracing
            && (service.keeps_fragments() || !self.keeper.as_mut().is_some_and(Keeper::idle));
        let made = if once {
            service.render_json_to_trace(name, context)
        } else {
            service.render_json(name, context)
        };
        let mut rendered = match made {
            Ok(rendered) => rendered,
            Err(e) => return Ok(Err(ServiceError::Template(e.to_string()))),
        };
        self.check_deadline()?;
        // The render reads the context and writes the text; tracing does
        // both again (in one instrumented render or two, the same price).
        let passes = if self.tracing { 2 } else { 1 };
        let len = rendered.text_len();
        self.charge_fuel(passes * (context_bytes + len))?;
        self.rendered_bytes = self.rendered_bytes.saturating_add(len);
        if self.rendered_bytes > self.limits.max_output_bytes {
            return Err(self.trap(Violation::OutputSize, "rendered output cap reached"));
        }
        let slot = match &mut self.keeper {
            // Traced and written on the keeper's thread, while the
            // generator goes on.
            Some(keeper) => match keeper.submit(rendered.detach()) {
                Some(number) => Some(Slot {
                    len,
                    state: SlotState::Waiting(number),
                }),
                None => return Err(self.keeper_trap()),
            },
            None if self.tracing => {
                match service.trace(&mut rendered) {
                    Ok(lines) => {
                        rendered.trace = Some(lines);
                        rendered.shed();
                    }
                    Err(e) => {
                        self.failure = Some(e.into());
                        return Err(wasmtime::Error::new(HostTrap("the tracing render failed")));
                    }
                }
                self.check_deadline()?;
                None
            }
            None => None,
        };
        let handle = self.table.push(rendered)?;
        if let Some(slot) = slot {
            self.kept.insert(handle.rep(), slot);
        }
        self.rendered_live += 1;
        Ok(Ok(handle))
    }

    /// The trap for a render the keeper failed to finish (or could not
    /// take), its failure recorded.
    fn keeper_trap(&mut self) -> wasmtime::Error {
        if let Some(why) = self.keeper.as_mut().and_then(Keeper::take_failure) {
            self.failure = Some(why);
        }
        wasmtime::Error::new(HostTrap("a render could not be traced or written"))
    }

    pub(crate) fn rendered_text(
        &mut self,
        rendered: &Resource<Rendered>,
    ) -> wasmtime::Result<String> {
        let rep = rendered.rep();
        let text = self.table.get(rendered)?.text.clone();
        let Some(slot) = self.kept.remove(&rep) else {
            return Ok(text);
        };
        let finished = match slot.state {
            SlotState::Finished(finished) => *finished,
            SlotState::Waiting(number) => match self.wait(number) {
                Ok(finished) => finished,
                Err(why) => {
                    self.failure = Some(why);
                    return Err(wasmtime::Error::new(HostTrap(
                        "a render could not be traced or written",
                    )));
                }
            },
        };
        // Written already: read back (it was a string when written).
        let read = finished
            .text
            .read()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        self.kept.insert(
            rep,
            Slot {
                len: slot.len,
                state: SlotState::Finished(Box::new(finished)),
            },
        );
        read.map_err(|e| {
            self.failure = Some(self.write_failure(&e));
            wasmtime::Error::new(HostTrap("a written render could not be read back"))
        })
    }

    pub(crate) fn drop_rendered(&mut self, rendered: Resource<Rendered>) -> wasmtime::Result<()> {
        let slot = self.kept.remove(&rendered.rep());
        let r = self.table.delete(rendered)?;
        self.rendered_live -= 1;
        let len = slot.as_ref().map_or(r.text.len(), |s| s.len);
        if let (
            Some(Slot {
                state: SlotState::Waiting(number),
                ..
            }),
            Some(keeper),
        ) = (&slot, &mut self.keeper)
        {
            keeper.discard(*number);
        }
        self.rendered_bytes = self.rendered_bytes.saturating_sub(len);
        Ok(())
    }

    /// The failure of writing to (or reading from) the sink.
    pub(crate) fn write_failure(&self, e: &std::io::Error) -> GeneratorErrorKind {
        let dir = self
            .spill_dir
            .as_ref()
            .map(|dir| dir.display().to_string())
            .unwrap_or_default();
        GeneratorErrorKind::Write {
            dir,
            message: e.to_string(),
        }
    }

    /// A line of the generator's log; `warning` prefixes it.
    pub(crate) fn log(&mut self, warning: bool, message: &str) {
        let prefix = if warning { "warning: " } else { "" };
        // The log keeps no more than its limit: cut before copying.
        let mut end = message.len().min(self.limits.max_log_bytes);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        self.log
            .lock()
            .expect("log lock")
            .push_line(&format!("{prefix}{}", &message[..end]));
    }
}
