//! Every reachable state, not every sequence up to a depth: `scopecheck
//! explore --fixpoint` explores breadth first until a level adds no new
//! state (the frontier is empty), so "no divergence" holds for sequences of
//! any length within the bounds ([`ExploreConfig`]: nesting, queued ticks
//! and microtasks, JS entries, hooks, storages, the ids the letters name).
//!
//! The states are the depth-bounded explorer's ([`crate::explore`]) made
//! canonical: the cost account and op counters normalised, the scope serials
//! renumbered, and the async ids `newAsyncId()` drew renamed in order
//! ([`crate::canonical`]). Without the renaming every `next-tick` would make
//! a new state and no frontier would ever empty. A state is stored as a
//! fingerprint (64 bits of aHash, as stateright stores its states), all of
//! them in one sorted run ([`seen`]: 8 bytes a state); each state to expand
//! as its parent's index in the level before and the letter that led from
//! it (6 bytes), every level kept, and made again by replaying its letters
//! from the start (issue 57, point 1).
//!
//! Breadth first, the first level at which a divergence appears holds the
//! shortest counterexamples; the explorer keeps the first of them in
//! alphabet order and stops at the end of that level. The diameter is the
//! last level that added a state: every reachable state is reached by a
//! path of at most that many ops.

pub mod seen;

use crate::explore::{
    Explorable, ExploreConfig, Explored, Explorer, MemoryStop, Reference, SituationReached, State,
    Unhashed, MEMORY_RESERVE, SOMETIMES,
};
use crate::lockstep::Counterexample;
use seen::Seen;
use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

/// Progress of a running fixpoint exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixpointProgress {
    /// The level being expanded (states this many ops from the start).
    pub level: usize,
    /// Distinct states found so far.
    pub distinct: usize,
    /// States of the level being expanded.
    pub frontier: usize,
    /// Memory in use, in bytes (resident set, or an estimate).
    pub memory: u64,
}

/// What a fixpoint exploration saw.
#[derive(Clone, Debug)]
pub struct FixpointReport {
    /// The configuration explored (its depth is not used).
    pub config: ExploreConfig,
    /// Letters in the alphabet.
    pub alphabet_len: usize,
    /// Distinct canonical states reached, the start state included.
    pub distinct: usize,
    /// Successors made (every enabled letter of every expanded state).
    pub generated: usize,
    /// New states per level: `levels[d]` states are first reached `d` ops
    /// from the start.
    pub levels: Vec<usize>,
    /// The frontier emptied: every state reachable within the bounds was
    /// explored. `false` when the run stopped at a divergence, the memory
    /// limit or a signal.
    pub fixpoint: bool,
    /// Wall time.
    pub elapsed: Duration,
    /// A shortest diverging trace, if the sides ever differed.
    pub counterexample: Option<Counterexample<Explored>>,
    /// The `sometimes` situations, in [`SOMETIMES`] order.
    pub situations: Vec<SituationReached>,
    /// Set when the run stopped at its memory limit.
    pub stopped: Option<MemoryStop>,
    /// The signal that stopped the run, if one did.
    pub interrupted: Option<i32>,
    /// The largest resident set seen while exploring, where `/proc` tells it.
    pub peak_memory: Option<u64>,
}

impl FixpointReport {
    /// The longest shortest path: the last level that added a state.
    pub fn diameter(&self) -> usize {
        self.levels.len().saturating_sub(1)
    }
}

/// The states of one level that are expanded at the next, in breadth-first
/// order: each as the index of its parent in the level before and the
/// letter (an index into the alphabet) that led from it, 6 bytes a state.
/// Every level is kept: a state's path is read back through its parents.
#[derive(Debug, Default)]
struct Level {
    parent: Vec<u32>,
    letter: Vec<u16>,
}

impl Level {
    fn len(&self) -> usize {
        self.parent.len()
    }

    fn push(&mut self, parent: usize, letter: usize) {
        // A level of 2^32 states would need some 100 GB of fingerprints and
        // paths: the memory limit stops a run long before.
        self.parent
            .push(u32::try_from(parent).expect("fewer than 2^32 states a level"));
        self.letter
            .push(u16::try_from(letter).expect("fewer than 2^16 letters"));
    }

    fn bytes(&self) -> u64 {
        (self.parent.capacity() * 4 + self.letter.capacity() * 2) as u64
    }
}

/// The letters from the start state to state `index` of level `depth`.
fn letters_to(levels: &[Level], depth: usize, mut index: usize) -> Vec<usize> {
    let mut letters = vec![0; depth];
    for d in (1..=depth).rev() {
        letters[d - 1] = usize::from(levels[d].letter[index]);
        index = levels[d].parent[index] as usize;
    }
    letters
}

/// Makes the state at the end of a path of letters by replaying it from
/// the start state, keeping the states along the last path made:
/// consecutive states of a breadth-first level share most of their paths,
/// so each is mostly one step from the last. The ops are made from the
/// letters as [`Explorer::candidates`] makes them, and the same steps run,
/// canonical forms included, so replaying makes the very state that was
/// found.
struct Rebuilder<E, L> {
    start: State<E, L>,
    /// The letters of the last path made and the state after each.
    chain: Vec<(usize, State<E, L>)>,
}

impl<E: Reference, L: Explorable> Rebuilder<E, L> {
    fn new(start: State<E, L>) -> Self {
        Rebuilder {
            start,
            chain: Vec::new(),
        }
    }

    fn state(&mut self, explorer: &Explorer<E, L>, letters: &[usize]) -> &State<E, L> {
        let kept = (self.chain.iter().zip(letters))
            .take_while(|((made, _), letter)| made == *letter)
            .count();
        self.chain.truncate(kept);
        for &letter in &letters[kept..] {
            let before = self.chain.last().map_or(&self.start, |(_, s)| s);
            let op = explorer.alphabet()[letter].op(before.eager.execution_async_id());
            let mut state = explorer
                .step(before, &op, false)
                .expect("a replayed op was enabled when it was found");
            state.trace = before.trace.then(op);
            self.chain.push((letter, state));
        }
        self.chain.last().map_or(&self.start, |(_, s)| s)
    }
}

/// Explore from `eager` and `lazy` breadth first to the fixpoint (or the
/// first level with a divergence), stopping before the memory in use
/// reaches `max_memory`; `progress` is called about ten times a second.
pub fn fixpoint<E: Reference, L: Explorable>(
    eager: E,
    lazy: L,
    config: &ExploreConfig,
    max_memory: Option<u64>,
    progress: &mut dyn FnMut(FixpointProgress),
) -> FixpointReport {
    let config = ExploreConfig {
        canonical: true,
        ..config.clone()
    };
    let explorer = Explorer::new(eager, lazy, &config);
    let start = Instant::now();
    // Every earlier level's fingerprints (8 bytes a state), and the new
    // ones of the level being expanded, merged in when it ends.
    let mut seen = Seen::default();
    let first = explorer.start_state();
    seen.merge(&[first.identity]);
    // The levels hold (parent, letter) pairs, not states: a state is made
    // again by replaying its letters ([`Rebuilder`]), which costs about
    // one step per state in breadth-first order and keeps 6 bytes a state
    // instead of two environments.
    let mut rebuild = Rebuilder::new(first);
    let mut paths: Vec<Level> = vec![Level::default()];
    paths[0].push(0, 0);
    let mut levels = vec![1usize];
    let mut generated = 0usize;
    let mut expanded = 0usize;
    let mut stopped = None;
    let mut interrupted = None;
    let mut peak_memory = crate::memory::resident_bytes();
    let mut last_report = Instant::now();
    let mut last_memory = peak_memory.unwrap_or(0);
    'levels: while paths.last().is_some_and(|l| l.len() > 0) {
        let level = levels.len() - 1;
        if config.max_levels.is_some_and(|max| level >= max) {
            break;
        }
        let mut next = Level::default();
        // The new fingerprints of this level: the first path to each wins.
        let mut fresh: HashSet<u64, BuildHasherDefault<Unhashed>> = HashSet::default();
        let expanding = paths[level].len();
        for index in 0..expanding {
            let letters = letters_to(&paths, level, index);
            let state = rebuild.state(&explorer, &letters);
            if state.diverged.is_some() || state.ended {
                continue;
            }
            for (letter, op) in explorer.candidate_letters(state) {
                let Some(successor) = explorer.step(state, &op, true) else {
                    continue;
                };
                generated += 1;
                let id = successor.identity;
                let expand = successor.diverged.is_none() && !successor.ended;
                if !seen.contains(id) && fresh.insert(id) && expand {
                    next.push(index, letter);
                }
            }
            expanded += 1;
            if expanded.is_multiple_of(64) && last_report.elapsed() >= Duration::from_millis(100) {
                last_report = Instant::now();
                let held = seen.bytes()
                    + (paths.iter()).map(Level::bytes).sum::<u64>()
                    + next.bytes()
                    + (fresh.capacity() as u64) * 9;
                let memory = crate::memory::resident_bytes().unwrap_or(held);
                peak_memory = peak_memory.max(Some(memory));
                let growth = memory.saturating_sub(last_memory);
                last_memory = memory;
                if let Some(limit) = max_memory {
                    let reserve = MEMORY_RESERVE.saturating_add(growth.saturating_mul(4));
                    if memory.saturating_add(reserve) >= limit {
                        stopped = Some(MemoryStop {
                            memory,
                            reserve,
                            limit,
                        });
                        break 'levels;
                    }
                }
                if let Some(signal) = crate::interrupt::requested() {
                    interrupted = Some(signal);
                    break 'levels;
                }
                progress(FixpointProgress {
                    level,
                    distinct: seen.len() + fresh.len(),
                    frontier: expanding,
                    memory,
                });
            }
        }
        let new_states = fresh.len();
        if new_states > 0 {
            levels.push(new_states);
        }
        let mut sorted: Vec<u64> = fresh.into_iter().collect();
        sorted.sort_unstable();
        seen.merge(&sorted);
        drop(sorted);
        next.parent.shrink_to_fit();
        next.letter.shrink_to_fit();
        paths.push(next);
        let memory = crate::memory::resident_bytes().unwrap_or(0);
        peak_memory = peak_memory.max(Some(memory));
        progress(FixpointProgress {
            level: level + 1,
            distinct: seen.len(),
            frontier: paths.last().map_or(0, Level::len),
            memory,
        });
        // The first level with a divergence holds the shortest ones.
        let found = (explorer.shortest.lock())
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if found {
            break;
        }
    }
    let frontier_empty = paths.last().is_none_or(|l| l.len() == 0);
    let fixpoint = frontier_empty && stopped.is_none() && interrupted.is_none();
    let counterexample = (explorer.shortest.lock())
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let examples = (explorer.examples.lock())
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let situations = SOMETIMES
        .iter()
        .zip(examples)
        .map(|(name, example)| SituationReached {
            name,
            discovered: example.is_some(),
            example: example.map(|p| p.ops()),
        })
        .collect();
    peak_memory = peak_memory.max(crate::memory::resident_bytes());
    FixpointReport {
        alphabet_len: explorer.alphabet().len(),
        config,
        distinct: seen.len(),
        generated,
        fixpoint: fixpoint && counterexample.is_none(),
        levels,
        elapsed: start.elapsed(),
        counterexample,
        situations,
        stopped,
        interrupted,
        peak_memory,
    }
}

impl fmt::Display for FixpointReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "breadth first over canonical states: {} letters{}, nesting at most {} deep, {} (after `{}`)",
            self.alphabet_len,
            if c.deep {
                " (--deep)"
            } else if c.frames {
                " (--frames)"
            } else {
                ""
            },
            c.max_nesting,
            c.bounds,
            crate::explore::init_ops_for(c.bounds.hooks)
                .iter()
                .map(|o| o.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        )?;
        writeln!(
            f,
            "{} distinct states, {} successors generated, diameter {} (the longest shortest path, in ops), in {:.2} s",
            self.distinct,
            self.generated,
            self.diameter(),
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "new states per level: {}",
            self.levels
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        if let Some(bytes) = self.peak_memory {
            writeln!(
                f,
                "peak memory in use: {} resident",
                crate::memory::human(bytes)
            )?;
        }
        if self.fixpoint {
            writeln!(
                f,
                "fixpoint reached: the last level added no state, so every state reachable within these bounds was explored"
            )?;
        } else if self.counterexample.is_some() {
            writeln!(
                f,
                "stopped at the first level with a divergence (not a fixpoint)"
            )?;
        } else if let Some(max) = (self.config.max_levels)
            .filter(|_| self.stopped.is_none() && self.interrupted.is_none())
        {
            writeln!(
                f,
                "stopped after {max} levels (the level bound): NOT a fixpoint"
            )?;
        }
        if let Some(stop) = &self.stopped {
            writeln!(
                f,
                "STOPPED at the memory limit: {} in use and {} kept in reserve reached the limit of {}; NOT a fixpoint: the levels past {} were not explored",
                crate::memory::human(stop.memory),
                crate::memory::human(stop.reserve),
                crate::memory::human(stop.limit),
                self.diameter()
            )?;
        }
        if let Some(signal) = self.interrupted {
            writeln!(
                f,
                "INTERRUPTED (signal {signal}); NOT a fixpoint: the figures are of the levels explored so far"
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "situation (sometimes property)         reached  shortest path (ops)"
        )?;
        crate::explore::write_situations(f, &self.situations)?;
        writeln!(f)?;
        match &self.counterexample {
            None if self.fixpoint => writeln!(
                f,
                "no divergence in any number of ops within these bounds: the lazy side answered every op as the eager side did"
            ),
            None => writeln!(f, "no divergence in the states explored"),
            Some(cx) => crate::explore::write_counterexample(f, cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::Bounds;
    use lazy::Lazy;
    use model::Eager;

    /// Breadth first the plain way, every state of a level kept whole and
    /// every fingerprint in a hash set: the distinct states and the new
    /// states per level, for at most `config.max_levels` levels.
    fn plain_breadth_first(config: &ExploreConfig) -> (usize, Vec<usize>) {
        let config = ExploreConfig {
            canonical: true,
            ..config.clone()
        };
        let explorer = Explorer::new(Eager::new(), Lazy::new(), &config);
        let start = explorer.start_state();
        let mut seen = std::collections::HashSet::new();
        seen.insert(start.identity);
        let mut frontier = vec![start];
        let mut levels = vec![1];
        while !frontier.is_empty() && config.max_levels.is_none_or(|m| levels.len() - 1 < m) {
            let mut next = Vec::new();
            for state in &frontier {
                if state.diverged.is_some() || state.ended {
                    continue;
                }
                for op in explorer.candidates(state) {
                    if let Some(successor) = explorer.step(state, &op, true) {
                        if seen.insert(successor.identity) {
                            next.push(successor);
                        }
                    }
                }
            }
            if !next.is_empty() {
                levels.push(next.len());
            }
            frontier = next;
        }
        (seen.len(), levels)
    }

    /// The fixpoint explorer, which keeps 8 bytes of fingerprint and 6 of
    /// path a state and makes each state again by replaying its letters,
    /// counts the states and levels a breadth-first search that keeps
    /// every state whole counts: the deep letters to their fixpoint, the
    /// default letters and `--frames` for their first levels.
    #[test]
    fn the_fixpoint_counts_what_a_plain_search_counts() {
        let deep = ExploreConfig {
            deep: true,
            max_nesting: 2,
            bounds: Bounds {
                min_id: -2,
                max_js: Some(1),
                ..Bounds::default()
            },
            ..ExploreConfig::default()
        };
        let default = ExploreConfig {
            max_levels: Some(5),
            ..ExploreConfig::default()
        };
        let frames = ExploreConfig {
            frames: true,
            max_levels: Some(4),
            ..ExploreConfig::default()
        };
        for config in [deep, default, frames] {
            let report = fixpoint(Eager::new(), Lazy::new(), &config, None, &mut |_| {});
            let (distinct, levels) = plain_breadth_first(&config);
            assert_eq!(
                (report.distinct, &report.levels),
                (distinct, &levels),
                "{report}"
            );
            assert!(distinct > 100, "{report}");
        }
    }
}
