//! Bounded exhaustive exploration with [`stateright`]: every sequence of up to
//! `depth` ops drawn from a small fixed alphabet, run on the eager model and
//! the lazy implementation side by side.
//!
//! The search is stateright's depth-first checker over the nodes (state,
//! depth): a state reached at two depths is two nodes, so deduplicating a
//! node never hides a state reachable within the bound at a shallower depth
//! (what deduplicating states alone in a depth-first search would do). Every
//! node reachable within the bound is visited, so the states visited are
//! exactly the states breadth first visits, and the explorer keeps the
//! shortest diverging path itself (and with one thread the first in alphabet
//! order among the shortest, the one breadth first finds). Depth first, the
//! checker keeps only a fingerprint (8 bytes) per node and a stack of at most
//! `depth` times the alphabet's states: breadth first kept every state of the
//! frontier whole, with its path, which is what made depth 10 too big
//! (`docs/performance.md`, "The explorer's memory").
//!
//! The state is the product of the two sides, plus whether the op that led
//! there made them answer differently and which named situations
//! ([`crate::coverage::SITUATIONS`]) that op met. Counters that never change
//! behaviour (the [`Cost`] account, `ops_applied` beyond "at least one") are
//! normalised after every op ([`Explorable::normalise`]); without that no two
//! paths would ever reach the same state and nothing would deduplicate.
//!
//! An op is enabled in a state when the reference side says so
//! ([`Reference::enabled`]: the model's [`model::Environment::enabled`]);
//! after a terminal observation or a divergence nothing is enabled.
//!
//! The explorer is generic over the two sides ([`explore`]), so that a
//! deliberately broken side can show that it finds divergences;
//! [`explore_pair`] runs it on [`Eager`] and [`Lazy`].

mod letters;
mod sides;
mod state;

pub use letters::*;
pub use sides::*;
pub use state::*;

use crate::canonical::canonicalise_ids;
use crate::coverage::Coverage;
use crate::lockstep::{Answer, Counterexample, Divergence, FoundBy};
use lazy::Lazy;
use model::vocab::{Observation, Op, OpError};
use model::Eager;
use stateright::{Checker, HasDiscoveries, Model, Property};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The named situations (of [`crate::coverage::SITUATIONS`]) checked as
/// `sometimes` properties: the exploration reports a path to each it reaches.
pub const SOMETIMES: [&str; 12] = [
    "js-push-above-lazy",
    "resource-lazy-innermost",
    "js-pop-lazy-matching",
    "js-pop-lazy-wrong",
    "run-in-async-scope-finally-only-lazy",
    "clear-with-lazy",
    "lazy-close-after-clear",
    "hook-enabled-in-lazy",
    "eager-in-lazy",
    "lazy-close-not-innermost",
    "corrupted-on-lazy-close",
    "stop-with-lazy-and-eager",
];

/// The name of the `always` property.
pub const EQUAL_OBSERVATIONS: &str = "lazy observations equal eager observations";

/// How the explorer found a [`Counterexample`]: a shortest diverging trace,
/// [`init_ops`] then `explored_ops` explored ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explored {
    /// The explored ops (without the init ops), the last one diverging.
    pub explored_ops: usize,
}

impl FoundBy for Explored {
    fn header(&self) -> String {
        "Shortest counterexample found by `scopecheck explore`.".to_string()
    }
}

/// What to explore.
#[derive(Clone, Debug)]
pub struct ExploreConfig {
    /// Longest op sequence explored (after [`init_ops`]).
    pub depth: usize,
    /// Checker threads. The counterexample is a shortest one with any
    /// number; with one thread it is also the first of the shortest in
    /// alphabet order (the one a breadth-first search finds). The fixpoint
    /// explorer keeps that one with any number ([`Explorer::step_ranked`]).
    pub threads: usize,
    /// Ops that nest deeper ([`nests`]) are enabled only while the reference
    /// side's [`Reference::nesting`] is below this.
    pub max_nesting: usize,
    /// The alphabet also has [`frame_letters`] (`explore --frames`).
    pub frames: bool,
    /// The alphabet is [`deep_letters`] instead of [`alphabet`]
    /// (`explore --deep`).
    pub deep: bool,
    /// The other bounds ([`Bounds`]).
    pub bounds: Bounds,
    /// States are made canonical ([`crate::canonical`]): the fixpoint
    /// explorer's states ([`crate::fixpoint`]).
    pub canonical: bool,
    /// The fixpoint explorer stops after this many levels (states this many
    /// ops from the start), not a fixpoint then; `None`: no bound.
    pub max_levels: Option<usize>,
    /// The fixpoint explorer takes the letters that only read
    /// ([`Letter::only_reads`]) as steps, as it did before it checked them
    /// in place (`explore --fixpoint --step-reads`): the same states, more
    /// work; for measuring the check.
    pub step_reads: bool,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            depth: 6,
            threads: 1,
            max_nesting: 2,
            frames: false,
            deep: false,
            bounds: Bounds::default(),
            canonical: false,
            max_levels: None,
            step_reads: false,
        }
    }
}

/// The `stateright` model: the two sides, the alphabet and the bound.
pub struct Explorer<E, L> {
    start: (E, L),
    init_ops: Vec<Op>,
    alphabet: Vec<Letter>,
    depth: usize,
    max_nesting: usize,
    bounds: Bounds,
    canonical: bool,
    step_reads: bool,
    pub(crate) shortest: Arc<Mutex<Option<Counterexample<Explored>>>>,
    /// The rank ([`Explorer::step_ranked`]) of the step that found
    /// `shortest`; read and written only while `shortest` is locked.
    shortest_rank: Arc<AtomicU64>,
    leaves: Arc<AtomicUsize>,
    deepest: Arc<AtomicUsize>,
    pub(crate) examples: Arc<Mutex<Vec<Option<Path>>>>,
    /// The rank of the step that found each of `examples`; read and
    /// written only while `examples` is locked.
    example_ranks: Arc<Vec<AtomicU64>>,
    /// Set to stop: no state is expanded any more (the memory limit).
    stop: Arc<AtomicBool>,
    /// Nodes this deep or deeper are not expanded: the depth bound, lowered
    /// to one less than the shortest divergence recorded (a longer or equal
    /// one found later would not be kept).
    expand_below: Arc<AtomicUsize>,
    /// The product fingerprints of the states stored (not boring leaves):
    /// the distinct states, whatever the depths they were reached at.
    distinct: Arc<Mutex<HashSet<u64, BuildHasherDefault<Unhashed>>>>,
    /// `distinct.len()`, read by the progress line without the lock.
    unique: Arc<AtomicUsize>,
    /// Set once the search ended: stateright rebuilds the paths to its
    /// discoveries by replaying ops, which must not lower `expand_below`.
    replaying: Arc<AtomicBool>,
    /// Per checker thread, the successors [`Model::actions`] made for the
    /// state being expanded, taken by [`Model::next_state`].
    successors: Mutex<Successors<E, L>>,
}

/// The successors made for the state a thread expands, by op.
type Successors<E, L> = HashMap<std::thread::ThreadId, Vec<(Op, State<E, L>)>>;

/// A hasher that passes a fingerprint through: the keys of
/// [`Explorer`]'s set of distinct states (and of the fixpoint explorer's
/// set of a level's new states) are hashes already.
#[derive(Default)]
struct Unhashed(u64);

impl Hasher for Unhashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The rank of an explored step that has none: after every ranked one, and
/// of equally short unranked finds the first is kept.
pub(crate) const UNRANKED: u64 = u64::MAX;

/// The rank of the step by letter `letter` (of `letters`) from state
/// `index` of a breadth-first level: the order in which one thread takes
/// the level's steps ([`Explorer::step_ranked`]).
pub(crate) fn rank(index: usize, letter: usize, letters: usize) -> u64 {
    index as u64 * letters as u64 + letter as u64
}

/// What [`Explorer::read`] found.
pub(crate) enum Read<E, L> {
    /// The letter left the state as it was: its successor is the state.
    Same,
    /// The letter made another state, as [`Explorer::step`] makes it.
    Changed(State<E, L>),
}

/// Both sides after an op, before they are normalised ([`Explorer::apply`]).
struct Applied<E, L> {
    eager: E,
    lazy: L,
    eager_answer: Answer,
    lazy_answer: Answer,
    situations: u32,
}

fn is_terminal(answer: &Answer) -> bool {
    match answer {
        Ok(obs) => obs.iter().any(Observation::is_terminal),
        Err(OpError::Exited) => true,
        Err(OpError::Impossible(_)) => false,
        Err(OpError::Internal(_)) => true,
    }
}

fn situation_bits(cov: &Coverage) -> u32 {
    SOMETIMES
        .iter()
        .enumerate()
        .filter(|(_, name)| cov.situations.contains_key(*name))
        .fold(0, |bits, (i, _)| bits | (1 << i))
}

impl<E: Reference, L: Explorable> Explorer<E, L> {
    /// An explorer from `eager` and `lazy` (the state before [`init_ops`]),
    /// over [`alphabet`] (and [`frame_letters`] with `config.frames`), with
    /// the bounds of `config`.
    pub fn new(eager: E, lazy: L, config: &ExploreConfig) -> Self {
        Explorer {
            start: (eager, lazy),
            init_ops: init_ops_for(config.bounds.hooks),
            alphabet: letters(config),
            depth: config.depth,
            max_nesting: config.max_nesting,
            bounds: config.bounds.clone(),
            canonical: config.canonical,
            step_reads: config.step_reads,
            shortest: Arc::new(Mutex::new(None)),
            shortest_rank: Arc::new(AtomicU64::new(UNRANKED)),
            leaves: Arc::new(AtomicUsize::new(0)),
            deepest: Arc::new(AtomicUsize::new(0)),
            examples: Arc::new(Mutex::new(vec![None; SOMETIMES.len()])),
            example_ranks: Arc::new(SOMETIMES.iter().map(|_| AtomicU64::new(UNRANKED)).collect()),
            stop: Arc::new(AtomicBool::new(false)),
            expand_below: Arc::new(AtomicUsize::new(config.depth)),
            distinct: Arc::default(),
            unique: Arc::new(AtomicUsize::new(0)),
            replaying: Arc::new(AtomicBool::new(false)),
            successors: Mutex::default(),
        }
    }

    /// The alphabet the explorer draws ops from.
    pub fn alphabet(&self) -> &[Letter] {
        &self.alphabet
    }

    /// Whether the fixpoint explorer checks letter `letter` (an index into
    /// the alphabet) in place ([`Explorer::read`]) instead of taking it as a
    /// step: it only reads, and [`ExploreConfig::step_reads`] is off.
    pub(crate) fn reads_in_place(&self, letter: usize) -> bool {
        !self.step_reads && self.alphabet[letter].only_reads()
    }

    /// Apply `op` to both sides of `state`; `None` when the reference side
    /// does not enable it (an init op is applied anyway). An `explored`
    /// step records the divergence and the situations it meets, the first
    /// of equally short ones kept; a step that is not (a replay) records
    /// nothing.
    pub(crate) fn step(&self, state: &State<E, L>, op: &Op, explored: bool) -> Option<State<E, L>> {
        if !explored {
            let applied = self.apply(state, op);
            return Some(self.finish(state, op, applied, None));
        }
        self.step_ranked(state, op, UNRANKED)
    }

    /// An explored [`Explorer::step`] of rank `rank`: of equally short
    /// divergences (and paths to a situation) the one of the lowest rank is
    /// kept, whichever thread found it first. The fixpoint explorer ranks
    /// the steps of a level by the state's index and the letter
    /// ([`rank`]), the order one thread takes them in, so that its
    /// counterexample and situation paths are the same with any number of
    /// threads.
    pub(crate) fn step_ranked(
        &self,
        state: &State<E, L>,
        op: &Op,
        rank: u64,
    ) -> Option<State<E, L>> {
        if !state.eager.enabled(op) {
            return None;
        }
        let applied = self.apply(state, op);
        Some(self.finish(state, op, applied, Some(rank)))
    }

    /// [`Explorer::step`] of a letter that only reads
    /// ([`Letter::only_reads`]), checked in place (issue 57, point 3):
    /// `Some(Read::Same)` when both sides after the op, their counters
    /// forgotten ([`Explorable::forget_counters`]), equal both sides of
    /// `state`, the answers agree and neither ends the process nor meets a
    /// named situation. The successor is then `state` itself, which is
    /// already seen: [`Explorer::step`] would make it again, normalising,
    /// renaming and hashing it only to find it seen (the sides of `state`
    /// are normalised and canonical, and doing that again changes nothing,
    /// `a_read_checked_in_place_is_the_state_it_was_read_in`). Otherwise
    /// the successor [`Explorer::step`] makes, from the same application of
    /// the op: a letter that only reads in the eager model and changes the
    /// side under test is a new state, as it is without the check.
    pub(crate) fn read(&self, state: &State<E, L>, op: &Op, rank: u64) -> Option<Read<E, L>> {
        if !state.eager.enabled(op) {
            return None;
        }
        let mut applied = self.apply(state, op);
        let same = applied.situations == 0
            && !is_terminal(&applied.eager_answer)
            && !is_terminal(&applied.lazy_answer)
            && crate::lockstep::agree(&applied.eager_answer, &applied.lazy_answer)
            && {
                applied.eager.forget_counters();
                applied.lazy.forget_counters();
                applied.eager == state.eager && applied.lazy == state.lazy
            };
        Some(if same {
            Read::Same
        } else {
            Read::Changed(self.finish(state, op, applied, Some(rank)))
        })
    }

    /// Both sides of `state` after `op`, not yet normalised, with their
    /// answers and the named situations the op met.
    fn apply(&self, state: &State<E, L>, op: &Op) -> Applied<E, L> {
        let mut eager = state.eager.clone();
        let eager_answer = eager.apply(op);
        let mut lazy = state.lazy.clone();
        let mut coverage = Coverage::default();
        let closing_lazy = (state.lazy.lazy_view()).is_some_and(|l| l.closes_lazy_scope(op));
        if let Some(before) = state.lazy.lazy_view() {
            before.before_op(&mut coverage, op);
        }
        // A panic of the side under test is a divergence, as in the
        // lockstep harness; the state is never expanded afterwards.
        let lazy_answer = crate::lockstep::catch_panic(|| lazy.apply(op));
        if let (Some(after), Ok(obs)) = (lazy.lazy_view(), &lazy_answer) {
            after.after_op(&mut coverage, closing_lazy, op, obs);
        }
        Applied {
            eager,
            lazy,
            eager_answer,
            lazy_answer,
            situations: situation_bits(&coverage),
        }
    }

    /// The state `applied` makes after `state`: both sides normalised (and
    /// renamed, for canonical states), the divergence and situations met
    /// recorded when the step is explored (`rank` is its rank, `None` for a
    /// replay), the fingerprint taken.
    fn finish(
        &self,
        state: &State<E, L>,
        op: &Op,
        applied: Applied<E, L>,
        rank: Option<u64>,
    ) -> State<E, L> {
        let Applied {
            mut eager,
            mut lazy,
            eager_answer: e,
            lazy_answer: l,
            situations,
        } = applied;
        eager.normalise();
        lazy.normalise();
        if self.canonical {
            if let (Some(e), Some(l)) = (eager.renamable(), lazy.renamable()) {
                canonicalise_ids(e, l, ALPHABET_MAX_ID);
            }
        }
        let ended = is_terminal(&e) || is_terminal(&l);
        let trace = if rank.is_some() {
            state.trace.then(op.clone())
        } else {
            state.trace.clone()
        };
        let diverged = (!crate::lockstep::agree(&e, &l)).then(|| Box::new((e, l)));
        if let (Some(answers), Some(rank)) = (&diverged, rank) {
            self.record(&trace, answers, rank);
        }
        if let (1.., Some(rank)) = (situations, rank) {
            self.record_example(&trace, situations, rank);
        }
        let mut next = State {
            eager,
            lazy,
            diverged,
            ended,
            situations,
            trace,
            identity: 0,
        };
        next.identity = self.identity(&next);
        next
    }

    /// Keep a shortest path to each situation met (of equally short ones,
    /// the lowest rank, then the first).
    fn record_example(&self, trace: &Path, situations: u32, rank: u64) {
        let mut examples = self.examples.lock().unwrap_or_else(PoisonError::into_inner);
        for (i, example) in examples.iter_mut().enumerate() {
            let kept = &self.example_ranks[i];
            let before = example
                .as_ref()
                .is_none_or(|e| (trace.len(), rank) < (e.len(), kept.load(Ordering::Relaxed)));
            if situations & (1 << i) != 0 && before {
                *example = Some(trace.clone());
                kept.store(rank, Ordering::Relaxed);
            }
        }
    }

    /// Keep the shortest diverging trace seen (of equally short ones, the
    /// lowest rank, then the first), and expand no node from which only
    /// longer or equal ones can be reached.
    fn record(&self, trace: &Path, answers: &(Answer, Answer), rank: u64) {
        let mut shortest = self.shortest.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = self.shortest_rank.load(Ordering::Relaxed);
        if (shortest.as_ref())
            .is_some_and(|c| (c.found_by.explored_ops, kept) <= (trace.len(), rank))
        {
            return;
        }
        self.shortest_rank.store(rank, Ordering::Relaxed);
        if !self.replaying.load(Ordering::Relaxed) {
            self.expand_below
                .fetch_min(trace.len().saturating_sub(1), Ordering::Relaxed);
        }
        let mut ops = self.init_ops.clone();
        ops.extend(trace.ops());
        let (op, index) = (ops[ops.len() - 1].clone(), ops.len() - 1);
        *shortest = Some(Counterexample {
            ops,
            divergence: Box::new(Divergence {
                index,
                op,
                eager: answers.0.clone(),
                lazy: answers.1.clone(),
                refinement: None,
            }),
            found_by: Explored {
                explored_ops: trace.len(),
            },
        });
    }

    /// The ops of the alphabet the bounds leave in `state`, in alphabet
    /// order (the model may still refuse some: [`Explorer::step`] asks it).
    pub(crate) fn candidates(&self, state: &State<E, L>) -> Vec<Op> {
        (self.candidate_letters(state).into_iter())
            .map(|(_, op)| op)
            .collect()
    }

    /// [`Explorer::candidates`] with each op's letter (its index in the
    /// alphabet), from which the fixpoint explorer replays a path.
    pub(crate) fn candidate_letters(&self, state: &State<E, L>) -> Vec<(usize, Op)> {
        let e = &state.eager;
        let current = e.execution_async_id();
        let may_nest = e.nesting() < self.max_nesting;
        let below = |bound: Option<usize>, n: usize| bound.is_none_or(|b| n < b);
        let b = &self.bounds;
        let may_tick = below(b.max_ticks, e.queued_ticks());
        let may_queue = below(b.max_microtasks, e.queued_microtasks());
        let may_push_js = below(b.max_js, e.js_entries());
        (self.alphabet.iter().enumerate())
            .map(|(i, letter)| (i, letter.op(current)))
            .filter(|(_, op)| may_nest || !nests(op))
            .filter(|(_, op)| may_tick || !matches!(op, Op::NextTick { .. } | Op::NextTickBody))
            .filter(|(_, op)| {
                may_queue
                    || !matches!(
                        op,
                        Op::QueueMicrotask
                            | Op::QueueMicrotaskBody
                            | Op::PromiseThen
                            | Op::PromiseThenBody
                            | Op::PromiseReject
                    )
            })
            .filter(|(_, op)| {
                may_push_js
                    || !matches!(op, Op::EmitBefore { .. } | Op::EnterRunInAsyncScope { .. })
            })
            .collect()
    }

    /// The identity of `state`: [`State::product_fingerprint`], or with
    /// canonical states [`State::state_fingerprint`]: the fixpoint explorer
    /// records situations as successors are made, so they are not part of
    /// a state (a state reached by ops that met different situations has
    /// the same successors).
    fn identity(&self, state: &State<E, L>) -> u64 {
        if self.canonical {
            state.state_fingerprint()
        } else {
            state.product_fingerprint()
        }
    }

    /// The start state: [`init_ops`] applied to both sides.
    pub(crate) fn start_state(&self) -> State<E, L> {
        let mut state = State {
            eager: self.start.0.clone(),
            lazy: self.start.1.clone(),
            diverged: None,
            ended: false,
            situations: 0,
            trace: Path::default(),
            identity: 0,
        };
        for op in &self.init_ops {
            if state.diverged.is_some() || state.ended {
                break;
            }
            if let Some(next) = self.step(&state, op, false) {
                state = next;
            }
        }
        // Situations met by the init ops are not explored paths.
        state.situations = 0;
        state.identity = self.identity(&state);
        state
    }
}

fn observations_equal<E: Reference, L: Explorable>(_: &Explorer<E, L>, s: &State<E, L>) -> bool {
    s.diverged.is_none()
}

fn met<const I: usize, E: Reference, L: Explorable>(_: &Explorer<E, L>, s: &State<E, L>) -> bool {
    s.situations & (1 << I) != 0
}

macro_rules! sometimes {
    ($($i:literal)*) => {
        vec![$(Property::sometimes(SOMETIMES[$i], met::<$i, E, L>)),*]
    };
}

impl<E: Reference, L: Explorable> Model for Explorer<E, L> {
    type State = State<E, L>;
    type Action = Op;

    fn init_states(&self) -> Vec<State<E, L>> {
        vec![self.start_state()]
    }

    /// The ops enabled in `state`. Their successors are made here, in
    /// alphabet order, and kept for [`Model::next_state`]; an op whose
    /// successor is the same node as an earlier letter's is left out. The
    /// ops are listed in reverse: the depth-first checker pushes them on its
    /// stack in this order and pops the last first. So nodes are expanded in
    /// alphabet order, and successors made (and divergences and situations
    /// recorded) in alphabet order too: the first path that reaches a node
    /// is its first in alphabet order, as breadth first finds it.
    fn actions(&self, state: &State<E, L>, actions: &mut Vec<Op>) {
        let expand_below = self.expand_below.load(Ordering::Relaxed);
        if state.diverged.is_some() || state.ended || state.depth() >= expand_below {
            return;
        }
        // Stopped (the memory limit): the checker drains its queue.
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        let mut made: Vec<(Op, State<E, L>)> = Vec::new();
        for op in self.candidates(state) {
            let Some(next) = self.step(state, &op, true) else {
                continue;
            };
            if made.iter().all(|(_, other)| *other != next) {
                made.push((op, next));
            }
        }
        actions.extend(made.iter().rev().map(|(op, _)| op.clone()));
        let mut successors = self
            .successors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        successors.insert(std::thread::current().id(), made);
    }

    /// The successor [`Model::actions`] made, or (when stateright rebuilds
    /// a path and asks for one op) made now.
    fn next_state(&self, state: &State<E, L>, op: Op) -> Option<State<E, L>> {
        let made = {
            let mut successors = self
                .successors
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            (successors.get_mut(&std::thread::current().id())).and_then(|made| {
                let i = made
                    .iter()
                    .position(|(o, n)| *o == op && n.trace.is_after(&state.trace))?;
                Some(made.swap_remove(i).1)
            })
        };
        made.or_else(|| self.step(state, &op, true))
    }

    /// A state at the depth bound has no successors; when the op that led
    /// there neither diverged nor met a situation, no property can be
    /// discovered there either, so it is counted and dropped instead of
    /// stored (at depth 8 most states are such leaves). Every other state is
    /// counted among the distinct states (once, by its product fingerprint).
    fn within_boundary(&self, state: &State<E, L>) -> bool {
        self.deepest.fetch_max(state.depth(), Ordering::Relaxed);
        let boring_leaf = !state.trace.is_empty()
            && state.depth() >= self.depth
            && state.diverged.is_none()
            && state.situations == 0;
        if boring_leaf {
            self.leaves.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let new =
            (self.distinct.lock().unwrap_or_else(PoisonError::into_inner)).insert(state.identity);
        if new {
            self.unique.fetch_add(1, Ordering::Relaxed);
        }
        true
    }

    fn format_action(&self, op: &Op) -> String {
        op.to_string()
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = vec![Property::always(
            EQUAL_OBSERVATIONS,
            observations_equal::<E, L>,
        )];
        properties.extend(sometimes!(0 1 2 3 4 5 6 7 8 9 10 11));
        properties
    }
}

/// A `sometimes` property and whether the exploration reached it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SituationReached {
    /// The situation's name in [`crate::coverage::SITUATIONS`].
    pub name: &'static str,
    /// The checker discovered the `sometimes` property.
    pub discovered: bool,
    /// A shortest explored path to the situation (the op that meets it
    /// last), if any transition met it.
    pub example: Option<Vec<Op>>,
}

/// Progress of a running exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// States generated so far (with repeats).
    pub generated: usize,
    /// Distinct states stored so far.
    pub unique: usize,
    /// Deepest state generated so far, in explored ops.
    pub depth: usize,
    /// Memory in use, in bytes: this process's resident set, or where that
    /// cannot be read an estimate from the states stored
    /// ([`ESTIMATED_BYTES_PER_STATE`] each).
    pub memory: u64,
}

/// Bytes a stored state takes: peak resident set divided by distinct
/// states stored, 43 at depth 10 (docs/performance.md, "The explorer's
/// memory"), rounded up; the memory estimate where the resident set cannot
/// be read.
pub const ESTIMATED_BYTES_PER_STATE: u64 = 48;

/// Memory kept free below the limit: the exploration stops once the
/// memory in use, this reserve and four times the growth of the last
/// 100 ms reach the limit, because the checker finishes the block of
/// states it is expanding after it is told to stop.
pub const MEMORY_RESERVE: u64 = 64 << 20;

/// Why an exploration stopped before its depth bound. Depth first, no
/// depth is complete when it stops: some sequences of every length were
/// not explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryStop {
    /// The memory in use when it stopped, in bytes.
    pub memory: u64,
    /// The memory kept free above it: [`MEMORY_RESERVE`] and four times
    /// the last 100 ms's growth, in bytes.
    pub reserve: u64,
    /// The limit, in bytes.
    pub limit: u64,
}

/// What an exploration saw.
#[derive(Clone, Debug)]
pub struct ExploreReport {
    /// The bound, in explored ops.
    pub depth: usize,
    /// Checker threads.
    pub threads: usize,
    /// Letters in the alphabet.
    pub alphabet_len: usize,
    /// The nesting bound.
    pub max_nesting: usize,
    /// States generated, repeats included: `Checker::state_count` plus
    /// [`ExploreReport::leaves`]. Depth first, a state reached at several
    /// depths is expanded at each, so this is more than breadth first's
    /// count for the same states.
    pub generated: usize,
    /// Distinct states stored: the states reached within the bound, each
    /// counted once whatever the depths it was reached at, but the boring
    /// leaves (the same count as breadth first's stored states).
    pub unique: usize,
    /// Nodes (state, depth) the checker stored a fingerprint of
    /// (`Checker::unique_state_count`): at least [`ExploreReport::unique`].
    pub nodes: usize,
    /// States at the depth bound checked when generated and not stored (see
    /// [`Explorer`]'s `within_boundary`); not deduplicated.
    pub leaves: usize,
    /// Deepest state generated (and checked), in explored ops.
    pub depth_reached: usize,
    /// Wall time.
    pub elapsed: Duration,
    /// A shortest diverging trace, if the sides ever differed.
    pub counterexample: Option<Counterexample<Explored>>,
    /// Explored ops of the path the checker reported for the `always`
    /// property. It can be longer than `counterexample`: stateright records
    /// every failing state it checks, so the last one wins, not the
    /// shortest. `counterexample` is the shortest recorded when the
    /// diverging states were generated.
    pub checker_counterexample_len: Option<usize>,
    /// The `sometimes` properties, in [`SOMETIMES`] order.
    pub situations: Vec<SituationReached>,
    /// Set when the run stopped at its memory limit, before the depth bound.
    pub stopped: Option<MemoryStop>,
    /// The signal (SIGINT, SIGTERM) that stopped the run before the depth
    /// bound ([`crate::interrupt`]), if one did.
    pub interrupted: Option<i32>,
    /// This process's resident memory when the exploration ended (the
    /// stored states still held), where `/proc` tells it.
    pub resident_at_end: Option<u64>,
}

impl ExploreReport {
    /// Generated states per second of wall time.
    pub fn states_per_second(&self) -> f64 {
        self.generated as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for ExploreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        writeln!(
            f,
            "{} every sequence of up to {} ops over {} letters, nesting at most {} deep (after `{}`), {} thread(s)",
            if self.stopped.is_some() || self.interrupted.is_some() {
                "set out to explore (and stopped, see below)"
            } else {
                "explored"
            },
            self.depth,
            self.alphabet_len,
            self.max_nesting,
            init_ops()
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join("; "),
            self.threads
        )?;
        writeln!(
            f,
            "{} states generated, {} unique stored (+ {} leaves at the bound checked, not stored), in {:.2} s: {:.0} states/s; depth reached {}",
            self.generated,
            self.unique,
            self.leaves,
            secs,
            self.states_per_second(),
            self.depth_reached
        )?;
        writeln!(
            f,
            "depth first: {} (state, depth) nodes fingerprinted",
            self.nodes
        )?;
        if let (Some(bytes), true) = (self.resident_at_end, self.unique > 0) {
            writeln!(
                f,
                "memory in use at the end: {} resident, {:.0} bytes per stored state",
                crate::memory::human(bytes),
                bytes as f64 / self.unique as f64
            )?;
        }
        if let Some(stop) = &self.stopped {
            writeln!(
                f,
                "STOPPED at the memory limit: {} in use and {} kept in reserve (64 MiB, and 4 times the last 0.1 s's growth) reached the limit of {}; the search is depth first, so sequences of every length were left out",
                crate::memory::human(stop.memory),
                crate::memory::human(stop.reserve),
                crate::memory::human(stop.limit),
            )?;
        }
        if let Some(signal) = self.interrupted {
            writeln!(
                f,
                "INTERRUPTED (signal {signal}): the figures are of the states explored so far; the search is depth first, so sequences of every length were left out"
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "situation (sometimes property)         reached  shortest path (ops)"
        )?;
        write_situations(f, &self.situations)?;
        writeln!(f)?;
        match &self.counterexample {
            None => writeln!(
                f,
                "no divergence: the lazy side answered every op as the eager side did"
            ),
            Some(cx) => write_counterexample(f, cx),
        }
    }
}

/// Explore from `eager` and `lazy` (`eager` is the reference: it decides
/// which ops are possible), calling `progress` about ten times a second.
pub fn explore<E: Reference, L: Explorable>(
    eager: E,
    lazy: L,
    config: &ExploreConfig,
    progress: &mut dyn FnMut(Progress),
) -> ExploreReport {
    explore_within(eager, lazy, config, None, progress)
}

/// [`explore`], stopping before the memory in use ([`Progress::memory`])
/// reaches `max_memory` bytes: the checker then expands no more states and
/// the report says where it stopped ([`ExploreReport::stopped`]).
pub fn explore_within<E: Reference, L: Explorable>(
    eager: E,
    lazy: L,
    config: &ExploreConfig,
    max_memory: Option<u64>,
    progress: &mut dyn FnMut(Progress),
) -> ExploreReport {
    let model = Explorer::new(eager, lazy, config);
    let stop = Arc::clone(&model.stop);
    let alphabet_len = model.alphabet.len();
    let shortest = Arc::clone(&model.shortest);
    let leaves = Arc::clone(&model.leaves);
    let examples = Arc::clone(&model.examples);
    let deepest = Arc::clone(&model.deepest);
    let unique = Arc::clone(&model.unique);
    let expand_below = Arc::clone(&model.expand_below);
    let replaying = Arc::clone(&model.replaying);
    let start = Instant::now();
    // Init is depth 1 and states at the target depth are not checked: +2 so
    // that states `depth` ops deep are checked (none are expanded further,
    // see `actions`). The checker never finishes early (no discovery
    // matches an empty set): a divergence only bounds the depth expanded
    // (`Explorer::record`), so that the shortest one is found.
    let mut checker = model
        .checker()
        .threads(config.threads.max(1))
        .target_max_depth(config.depth + 2)
        .finish_when(HasDiscoveries::AnyOf(Default::default()))
        .spawn_dfs();
    // Join the checker threads on a thread of our own, so that the end is
    // seen at once while progress is reported every 100 ms.
    let handles = checker.handles();
    let (done, finished) = mpsc::channel();
    let joiner = std::thread::spawn(move || {
        let panicked = handles.into_iter().map(|h| h.join()).find_map(Result::err);
        let _ = done.send(());
        panicked
    });
    let mut stopped = None;
    let mut interrupted = None;
    let mut last_memory = 0;
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(Duration::from_millis(100)) {
        let unique = unique.load(Ordering::Relaxed);
        let depth = deepest.load(Ordering::Relaxed);
        let memory =
            crate::memory::resident_bytes().unwrap_or(unique as u64 * ESTIMATED_BYTES_PER_STATE);
        // Stop while four more intervals' growth and 64 MB would still fit:
        // the checker finishes the block of states it is expanding after it
        // is told to stop.
        let growth = memory.saturating_sub(last_memory);
        last_memory = memory;
        if let (Some(limit), None) = (max_memory, &stopped) {
            let reserve = MEMORY_RESERVE.saturating_add(growth.saturating_mul(4));
            if memory.saturating_add(reserve) >= limit {
                stop.store(true, Ordering::Relaxed);
                stopped = Some(MemoryStop {
                    memory,
                    reserve,
                    limit,
                });
            }
        }
        if let (Some(signal), None) = (crate::interrupt::requested(), interrupted) {
            stop.store(true, Ordering::Relaxed);
            interrupted = Some(signal);
        }
        progress(Progress {
            generated: checker.state_count() + leaves.load(Ordering::Relaxed),
            unique,
            depth,
            memory,
        });
    }
    // A checker thread panics only on a bug of the reference side (the side
    // under test's panics are caught as divergences): pass it on.
    if let Ok(Some(panic)) | Err(panic) = joiner.join() {
        std::panic::resume_unwind(panic);
    }
    // The paths to discoveries are rebuilt by replaying `actions`: with the
    // states' actions again, up to the depth bound.
    stop.store(false, Ordering::Relaxed);
    expand_below.store(config.depth, Ordering::Relaxed);
    replaying.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed();
    let discoveries = checker.discoveries();
    let explored_len = |name: &str| discoveries.get(name).map(|p| p.last_state().trace.len());
    let examples = examples
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let situations = SOMETIMES
        .iter()
        .zip(examples)
        .map(|(name, example)| SituationReached {
            name,
            discovered: discoveries.contains_key(name),
            example: example.map(|p| p.ops()),
        })
        .collect();
    let counterexample = shortest
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    ExploreReport {
        depth: config.depth,
        threads: config.threads.max(1),
        alphabet_len,
        max_nesting: config.max_nesting,
        generated: checker.state_count() + leaves.load(Ordering::Relaxed),
        unique: unique.load(Ordering::Relaxed),
        nodes: checker.unique_state_count(),
        leaves: leaves.load(Ordering::Relaxed),
        depth_reached: deepest.load(Ordering::Relaxed),
        elapsed,
        counterexample,
        checker_counterexample_len: explored_len(EQUAL_OBSERVATIONS),
        situations,
        stopped,
        interrupted,
        resident_at_end: crate::memory::resident_bytes(),
    }
}

/// Explore the eager model against the lazy implementation.
pub fn explore_pair(config: &ExploreConfig, progress: &mut dyn FnMut(Progress)) -> ExploreReport {
    explore(Eager::new(), Lazy::new(), config, progress)
}

/// The rows of the situations table: each situation, whether it was met,
/// and the length of the shortest path found to it.
pub(crate) fn write_situations(
    f: &mut fmt::Formatter<'_>,
    situations: &[SituationReached],
) -> fmt::Result {
    for s in situations {
        match (&s.example, s.discovered) {
            (Some(ops), true) => writeln!(f, "{:<38} yes      {}", s.name, ops.len())?,
            (Some(ops), false) => writeln!(
                f,
                "{:<38} met      {} (not discovered: the run stopped first)",
                s.name,
                ops.len()
            )?,
            (None, _) => writeln!(f, "{:<38} no", s.name)?,
        }
    }
    Ok(())
}

/// A shortest counterexample: its length, its trace and the divergence.
pub(crate) fn write_counterexample(
    f: &mut fmt::Formatter<'_>,
    cx: &Counterexample<Explored>,
) -> fmt::Result {
    writeln!(
        f,
        "COUNTEREXAMPLE ({} explored ops, shortest):\n",
        cx.found_by.explored_ops
    )?;
    write!(f, "{}", cx.trace_text())?;
    writeln!(f)?;
    write!(f, "{}", cx.divergence)
}
