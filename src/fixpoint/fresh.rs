//! The fingerprints new at the level being expanded: an open-addressing
//! table of bare `u64`s sized once, when the level starts, from what the
//! level before added and how fast the levels grew, so that it does not
//! double (and hold its old and new tables at once) as the level fills
//! (issue 57). When the level ends its slots are compacted, sorted and
//! handed over in place, with no second allocation, to be merged into the
//! sorted run of [`super::seen::Seen`].
//!
//! A fingerprint is a 64-bit hash, spread evenly: it is its own hash, its
//! slot the fraction of the table it names (`fingerprint * slots / 2^64`),
//! and a taken slot sends it on to the next (linear probing). A slot
//! holding 0 is empty; the fingerprint 0 is kept beside the table.

/// The table's fill at which it grows (to twice its slots): the
/// prediction was short.
const MAX_LOAD: f64 = 0.8;

/// The fill a table sized for a predicted number of fingerprints has at
/// that number: a few probes a search.
const SIZED_LOAD: f64 = 0.7;

/// A set of fingerprints (see the module's documentation).
#[derive(Debug)]
pub(super) struct Fresh {
    /// Each slot: a fingerprint, or 0 for none.
    slots: Vec<u64>,
    /// The fingerprint 0 is held.
    zero: bool,
    /// Fingerprints held.
    len: usize,
    /// Times the table grew: the prediction was short.
    grown: usize,
}

impl Fresh {
    /// A table for about `expected` fingerprints.
    pub(super) fn with_expected(expected: usize) -> Self {
        Fresh {
            slots: vec![0; Self::slots_for(expected)],
            zero: false,
            len: 0,
            grown: 0,
        }
    }

    fn slots_for(expected: usize) -> usize {
        ((expected as f64 / SIZED_LOAD) as usize).max(64)
    }

    /// Fingerprints held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The bytes the table takes.
    pub(super) fn bytes(&self) -> u64 {
        (self.slots.capacity() as u64).saturating_mul(8)
    }

    /// Times the table grew past its first size.
    pub(super) fn grown(&self) -> usize {
        self.grown
    }

    /// The slot a search for `fingerprint` starts at.
    fn home(&self, fingerprint: u64) -> usize {
        ((u128::from(fingerprint) * self.slots.len() as u128) >> 64) as usize
    }

    /// Add `fingerprint`; whether it was not held.
    pub(super) fn insert(&mut self, fingerprint: u64) -> bool {
        if fingerprint == 0 {
            let new = !self.zero;
            self.zero = true;
            self.len += usize::from(new);
            return new;
        }
        if (self.len + 1) as f64 > self.slots.len() as f64 * MAX_LOAD {
            self.grow();
        }
        let mut i = self.home(fingerprint);
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = fingerprint;
                    self.len += 1;
                    return true;
                }
                held if held == fingerprint => return false,
                _ => i = if i + 1 == self.slots.len() { 0 } else { i + 1 },
            }
        }
    }

    /// Twice the slots, every fingerprint placed again.
    fn grow(&mut self) {
        let doubled = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        let zero = self.zero;
        (self.len, self.zero) = (0, false);
        for fingerprint in old.into_iter().filter(|&f| f != 0) {
            self.insert(fingerprint);
        }
        if zero {
            self.insert(0);
        }
        self.grown += 1;
    }

    /// The fingerprints held, sorted, in the table's own memory.
    pub(super) fn into_sorted(self) -> Vec<u64> {
        let mut slots = self.slots;
        let mut kept = 0;
        for i in 0..slots.len() {
            if slots[i] != 0 {
                slots[kept] = slots[i];
                kept += 1;
            }
        }
        slots.truncate(kept);
        if self.zero {
            slots.push(0);
        }
        slots.sort_unstable();
        slots.shrink_to_fit();
        slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixpoint::numbers;
    use std::collections::HashSet;

    /// The table answers each insertion as a hash set does, repeats, 0 and
    /// the largest fingerprint included, whether it was sized right, too
    /// large, or too small (and grew); and hands back what it holds,
    /// sorted.
    #[test]
    fn the_table_answers_as_a_set_does() {
        let mut all = numbers(3, 30_000);
        all.extend(numbers(3, 5_000)); // repeats
        all.extend([0, u64::MAX, 0, 1, u64::MAX]);
        for expected in [30_000, 1_000_000, 10] {
            let mut table = Fresh::with_expected(expected);
            let mut set = HashSet::new();
            for &x in &all {
                assert_eq!(table.insert(x), set.insert(x), "{x}");
            }
            assert_eq!(table.len(), set.len());
            assert_eq!(table.grown() > 0, expected == 10);
            let mut want: Vec<u64> = set.into_iter().collect();
            want.sort_unstable();
            assert_eq!(table.into_sorted(), want);
        }
    }

    /// Sized for what comes, the table never grows, and holds 8 bytes a
    /// fingerprint over its fill.
    #[test]
    fn a_table_sized_right_does_not_grow() {
        let mut table = Fresh::with_expected(100_000);
        for x in numbers(4, 100_000) {
            table.insert(x);
        }
        assert_eq!(table.grown(), 0);
        let per = table.bytes() as f64 / table.len() as f64;
        assert!((11.0..=12.0).contains(&per), "{per} bytes a fingerprint");
    }
}
