//! An explored state ([`State`]: both sides after the same ops), its
//! fingerprints, and the path of ops that reached it ([`Path`]).

use crate::lockstep::Answer;
use model::vocab::Op;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

/// The keys of [`State::product_fingerprint`]'s hash: fixed, so that a run
/// is the same every time (any four constants would do).
const FINGERPRINT_KEYS: ahash::RandomState = ahash::RandomState::with_seeds(
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
);

/// One explored state: both sides after the same ops.
#[derive(Clone, Debug)]
pub struct State<E, L> {
    /// The reference side.
    pub eager: E,
    /// The side under test.
    pub lazy: L,
    /// The answers of the op that led here, when they differ (eager, lazy).
    pub diverged: Option<Box<(Answer, Answer)>>,
    /// The process ended (a terminal observation, or `Exited`).
    pub ended: bool,
    /// Bit `i`: the op that led here met the situation `SOMETIMES[i]`.
    pub situations: u32,
    /// The explored ops that led here first (after [`init_ops`]). Only its
    /// length (the node's depth) is part of the node's identity.
    pub trace: Path,
    /// [`State::product_fingerprint`] of the fields above (the two sides,
    /// `diverged`, `ended`, `situations`), computed once when the state is
    /// made.
    pub identity: u64,
}

impl<E: Hash, L: Hash> State<E, L> {
    /// A fingerprint of the product state alone, without the path: equal
    /// for the same state reached at any depth. aHash with fixed keys (the
    /// hash stateright fingerprints states with), so the same on every run.
    pub fn product_fingerprint(&self) -> u64 {
        let mut h = FINGERPRINT_KEYS.build_hasher();
        self.hash_state(&mut h);
        self.situations.hash(&mut h);
        h.finish()
    }

    /// [`State::product_fingerprint`] without the situations the op that
    /// led here met: the fingerprint of the state alone, the fixpoint
    /// explorer's identity ([`crate::fixpoint`]).
    pub fn state_fingerprint(&self) -> u64 {
        let mut h = FINGERPRINT_KEYS.build_hasher();
        self.hash_state(&mut h);
        h.finish()
    }

    fn hash_state(&self, h: &mut impl Hasher) {
        self.eager.hash(h);
        self.lazy.hash(h);
        match &self.diverged {
            None => 0u8.hash(h),
            Some(answers) => {
                1u8.hash(h);
                hash_answer(&answers.0, h);
                hash_answer(&answers.1, h);
            }
        }
        self.ended.hash(h);
    }
}

impl<E, L> State<E, L> {
    /// The depth of this node: explored ops on its path.
    pub fn depth(&self) -> usize {
        self.trace.len()
    }
}

/// A path of explored ops, shared between the states that extend it.
#[derive(Clone, Debug, Default)]
pub struct Path(Option<Arc<PathNode>>);

/// The last op of a [`Path`] and the path before it.
#[derive(Debug)]
pub struct PathNode {
    op: Op,
    len: usize,
    before: Path,
}

impl Path {
    /// Ops on the path.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len)
    }

    /// No ops.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// This path followed by `op`.
    pub fn then(&self, op: Op) -> Path {
        Path(Some(Arc::new(PathNode {
            op,
            len: self.len() + 1,
            before: self.clone(),
        })))
    }

    /// This path is `before` followed by one op (the same node of
    /// `before`, not an equal path).
    pub fn is_after(&self, before: &Path) -> bool {
        match (&self.0, &before.0) {
            (Some(node), Some(b)) => node.before.0.as_ref().is_some_and(|p| Arc::ptr_eq(p, b)),
            (Some(node), None) => node.before.0.is_none(),
            (None, _) => false,
        }
    }

    /// The nodes of the path, first to last: each a path itself (the ops up
    /// to that one), sharing the nodes of this one.
    pub fn prefixes(&self) -> Vec<Path> {
        let mut nodes = Vec::with_capacity(self.len());
        let mut at = self.clone();
        while let Some(node) = at.0.clone() {
            at = node.before.clone();
            nodes.push(Path(Some(node)));
        }
        nodes.reverse();
        nodes
    }

    /// The last op, if any.
    pub fn last_op(&self) -> Option<&Op> {
        self.0.as_ref().map(|n| &n.op)
    }

    /// The same node as `other` (not merely an equal path).
    pub fn same_node(&self, other: &Path) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// The ops, first to last.
    pub fn ops(&self) -> Vec<Op> {
        let mut ops = Vec::with_capacity(self.len());
        let mut at = &self.0;
        while let Some(node) = at {
            ops.push(node.op.clone());
            at = &node.before.0;
        }
        ops.reverse();
        ops
    }
}

/// `OpError` is not `Hash`: hash its text.
fn hash_answer<H: Hasher>(answer: &Answer, h: &mut H) {
    match answer {
        Ok(obs) => obs.hash(h),
        Err(e) => e.to_string().hash(h),
    }
}

/// A node of the search is the product state and its depth: stateright's
/// fingerprint of a node hashes the product state's fingerprint and the depth.
impl<E: Hash, L: Hash> Hash for State<E, L> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.identity.hash(h);
        self.depth().hash(h);
    }
}

impl<E: PartialEq, L: PartialEq> PartialEq for State<E, L> {
    fn eq(&self, o: &Self) -> bool {
        self.identity == o.identity
            && self.depth() == o.depth()
            && self.eager == o.eager
            && self.lazy == o.lazy
            && self.diverged == o.diverged
            && self.ended == o.ended
            && self.situations == o.situations
    }
}

impl<E: Eq, L: Eq> Eq for State<E, L> {}
