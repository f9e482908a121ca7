//! The tracing render's recorder: the engine that runs instrumented
//! templates, whose tracing calls record what each sentinel means (its
//! template line, the include chain, the value and the view objects around
//! it) in a thread's side channel, and keep shared loops' output.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind};

use crate::environment::{RENDER_FUEL, environment};
use crate::sentinel::{
    FRAGMENT_FN, INCLUDE_FN, KEEP_FN, LINE_FN, OWNED_FN, REPLAY_FN, Sentinel, VALUE_FN,
};
use crate::syntax::Syntax;
use crate::view::is_map;

thread_local! {
    /// The tracing render's side channel, reset for every render. A render
    /// runs on one thread, so threads tracing at once each keep their own.
    pub(crate) static TRACE: RefCell<TraceState> = const {
        RefCell::new(TraceState {
            marks: Vec::new(),
            includes: Vec::new(),
            chain: None,
            taken: 0,
            kept: Vec::new(),
            pending: None,
            replays: 0,
        })
    };
    /// The mark of the value a tracing call just handed back: its sentinel
    /// follows the value when it is printed, which the next call to the
    /// formatter does (the call is all of a `{{ }}` tag's expression).
    static PRINTING: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The environment of the tracing render: the same settings, the
/// instrumented templates' filters, and a formatter that prints their
/// sentinels.
pub(crate) fn tracing_environment(syntax: Syntax, origins: &Arc<Origins>) -> Environment<'static> {
    let mut env = environment(syntax);
    // Instrumentation adds calls; the budget grows with them.
    env.set_fuel(Some(RENDER_FUEL * 4));
    let o = origins.clone();
    env.add_filter(LINE_FN, move |args: &[Value]| -> Result<Value, Error> {
        let id = origin_id(args.first(), &o)?;
        let enclosing = Enclosing::first_of(&args[1..]);
        let mark = TRACE.with_borrow_mut(|st| st.mark(&o, id, None, enclosing));
        // The sentinel itself, as a string short enough to be held
        // inline: one is printed for every line, and an object per
        // line cost an allocation each.
        Ok(Value::from(Sentinel::new(mark).as_str()))
    });
    for (name, owned) in [(VALUE_FN, false), (OWNED_FN, true)] {
        let o = origins.clone();
        env.add_filter(name, move |args: &[Value]| -> Result<Value, Error> {
            let id = origin_id(args.first(), &o)?;
            let value = args.get(1).cloned().unwrap_or_default();
            // The object the value was read off; else the value itself,
            // when it is an object printed whole.
            let named = args.get(2).filter(|owner| !owner.is_none());
            // Owned: the owner is the first candidate for the enclosing
            // object too.
            let enclosing = match named {
                Some(owner) if owned && is_map(owner) => Enclosing::Owner,
                _ => Enclosing::first_of(args.get(3..).unwrap_or(&[])),
            };
            let owner = named.unwrap_or(&value).clone();
            let mark = TRACE.with_borrow_mut(|st| st.mark(&o, id, Some(owner), enclosing));
            PRINTING.set(Some(mark));
            Ok(value)
        });
    }
    let o = origins.clone();
    env.add_filter(INCLUDE_FN, move |args: &[Value]| -> Result<Value, Error> {
        let id = origin_id(args.first(), &o)?;
        let name = args.get(1).cloned().unwrap_or_default();
        TRACE.with_borrow_mut(|st| st.include(&o, id, &name, args.get(2..).unwrap_or(&[])));
        Ok(name)
    });
    let o = origins.clone();
    env.add_filter(
        FRAGMENT_FN,
        move |state: &minijinja::State, args: &[Value]| -> Result<bool, Error> {
            let site = fragment_site(args, &o)?;
            let list = args.get(2).cloned().unwrap_or_default();
            let spent = fuel_spent(state);
            match TRACE.with_borrow_mut(|st| st.fragment(&o, site, &list, spent)) {
                // What its first run spent, and a unit for the rounding.
                Some(fuel) => state.consume_fuel(fuel.saturating_add(1)).map(|()| true),
                None => Ok(false),
            }
        },
    );
    env.add_filter(REPLAY_FN, |_: &[Value]| -> Result<Value, Error> {
        TRACE
            .with_borrow_mut(TraceState::replay)
            .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "tracing call out of place"))
    });
    let o = origins.clone();
    env.add_filter(
        KEEP_FN,
        move |state: &minijinja::State, args: &[Value]| -> Result<Value, Error> {
            let site = fragment_site(args, &o)?;
            let output = args.get(3).cloned().unwrap_or_default();
            let spent = fuel_spent(state);
            let list = args.get(2).cloned().unwrap_or_default();
            TRACE.with_borrow_mut(|st| st.keep(&o, site, &list, &output, spent));
            Ok(output)
        },
    );
    env.set_formatter(|out, state, value| {
        // Printing an undefined value fails as in the normal render,
        // whose formatter is the default one (a custom formatter is not
        // held to it).
        if value.is_undefined() {
            minijinja::value::StringInput::new(state, value)?;
        }
        minijinja::escape_formatter(out, state, value)?;
        match PRINTING.take() {
            Some(mark) => out
                .write_str(Sentinel::new(mark).as_str())
                .map_err(Error::from),
            None => Ok(()),
        }
    });
    env
}

/// The fuel a render has spent so far (0 when fuel is not counted).
pub(crate) fn fuel_spent(state: &minijinja::State) -> u64 {
    state.fuel_levels().map_or(0, |(spent, _)| spent)
}

/// The site a call on a shared loop names: its origin id and number.
fn fragment_site(args: &[Value], origins: &Origins) -> Result<(usize, usize), Error> {
    let id = origin_id(args.first(), origins)?;
    let number = args.get(1).and_then(Value::as_usize).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            "tracing call without a valid site",
        )
    })?;
    Ok((id, number))
}

/// The origin id a tracing call names, checked against the origins the
/// instrumentation made: the calls are the host's, but nothing a render
/// receives is trusted to index anything.
fn origin_id(arg: Option<&Value>, origins: &Origins) -> Result<usize, Error> {
    arg.and_then(|v| v.as_usize())
        .filter(|&id| id < origins.lines.len())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                "tracing call without a valid origin",
            )
        })
}

/// A sentinel's meaning. Cheap to record: IRIs are read off the objects
/// only when the trace lines are built, and only where needed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MarkInfo {
    /// The origin id of the line that printed it.
    pub(crate) origin: usize,
    /// Origin ids of the includes around it, outermost first.
    pub(crate) chain: Arc<[usize]>,
    /// For a printed value: the object it was read off (or the value).
    pub(crate) owner: Option<Value>,
    /// The innermost enclosing loop or macro object.
    enclosing: Enclosing,
    /// The object the innermost include was given.
    pub(crate) frame: Option<Value>,
}

impl MarkInfo {
    /// The innermost enclosing loop or macro object.
    pub(crate) fn enclosing(&self) -> Option<&Value> {
        match &self.enclosing {
            Enclosing::None => None,
            Enclosing::Owner => self.owner.as_ref(),
            Enclosing::Other(object) => Some(object),
        }
    }
}

/// A mark's innermost enclosing loop or macro object: most often the
/// object the value was read off, which is then not held twice.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Enclosing {
    None,
    Owner,
    Other(Value),
}

impl Enclosing {
    /// The first of a tracing call's candidates that is an object.
    fn first_of(candidates: &[Value]) -> Enclosing {
        candidates
            .iter()
            .find(|v| is_map(v))
            .map_or(Enclosing::None, |v| Enclosing::Other(v.clone()))
    }
}

#[derive(Debug)]
struct IncludeFrame {
    origin: usize,
    included: Option<usize>,
    object: Option<Value>,
}

/// Templates and lines by origin id.
#[derive(Debug, Default)]
pub(crate) struct Origins {
    templates: Vec<String>,
    /// The index of each template in `templates`: a generator may ship
    /// thousands, so they are not searched one by one.
    index: std::collections::HashMap<String, usize>,
    /// (template index, line) per origin id.
    lines: Vec<(usize, usize)>,
    /// `template:line` per origin id.
    pub(crate) names: Vec<String>,
}

impl Origins {
    pub(crate) fn add(&mut self, template: &str, line: usize) -> usize {
        let t = match self.index.get(template) {
            Some(&t) => t,
            None => {
                self.templates.push(template.to_owned());
                self.index
                    .insert(template.to_owned(), self.templates.len() - 1);
                self.templates.len() - 1
            }
        };
        self.lines.push((t, line));
        self.names.push(format!("{template}:{line}"));
        self.lines.len() - 1
    }
}

/// The most marks a tracing render is given room for before it starts.
const MARKS_RESERVED: usize = 16 << 10;

/// The tracing render's side channel ([`TRACE`]), reset for every render.
#[derive(Debug)]
pub(crate) struct TraceState {
    pub(crate) marks: Vec<MarkInfo>,
    /// Shared loops' output, kept across renders ([`crate::fragment`]).
    kept: Vec<Kept>,
    /// What the last call on a shared loop found.
    pending: Option<Pending>,
    /// How many loops were printed from kept output, ever.
    pub(crate) replays: usize,
    includes: Vec<IncludeFrame>,
    /// The include chain, rebuilt only when `includes` changes.
    chain: Option<Arc<[usize]>>,
    /// How many marks the render before took away: the next, likely
    /// alike, gets room for as many at once instead of growing to it (up
    /// to [`MARKS_RESERVED`], so that a huge render does not make every
    /// later one hold room it does not use).
    taken: usize,
}

impl TraceState {
    pub(crate) fn reset(&mut self) {
        self.pending = None;
        self.marks.clear();
        self.marks.reserve(self.taken.min(MARKS_RESERVED));
        self.includes.clear();
        self.chain = None;
        PRINTING.set(None);
    }

    /// The marks, taken away with the render they describe.
    pub(crate) fn take_marks(&mut self) -> Vec<MarkInfo> {
        self.taken = self.marks.len();
        std::mem::take(&mut self.marks)
    }

    /// Drops include frames that have ended: text of template `t` is
    /// printed inside the innermost include of `t`.
    fn unwind_to(&mut self, origins: &Origins, id: usize) {
        let template = origins.lines[id].0;
        while let Some(top) = self.includes.last() {
            if top.included == Some(template) {
                break;
            }
            self.includes.pop();
            self.chain = None;
        }
    }

    fn mark(
        &mut self,
        origins: &Origins,
        id: usize,
        owner: Option<Value>,
        enclosing: Enclosing,
    ) -> usize {
        self.unwind_to(origins, id);
        let includes = &self.includes;
        let chain = self
            .chain
            .get_or_insert_with(|| includes.iter().map(|f| f.origin).collect())
            .clone();
        let frame = self.includes.iter().rev().find_map(|f| f.object.clone());
        self.marks.push(MarkInfo {
            origin: id,
            chain,
            owner,
            enclosing,
            frame,
        });
        self.marks.len() - 1
    }

    /// Whether the shared loop `site` may print its output kept for
    /// `list`: then the fuel its first run spent; else it runs, and
    /// [`TraceState::keep`] may keep its output. Only at the top level of
    /// the template rendered (no include open), where the list is the
    /// context's own field.
    fn fragment(
        &mut self,
        origins: &Arc<Origins>,
        site: (usize, usize),
        list: &Value,
        spent: u64,
    ) -> Option<u64> {
        self.pending = None;
        if !self.includes.is_empty() || crate::fragment::list_of(list).is_none() {
            return None;
        }
        let found = self.kept.iter().position(|k| {
            Arc::ptr_eq(&k.owner, origins)
                && k.site == site
                && crate::fragment::same_list(&k.list, list)
        });
        match found {
            Some(at) => {
                self.pending = Some(Pending::Replay(at));
                Some(self.kept[at].fuel)
            }
            None => {
                self.pending = Some(Pending::Keep {
                    site,
                    fuel: spent,
                    marks: self.marks.len(),
                });
                None
            }
        }
    }

    /// The output kept for the loop [`TraceState::fragment`] found, its
    /// marks added to this render's.
    fn replay(&mut self) -> Option<Value> {
        let Some(Pending::Replay(at)) = self.pending.take() else {
            return None;
        };
        let kept = self.kept.get(at)?;
        self.replays += 1;
        let base = self.marks.len();
        self.marks.extend(kept.marks.iter().cloned());
        Some(if base == kept.base {
            kept.text.clone()
        } else {
            let text = kept.text.as_str().unwrap_or_default();
            Value::from_safe_string(crate::fragment::renumber(text, kept.base, base))
        })
    }

    /// Keeps the output the loop `site` printed over `list`, when its
    /// sentinels are exactly the marks it added.
    fn keep(
        &mut self,
        origins: &Arc<Origins>,
        site: (usize, usize),
        list: &Value,
        output: &Value,
        spent: u64,
    ) {
        let Some(Pending::Keep {
            site: s,
            fuel,
            marks,
        }) = self.pending.take()
        else {
            return;
        };
        let Some(text) = output.as_str() else { return };
        if s != site
            || marks > self.marks.len()
            || !self.includes.is_empty()
            || text.len() > crate::fragment::KEPT_BYTES_MAX
            || !crate::fragment::numbered_from(text, marks, self.marks.len() - marks)
        {
            return;
        }
        self.kept
            .retain(|k| !(Arc::ptr_eq(&k.owner, origins) && k.site == site));
        self.kept.push(crate::fragment::Kept {
            owner: origins.clone(),
            site,
            list: list.clone(),
            text: output.clone(),
            base: marks,
            marks: self.marks[marks..].to_vec(),
            fuel: spent.saturating_sub(fuel),
        });
        let bytes = |kept: &[Kept]| -> usize {
            kept.iter()
                .map(|k| k.text.as_str().map_or(0, str::len))
                .sum()
        };
        while self.kept.len() > crate::fragment::KEPT_MAX
            || bytes(&self.kept) > crate::fragment::KEPT_BYTES_MAX
        {
            self.kept.remove(0);
        }
    }

    fn include(&mut self, origins: &Origins, id: usize, name: &Value, enclosing: &[Value]) {
        self.unwind_to(origins, id);
        let included = name.as_str().and_then(|n| origins.index.get(n).copied());
        self.includes.push(IncludeFrame {
            origin: id,
            included,
            object: enclosing.iter().find(|v| is_map(v)).cloned(),
        });
        self.chain = None;
    }
}

/// A shared loop's output kept, with its marks.
type Kept = crate::fragment::Kept<Origins, MarkInfo>;

/// Between the calls around a shared loop: the kept output to print, or
/// where the loop's run started (its fuel spent, its first mark).
#[derive(Debug)]
enum Pending {
    Replay(usize),
    Keep {
        site: (usize, usize),
        fuel: u64,
        marks: usize,
    },
}
