//! A replay as a self-contained HTML page (`scopecheck replay --html OUT FILE`).
//!
//! [`record`] runs a trace in lockstep exactly as the text `replay` does
//! (same stopping points) and takes a snapshot of both sides after every op:
//! the eager model's id stack with its two resource arrays, and the lazy
//! side's id stack with its chain of lazy scopes merged in at their
//! `stack_position`, as the refinement relation (`crate::refinement`) puts
//! them. It also runs `crate::refinement::verify` after every op whose
//! answers agree, to mark the first op where the lazy state stops standing
//! for the eager one. [`render`] (`render.rs`) turns the recording into
//! one HTML file with inline CSS and no script; every piece of text from
//! the trace, the file name or an error goes through [`escape`].

use crate::lockstep::{Answer, Pair};
use lazy::mutant::Mutant;
use lazy::LazyStore;
use model::env::resources::{Heap, NativeSlot};
use model::vocab::{trace::Trace, AsyncId, Op};
use model::{Eager, Environment};

mod render;
pub use render::{escape, leading_comment, render, PageInfo};

/// What one slot of a resource array holds at a given depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Past the end of the array.
    Absent,
    /// Inside the array but empty: a hole or `undefined` in the JS array, an
    /// empty slot in the native vector.
    Empty,
    /// A resource (its display text, e.g. `R1`, `main`, `global R5 (reset)`).
    Value(String),
}

impl Cell {
    /// The text shown in the page.
    pub fn text(&self) -> &str {
        match self {
            Cell::Absent => "\u{b7}",
            Cell::Empty => "empty",
            Cell::Value(v) => v,
        }
    }

    /// The slot for comparing the two sides: an absent slot and an empty
    /// one are the same to every reader.
    fn normalised(&self) -> Option<&str> {
        match self {
            Cell::Value(v) => Some(v),
            Cell::Absent | Cell::Empty => None,
        }
    }
}

/// One lazy scope of the chain, as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkView {
    /// Its place in the chain (0 is the outermost).
    pub chain_index: usize,
    /// The scope's own async id.
    pub async_id: AsyncId,
    /// The (execution, trigger) pair it saved instead of pushing.
    pub saved: (AsyncId, AsyncId),
    /// Its resource pointer, read now.
    pub resource: String,
    /// `kStackLength` when it was linked.
    pub stack_position: u32,
}

/// What an entry of the (merged) stack is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// `async_ids_stack[i]`.
    Stack(usize),
    /// A lazy scope of the chain, placed by its `stack_position`.
    Lazy(LinkView),
}

/// One entry of a stack, at the depth eager Node would give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryView {
    /// The index into both resource arrays (0 is the outermost entry).
    pub depth: usize,
    /// A stack entry or a lazy scope.
    pub kind: EntryKind,
    /// The pair a pop of this entry restores.
    pub saved: (AsyncId, AsyncId),
    /// `native_execution_async_resources_[depth]`.
    pub native: Cell,
    /// `execution_async_resources[depth]` (JS).
    pub js: Cell,
    /// The entry differs from the other side's entry at the same depth
    /// (saved pair, native resource with a lazy scope's own resource in
    /// its place, or JS resource).
    pub mismatch: bool,
}

impl EntryView {
    /// The native resource the entry stands for: a lazy scope's own
    /// resource, or the array slot.
    fn effective_native(&self) -> Option<&str> {
        match &self.kind {
            EntryKind::Lazy(link) => Some(&link.resource),
            EntryKind::Stack(_) => self.native.normalised(),
        }
    }
}

/// A resource-array slot past the top of the stack (left over by a pop).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PastTop {
    /// The index.
    pub depth: usize,
    /// The native array there.
    pub native: Cell,
    /// The JS array there.
    pub js: Cell,
}

/// One side's async-context state after an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackView {
    /// `kExecutionAsyncId`, `kTriggerAsyncId`.
    pub current: (AsyncId, AsyncId),
    /// Named counters shown above the stack (`kStackLength`, `kLazyScopes`,
    /// ...), in lines: two lines on each side, so that both stacks start at
    /// the same height.
    pub fields: Vec<Vec<(&'static str, String)>>,
    /// The entries, outermost first; on the lazy side the stack entries and
    /// the lazy scopes interleaved.
    pub entries: Vec<EntryView>,
    /// Non-empty resource-array slots past the top.
    pub past_top: Vec<PastTop>,
    /// Lazy scopes that the merge cannot place (a `stack_position` past
    /// `kStackLength`, or out of order): only a broken lazy side has them.
    pub unplaced: Vec<LinkView>,
    /// The number of lazy scopes in the chain (0 on the eager side).
    pub chain_len: usize,
    /// The process has ended on this side (a terminal observation).
    pub exited: bool,
}

fn slot_text(slot: &NativeSlot, heap: &Heap) -> String {
    match slot {
        NativeSlot::Local(view, owner) if heap.live_scopes.contains(owner) => view.to_string(),
        NativeSlot::Local(view, _) => format!("{view} (its scope returned)"),
        NativeSlot::Global(id) if heap.reset_globals.contains(id) => format!("global {id} (reset)"),
        NativeSlot::Global(id) => format!("global {id}"),
    }
}

/// The eager model's state: `async_ids_stack[..kStackLength]` and the two
/// resource arrays at each index.
pub fn eager_view(e: &Eager) -> StackView {
    let ah = &e.async_hooks;
    let len = ah.fields.k_stack_length as usize;
    let natives = &ah.native_execution_async_resources;
    let js = &ah.js_execution_async_resources;
    let native_cell = |d: usize| match natives.get(d) {
        None => Cell::Absent,
        Some(None) => Cell::Empty,
        Some(Some(slot)) => Cell::Value(slot_text(slot, &e.heap)),
    };
    let js_cell = |d: usize| {
        if d >= js.len() {
            Cell::Absent
        } else {
            js.get(d)
                .map_or(Cell::Empty, |v| Cell::Value(v.to_string()))
        }
    };
    let entries = ah
        .async_ids_stack
        .iter()
        .take(len)
        .enumerate()
        .map(|(d, saved)| EntryView {
            depth: d,
            kind: EntryKind::Stack(d),
            saved: *saved,
            native: native_cell(d),
            js: js_cell(d),
            mismatch: false,
        })
        .collect();
    let f = &ah.fields;
    StackView {
        current: (
            ah.async_id_fields.k_execution_async_id,
            ah.async_id_fields.k_trigger_async_id,
        ),
        fields: eager_fields(f),
        entries,
        past_top: past_top(len, natives.len().max(js.len()), native_cell, js_cell),
        unplaced: Vec::new(),
        chain_len: 0,
        exited: e.exited,
    }
}

/// `kStackLength`, `kTotals`, `kCheck`; `kUsesExecutionAsyncResource`.
fn eager_fields(f: &model::env::fields::Fields) -> Vec<Vec<(&'static str, String)>> {
    vec![
        vec![
            ("kStackLength", f.k_stack_length.to_string()),
            ("kTotals", f.k_totals.to_string()),
            ("kCheck", f.k_check.to_string()),
        ],
        vec![(
            "kUsesExecutionAsyncResource",
            f.k_uses_execution_async_resource.to_string(),
        )],
    ]
}

fn past_top(
    depth: usize,
    end: usize,
    native: impl Fn(usize) -> Cell,
    js: impl Fn(usize) -> Cell,
) -> Vec<PastTop> {
    (depth..end)
        .map(|d| PastTop {
            depth: d,
            native: native(d),
            js: js(d),
        })
        .filter(|p| p.native.normalised().is_some() || p.js.normalised().is_some())
        .collect()
}

/// The lazy side's state: the stack entries and the chain of lazy scopes
/// merged as the refinement relation merges them (the scopes linked at
/// stack position `p` sit above the `p`-th stack entry, in chain order), and
/// the resource arrays, indexed by that merged depth.
pub fn lazy_view<S: LazyStore>(l: &Environment<S>) -> StackView {
    let ah = &l.async_hooks;
    let len = ah.fields.k_stack_length as usize;
    let natives = &ah.native_execution_async_resources;
    let js = ah.js_execution_async_resources.items();
    let native_cell = |d: usize| match natives.get(d) {
        None => Cell::Absent,
        Some(None) => Cell::Empty,
        Some(Some(slot)) => Cell::Value(slot_text(slot, &l.heap)),
    };
    let js_cell = |d: usize| match js.get(d) {
        None => Cell::Absent,
        Some(None) => Cell::Empty,
        Some(Some(v)) => Cell::Value(v.to_string()),
    };
    let links: Vec<LinkView> = ah
        .store
        .lazy()
        .lazy_scopes
        .iter()
        .enumerate()
        .map(|(i, s)| LinkView {
            chain_index: i,
            async_id: s.async_id,
            saved: s.saved,
            resource: slot_text(&s.resource, &l.heap),
            stack_position: s.stack_position,
        })
        .collect();
    let mut entries = Vec::new();
    let mut chain = links.iter().peekable();
    for position in 0..=len {
        while let Some(link) = chain.next_if(|link| link.stack_position as usize == position) {
            let depth = entries.len();
            entries.push(EntryView {
                depth,
                kind: EntryKind::Lazy(link.clone()),
                saved: link.saved,
                native: native_cell(depth),
                js: js_cell(depth),
                mismatch: false,
            });
        }
        if position < len {
            let depth = entries.len();
            let saved = ah.async_ids_stack.get(position).copied().unwrap_or((0, 0));
            entries.push(EntryView {
                depth,
                kind: EntryKind::Stack(position),
                saved,
                native: native_cell(depth),
                js: js_cell(depth),
                mismatch: false,
            });
        }
    }
    let unplaced: Vec<LinkView> = chain.cloned().collect();
    let f = &ah.fields;
    let can_be_lazy = lazy::can_be_lazy(f);
    StackView {
        current: (
            ah.async_id_fields.k_execution_async_id,
            ah.async_id_fields.k_trigger_async_id,
        ),
        fields: vec![
            vec![
                ("kStackLength", f.k_stack_length.to_string()),
                ("kLazyScopes", ah.store.lazy().k_lazy_scopes.to_string()),
                ("depth", ah.depth().to_string()),
            ],
            vec![(
                "a scope opened now",
                if can_be_lazy {
                    "is lazy".to_string()
                } else if f.k_totals > 0 {
                    format!("pushes (kTotals {})", f.k_totals)
                } else {
                    format!(
                        "pushes (kUsesExecutionAsyncResource {})",
                        f.k_uses_execution_async_resource
                    )
                },
            )],
        ],
        past_top: past_top(
            entries.len(),
            natives.len().max(js.len()),
            native_cell,
            js_cell,
        ),
        entries,
        unplaced,
        chain_len: links.len(),
        exited: l.exited,
    }
}

/// Mark the entries that differ between the two sides, depth by depth.
fn mark_mismatches(eager: &mut StackView, lazy: &mut StackView) {
    let n = eager.entries.len().max(lazy.entries.len());
    for d in 0..n {
        let differ = match (eager.entries.get(d), lazy.entries.get(d)) {
            (Some(e), Some(l)) => {
                e.saved != l.saved
                    || e.effective_native() != l.effective_native()
                    || e.js.normalised() != l.js.normalised()
            }
            _ => true,
        };
        if differ {
            if let Some(e) = eager.entries.get_mut(d) {
                e.mismatch = true;
            }
            if let Some(l) = lazy.entries.get_mut(d) {
                l.mismatch = true;
            }
        }
    }
}

/// One op as it ran on both sides.
#[derive(Clone, Debug)]
pub struct Row {
    /// 0-based index of the op in the trace; the page's anchor is `op-{index + 1}`.
    pub index: usize,
    /// The op's 1-based line in the trace file.
    pub line: usize,
    /// Frames open around the op (for indentation, as `trace::print` does).
    pub indent: usize,
    /// The op.
    pub op: Op,
    /// The eager model's answer.
    pub eager: Answer,
    /// The lazy side's answer.
    pub lazy: Answer,
    /// The eager state after the op.
    pub eager_state: StackView,
    /// The lazy state after the op.
    pub lazy_state: StackView,
    /// The refinement check failed after this op (answers equal): why.
    pub refinement: Option<String>,
}

impl Row {
    /// Whether the two sides answered differently.
    pub fn diverged(&self) -> bool {
        !crate::lockstep::agree(&self.eager, &self.lazy)
    }
}

/// How the replay ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Every op ran with equal answers.
    Completed,
    /// The process ended (a terminal observation on both sides); this many
    /// ops of the trace did not run.
    Terminated {
        /// Ops left unrun.
        remaining: usize,
    },
    /// The answers differed at the last row.
    Diverged,
    /// Both sides rejected the last row's op as impossible (bad input: the
    /// text replay exits with 2 there).
    Rejected(String),
}

/// A trace replayed on both sides, with a snapshot after every op.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The ops that ran, in order.
    pub rows: Vec<Row>,
    /// How it ended.
    pub end: End,
    /// The row of the first refinement break (answers equal, states not).
    pub refinement_break: Option<usize>,
    /// The mutant switched on in the lazy side, if any.
    pub mutant: Option<Mutant>,
    /// Ops in the trace.
    pub total_ops: usize,
}

impl Replay {
    /// The row of the first observable divergence, if any.
    pub fn divergence(&self) -> Option<usize> {
        match self.end {
            End::Diverged => self.rows.len().checked_sub(1),
            _ => None,
        }
    }
}

/// Run `trace` in lockstep as the text `replay` does: stop after the op
/// whose answers differ, after an op both sides reject, or when the process
/// has ended on both sides. Check the refinement relation after every op with
/// equal answers, and record both states after every op.
pub fn record(trace: &Trace, mutant: Option<Mutant>) -> Replay {
    match mutant {
        None => record_on(Pair::new(), trace, None),
        Some(m) => record_on(Pair::mutated(m), trace, mutant),
    }
}

/// [`record`] on `pair`, whose lazy side has `mutant` planted.
fn record_on<S: LazyStore>(mut pair: Pair<S>, trace: &Trace, mutant: Option<Mutant>) -> Replay {
    let mut rows = Vec::new();
    let mut refinement_break = None;
    let mut end = End::Completed;
    let mut indent = 0usize;
    for (index, step) in trace.steps.iter().enumerate() {
        if pair.eager.exited && pair.lazy.exited {
            end = End::Terminated {
                remaining: trace.steps.len() - index,
            };
            break;
        }
        if step.op.closes_frame() {
            indent = indent.saturating_sub(1);
        }
        let row_indent = indent;
        if step.op.opens_frame() {
            indent += 1;
        }
        let (eager, lazy) = match pair.step(&step.op) {
            Ok(a) => (a.clone(), a),
            Err((e, l)) => (e, l),
        };
        let same = eager == lazy;
        let refinement = if same && eager.is_ok() && refinement_break.is_none() {
            crate::refinement::verify(&mut pair.eager, &mut pair.lazy).err()
        } else {
            None
        };
        if refinement.is_some() {
            refinement_break = Some(rows.len());
        }
        let mut eager_state = eager_view(&pair.eager);
        let mut lazy_state = lazy_view(&pair.lazy);
        mark_mismatches(&mut eager_state, &mut lazy_state);
        let rejected = match (&eager, same) {
            (Err(e), true) => Some(e.to_string()),
            _ => None,
        };
        rows.push(Row {
            index,
            line: step.line,
            indent: row_indent,
            op: step.op.clone(),
            eager,
            lazy,
            eager_state,
            lazy_state,
            refinement,
        });
        if let Some(why) = rejected {
            end = End::Rejected(why);
            break;
        }
        if !same {
            end = End::Diverged;
            break;
        }
    }
    Replay {
        rows,
        end,
        refinement_break,
        mutant,
        total_ops: trace.steps.len(),
    }
}
