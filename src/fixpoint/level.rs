//! One level of the fixpoint explorer: the states to expand as (parent,
//! letter) pairs ([`Level`]), made again by replaying their letters
//! ([`Rebuilder`]), and their expansion ([`expand`]) across threads. The
//! level is cut into chunks of [`CHUNK`] states that the threads take in
//! turn; each chunk's successors not seen at an earlier level are merged
//! into the level's new states in chunk order, so that the first path to
//! a state in breadth-first order wins whatever the number of threads:
//! the states, the levels and the paths kept are the same with one thread
//! or many (issue 57, point 2). Each step is ranked by its state's index
//! and its letter ([`rank`]), so that of equally short counterexamples (and
//! paths to a situation) the first in that order is kept, as one thread
//! keeps it.

use super::fresh::Fresh;
use super::seen::Seen;
use crate::explore::{rank, Explorable, Explorer, Read, Reference, State};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The states of one level that are expanded at the next, in breadth-first
/// order: each as the index of its parent in the level before and the
/// letter (an index into the alphabet) that led from it, 6 bytes a state.
/// Every level is kept: a state's path is read back through its parents.
#[derive(Debug, Default)]
pub(super) struct Level {
    parent: Vec<u32>,
    letter: Vec<u16>,
}

impl Level {
    /// The states of the level.
    pub(super) fn len(&self) -> usize {
        self.parent.len()
    }

    /// Add the state `letter` leads to from state `parent` of the level
    /// before.
    pub(super) fn push(&mut self, parent: usize, letter: usize) {
        // A level of 2^32 states would need some 60 GB of fingerprints and
        // paths: the memory limit stops a run long before.
        self.parent
            .push(u32::try_from(parent).expect("fewer than 2^32 states a level"));
        self.letter
            .push(u16::try_from(letter).expect("fewer than 2^16 letters"));
    }

    /// The bytes the level takes.
    pub(super) fn bytes(&self) -> u64 {
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

/// States of a level a thread takes at a time.
pub const CHUNK: usize = 1024;

/// A successor not seen at an earlier level, where it was met.
#[derive(Clone, Copy, Debug)]
struct Found {
    fingerprint: u64,
    parent: u32,
    letter: u16,
    expand: bool,
}

/// The chunks' successors, merged in chunk order.
struct Merged {
    /// Chunks done before an earlier one: merged when it is.
    pending: BTreeMap<usize, Vec<Found>>,
    /// The next chunk to merge.
    next_chunk: usize,
    /// The level's new fingerprints.
    fresh: Fresh,
    /// The new states to expand at the next level, in breadth-first order.
    next: Level,
}

impl Merged {
    fn add(&mut self, chunk: usize, found: Vec<Found>) {
        self.pending.insert(chunk, found);
        while let Some(found) = self.pending.remove(&self.next_chunk) {
            for f in found {
                if self.fresh.insert(f.fingerprint) && f.expand {
                    self.next.push(f.parent as usize, usize::from(f.letter));
                }
            }
            self.next_chunk += 1;
        }
    }
}

/// A level expanded: its new states, the next level, the successors made.
pub(super) struct Expansion {
    /// The states to expand at the next level.
    pub next: Level,
    /// The level's new fingerprints, sorted.
    pub fresh: Vec<u64>,
    /// Times the table of new fingerprints grew past the size predicted.
    pub fresh_grown: usize,
    /// Successors made (every enabled letter of every state expanded).
    pub generated: usize,
    /// Of those, letters that only read checked in place: the state itself.
    pub read_in_place: usize,
}

/// Expand the last level of `paths` with `threads` threads, its new
/// fingerprints in a table sized for `expected` of them, the calling
/// thread watching them: about ten times a second it tells `monitor` an
/// estimate of the bytes held and the distinct states so far, and
/// `monitor` answers whether to go on. `None` when it said to stop (the
/// memory limit or a signal): the level is dropped.
pub(super) fn expand<E: Reference, L: Explorable>(
    explorer: &Explorer<E, L>,
    start: &State<E, L>,
    paths: &[Level],
    seen: &Seen,
    expected: usize,
    threads: usize,
    monitor: &mut dyn FnMut(u64, usize) -> bool,
) -> Option<Expansion> {
    let level = paths.len() - 1;
    let expanding = paths[level].len();
    let chunks = expanding.div_ceil(CHUNK);
    let next_chunk = AtomicUsize::new(0);
    let generated = AtomicUsize::new(0);
    let read_in_place = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let merged = Mutex::new(Merged {
        pending: BTreeMap::new(),
        next_chunk: 0,
        fresh: Fresh::with_expected(expected),
        next: Level::default(),
    });
    let (done, finished) = mpsc::channel::<()>();
    let threads = threads.clamp(1, chunks.max(1));
    let letters_count = explorer.alphabet().len();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done = done.clone();
            let (next_chunk, generated, read_in_place) = (&next_chunk, &generated, &read_in_place);
            let (halt, merged) = (&halt, &merged);
            scope.spawn(move || {
                let mut rebuild = Rebuilder::new(start.clone());
                let mut made = 0usize;
                let mut in_place = 0usize;
                loop {
                    let chunk = next_chunk.fetch_add(1, Ordering::Relaxed);
                    if chunk >= chunks || halt.load(Ordering::Relaxed) {
                        break;
                    }
                    let mut found = Vec::new();
                    for index in chunk * CHUNK..((chunk + 1) * CHUNK).min(expanding) {
                        if halt.load(Ordering::Relaxed) {
                            break;
                        }
                        let letters = letters_to(paths, level, index);
                        let state = rebuild.state(explorer, &letters);
                        if state.diverged.is_none() && !state.ended {
                            for (letter, op) in explorer.candidate_letters(state) {
                                let rank = rank(index, letter, letters_count);
                                let successor = if explorer.reads_in_place(letter) {
                                    match explorer.read(state, &op, rank) {
                                        None => continue,
                                        Some(Read::Same) => {
                                            made += 1;
                                            in_place += 1;
                                            continue;
                                        }
                                        Some(Read::Changed(successor)) => successor,
                                    }
                                } else {
                                    match explorer.step_ranked(state, &op, rank) {
                                        None => continue,
                                        Some(successor) => successor,
                                    }
                                };
                                made += 1;
                                if !seen.contains(successor.identity) {
                                    found.push(Found {
                                        fingerprint: successor.identity,
                                        parent: u32::try_from(index)
                                            .expect("fewer than 2^32 states a level"),
                                        letter: u16::try_from(letter)
                                            .expect("fewer than 2^16 letters"),
                                        expand: successor.diverged.is_none() && !successor.ended,
                                    });
                                }
                            }
                        }
                    }
                    (merged.lock().unwrap_or_else(PoisonError::into_inner)).add(chunk, found);
                }
                generated.fetch_add(made, Ordering::Relaxed);
                read_in_place.fetch_add(in_place, Ordering::Relaxed);
                let _ = done.send(());
            });
        }
        drop(done);
        // Watch until every thread is done (or gone: a panic is raised
        // again when the scope ends).
        let mut running = threads;
        while running > 0 {
            match finished.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => running -= 1,
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    if halt.load(Ordering::Relaxed) {
                        continue;
                    }
                    let (held, distinct) = {
                        let m = merged.lock().unwrap_or_else(PoisonError::into_inner);
                        let held = seen.bytes()
                            + paths.iter().map(Level::bytes).sum::<u64>()
                            + m.next.bytes()
                            + m.fresh.bytes();
                        (held, seen.len() + m.fresh.len())
                    };
                    if !monitor(held, distinct) {
                        halt.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    });
    if halt.load(Ordering::Relaxed) {
        return None;
    }
    let merged = merged.into_inner().unwrap_or_else(PoisonError::into_inner);
    debug_assert!(merged.pending.is_empty() && merged.next_chunk == chunks);
    let fresh_grown = merged.fresh.grown();
    let fresh = merged.fresh.into_sorted();
    let mut next = merged.next;
    next.parent.shrink_to_fit();
    next.letter.shrink_to_fit();
    Some(Expansion {
        next,
        fresh,
        fresh_grown,
        generated: generated.into_inner(),
        read_in_place: read_in_place.into_inner(),
    })
}
