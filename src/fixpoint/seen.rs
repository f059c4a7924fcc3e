//! The fingerprints of the states the fixpoint explorer has seen, in 8
//! bytes a state: one sorted run of every finished level's fingerprints,
//! searched by interpolation (the fingerprints are 64-bit hashes, spread
//! evenly, so a search takes a few probes rather than log2 n), and the
//! level being expanded, whose new fingerprints are merged into the run
//! in place when the level ends. This is TLC's way of keeping its
//! fingerprints (sorted runs, merged), in memory: no hash table's empty
//! slots, and no table to double and copy (issue 57).

/// Every earlier level's fingerprints, sorted, without repeats.
#[derive(Debug, Default)]
pub struct Seen {
    sorted: Vec<u64>,
}

/// Ranges of at most this many fingerprints are searched by bisection.
const BISECT_BELOW: usize = 32;

/// Interpolation rounds before the search falls back to bisection, which
/// bounds a search on fingerprints that are not evenly spread.
const INTERPOLATION_ROUNDS: usize = 6;

impl Seen {
    /// Fingerprints held.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// No fingerprint held.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The bytes the fingerprints take (the run's capacity).
    pub fn bytes(&self) -> u64 {
        (self.sorted.capacity() as u64).saturating_mul(8)
    }

    /// `fingerprint` is held.
    pub fn contains(&self, fingerprint: u64) -> bool {
        let s = &self.sorted;
        let (mut lo, mut hi) = (0usize, s.len());
        let mut rounds = 0;
        while hi - lo > BISECT_BELOW && rounds < INTERPOLATION_ROUNDS {
            let (first, last) = (s[lo], s[hi - 1]);
            if fingerprint < first || fingerprint > last {
                return false;
            }
            // Where `fingerprint` falls between the range's ends, were the
            // fingerprints between them spread evenly.
            let span = u128::from(last - first).max(1);
            let offset = u128::from(fingerprint - first) * (hi - 1 - lo) as u128 / span;
            let guess = lo + offset as usize;
            match s[guess].cmp(&fingerprint) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Less => lo = guess + 1,
                std::cmp::Ordering::Greater => hi = guess,
            }
            rounds += 1;
        }
        s[lo..hi].binary_search(&fingerprint).is_ok()
    }

    /// Add `fresh`, fingerprints none of which is held, sorted and without
    /// repeats: merged from the back into the run grown by their number,
    /// so that nothing but the run and `fresh` is ever allocated.
    pub fn merge(&mut self, fresh: &[u64]) {
        debug_assert!(fresh.windows(2).all(|w| w[0] < w[1]));
        let old = self.sorted.len();
        self.sorted.reserve_exact(fresh.len());
        self.sorted.resize(old + fresh.len(), 0);
        let s = &mut self.sorted;
        let (mut i, mut j) = (old, fresh.len());
        while j > 0 {
            let k = i + j - 1;
            if i > 0 && s[i - 1] > fresh[j - 1] {
                s[k] = s[i - 1];
                i -= 1;
            } else {
                s[k] = fresh[j - 1];
                j -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixpoint::numbers;
    use std::collections::HashSet;

    /// Merged level by level, the run answers as a hash set of the same
    /// fingerprints does, for even hashes and for fingerprints bunched at
    /// one end (where interpolation guesses badly and bisection takes
    /// over), the ends of the range included.
    #[test]
    fn the_run_answers_as_a_set_does() {
        let even = numbers(7, 20_000);
        let bunched: Vec<u64> = (numbers(8, 20_000).into_iter())
            .map(|x| x >> 40)
            .chain([0, 1, u64::MAX, u64::MAX - 1])
            .collect();
        for all in [even, bunched] {
            let mut seen = Seen::default();
            let mut set = HashSet::new();
            for level in all.chunks(3_000) {
                let mut fresh: Vec<u64> = (level.iter().copied())
                    .filter(|x| !seen.contains(*x) && set.insert(*x))
                    .collect();
                fresh.sort_unstable();
                seen.merge(&fresh);
                assert_eq!(seen.len(), set.len());
                assert!(seen.sorted.windows(2).all(|w| w[0] < w[1]));
            }
            for x in all.iter().copied().chain(numbers(9, 20_000)) {
                assert_eq!(seen.contains(x), set.contains(&x), "{x}");
            }
            for x in [0, 1, 2, u64::MAX, u64::MAX - 1, u64::MAX - 2] {
                assert_eq!(seen.contains(x), set.contains(&x), "{x}");
            }
        }
        assert!(!Seen::default().contains(0));
    }
}
