//! [`Tracked`]: a field of the environment's state that remembers whether
//! it may have changed since the refinement check last found it equal to
//! its counterpart on the other side. Not Node's: the harness's bookkeeping,
//! kept beside the fields it watches so that no code can change one without
//! the mark (`docs/performance.md`, "check / bare (issue 27)").
//!
//! Reading through a `Tracked` (`Deref`) costs nothing; any mutable access
//! at all (`DerefMut`: a method call taking `&mut self`, an assignment
//! through it, `&mut *field`) sets the mark, whether or not the value then
//! changes. The mark starts set ([`Tracked::new`], `Default`, `Clone`), and
//! only [`Tracked::mark_compared`] clears it, which the refinement check
//! calls after it has found the field equal to the other side's. So a field
//! whose mark is clear on both sides of a pair holds what it held when the
//! two were last found equal: it is still equal, and need not be compared.
//!
//! Equality, hashing, ordering-free `Debug` and cloning look at the value
//! alone: two states that differ only in their marks are the same state
//! (the explorer and the canonical forms hash states).

use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

/// A value with a mark saying it may have changed since it was last
/// compared (see the module's documentation).
pub struct Tracked<T> {
    value: T,
    dirty: bool,
}

impl<T> Tracked<T> {
    /// `value`, marked as changed: the first comparison looks at it.
    #[inline]
    pub const fn new(value: T) -> Self {
        Tracked { value, dirty: true }
    }

    /// Whether the value may have changed (been accessed mutably, cloned or
    /// made) since the last [`Tracked::mark_compared`].
    #[inline]
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Clear the mark: the caller has just found the value equal to its
    /// counterpart (the refinement check, `src/refinement.rs`, after a
    /// comparison that succeeded).
    #[inline]
    pub fn mark_compared(&mut self) {
        self.dirty = false;
    }

    /// The value itself, leaving the wrapper.
    #[inline]
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for Tracked<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Tracked<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        self.dirty = true;
        &mut self.value
    }
}

impl<'a, T> IntoIterator for &'a Tracked<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;
    /// The value's items, read: no mark.
    fn into_iter(self) -> Self::IntoIter {
        (&self.value).into_iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Tracked<T>
where
    &'a mut T: IntoIterator,
{
    type Item = <&'a mut T as IntoIterator>::Item;
    type IntoIter = <&'a mut T as IntoIterator>::IntoIter;
    /// The value's items, mutably: marks, as `DerefMut` does.
    fn into_iter(self) -> Self::IntoIter {
        (&mut **self).into_iter()
    }
}

impl<T: Default> Default for Tracked<T> {
    fn default() -> Self {
        Tracked::new(T::default())
    }
}

impl<T: Clone> Clone for Tracked<T> {
    /// A copy of the value, marked as changed: the copy has not been
    /// compared with anything.
    fn clone(&self) -> Self {
        Tracked::new(self.value.clone())
    }
}

impl<T> From<T> for Tracked<T> {
    fn from(value: T) -> Self {
        Tracked::new(value)
    }
}

impl<T: PartialEq> PartialEq for Tracked<T> {
    /// The values compared; the marks ignored.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Tracked<T> {}

impl<T: Hash> Hash for Tracked<T> {
    /// The value's hash; the mark ignored.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Tracked<T> {
    /// The value's `Debug`, as if there were no wrapper.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

/// A vector that remembers, beside whether it may have changed (as
/// [`Tracked`]), how many of its leading items are untouched since the last
/// [`TrackedVec::mark_compared`]: `push` leaves every item untouched, `pop`,
/// `remove` and `last_mut` touch only the items from where they act, and any
/// other mutable access (`DerefMut`) counts as touching them all. So a
/// comparison of two vectors found equal before need only look at the
/// lengths and at the items from [`TrackedVec::untouched`] on.
pub struct TrackedVec<T> {
    items: Vec<T>,
    dirty: bool,
    untouched: usize,
}

impl<T> TrackedVec<T> {
    /// `items`, marked as changed, none untouched.
    #[inline]
    pub const fn new(items: Vec<T>) -> Self {
        TrackedVec {
            items,
            dirty: true,
            untouched: 0,
        }
    }

    /// Whether anything may have changed since the last
    /// [`TrackedVec::mark_compared`].
    #[inline]
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// How many leading items no mutable access reached since the last
    /// [`TrackedVec::mark_compared`] (0 for a new or cloned vector); never
    /// more than the length.
    #[inline]
    pub fn untouched(&self) -> usize {
        self.untouched
    }

    /// Clear the mark, every item untouched: the caller has just found the
    /// vector equal to its counterpart.
    #[inline]
    pub fn mark_compared(&mut self) {
        self.dirty = false;
        self.untouched = self.items.len();
    }

    /// Clear the mark, the first `n` items (at most the length) untouched:
    /// the caller has just found those equal to their counterparts (a
    /// comparison that reads only the first `n`, as the id stack's up to
    /// `kStackLength`).
    #[inline]
    pub fn mark_compared_up_to(&mut self, n: usize) {
        self.dirty = false;
        self.untouched = n.min(self.items.len());
    }

    /// `Vec::resize`: the items before the new length stay untouched.
    #[inline]
    pub fn resize(&mut self, len: usize, value: T)
    where
        T: Clone,
    {
        self.dirty = true;
        self.untouched = self.untouched.min(len);
        self.items.resize(len, value);
    }

    /// `Vec::truncate`: the items before the new length stay untouched.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.dirty = true;
        self.untouched = self.untouched.min(len);
        self.items.truncate(len);
    }

    /// `Vec::clear`: nothing is left, nothing untouched.
    #[inline]
    pub fn clear(&mut self) {
        self.dirty = true;
        self.untouched = 0;
        self.items.clear();
    }

    /// `Vec::push`: the items before it stay untouched.
    #[inline]
    pub fn push(&mut self, item: T) {
        self.dirty = true;
        self.items.push(item);
    }

    /// `Vec::pop`: the items before the last stay untouched.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.dirty = true;
        let item = self.items.pop();
        self.untouched = self.untouched.min(self.items.len());
        item
    }

    /// `Vec::remove`: the items before `index` stay untouched.
    #[inline]
    pub fn remove(&mut self, index: usize) -> T {
        self.dirty = true;
        self.untouched = self.untouched.min(index);
        self.items.remove(index)
    }

    /// `<[T]>::last_mut`: the items before the last stay untouched.
    #[inline]
    pub fn last_mut(&mut self) -> Option<&mut T> {
        self.dirty = true;
        self.untouched = self.untouched.min(self.items.len().saturating_sub(1));
        self.items.last_mut()
    }
}

impl<T> Deref for TrackedVec<T> {
    type Target = Vec<T>;
    #[inline(always)]
    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<T> DerefMut for TrackedVec<T> {
    /// Any other mutable access: every item counts as touched.
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        self.dirty = true;
        self.untouched = 0;
        &mut self.items
    }
}

impl<T, I: std::slice::SliceIndex<[T]>> std::ops::Index<I> for TrackedVec<T> {
    type Output = I::Output;
    /// `v[i]`, `v[a..b]`, read: no mark.
    #[inline(always)]
    fn index(&self, index: I) -> &I::Output {
        &self.items[index]
    }
}

impl<T> std::ops::IndexMut<usize> for TrackedVec<T> {
    /// `v[i] = x` and `&mut v[i]`: the items before `i` stay untouched.
    #[inline(always)]
    fn index_mut(&mut self, index: usize) -> &mut T {
        self.dirty = true;
        self.untouched = self.untouched.min(index);
        &mut self.items[index]
    }
}

impl<'a, T> IntoIterator for &'a TrackedVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    /// The items, read: no mark.
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut TrackedVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    /// The items, mutably: every item touched, as `DerefMut`.
    fn into_iter(self) -> Self::IntoIter {
        (**self).iter_mut()
    }
}

impl<T> Default for TrackedVec<T> {
    fn default() -> Self {
        TrackedVec::new(Vec::new())
    }
}

impl<T: Clone> Clone for TrackedVec<T> {
    /// A copy of the items, marked as changed, none untouched.
    fn clone(&self) -> Self {
        TrackedVec::new(self.items.clone())
    }
}

impl<T: PartialEq> PartialEq for TrackedVec<T> {
    /// The items compared; the marks ignored.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl<T: Eq> Eq for TrackedVec<T> {}

impl<T: Hash> Hash for TrackedVec<T> {
    /// The items' hash (as a `Vec`'s); the marks ignored.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.items.hash(state)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for TrackedVec<T> {
    /// The items' `Debug`, as if there were no wrapper.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.items.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::{Tracked, TrackedVec};

    #[test]
    fn a_mutable_access_marks_and_only_mark_compared_clears() {
        let mut t = Tracked::new(vec![1]);
        assert!(t.is_dirty(), "a new value is marked");
        t.mark_compared();
        assert!(!t.is_dirty());
        assert_eq!(t.len(), 1);
        assert!(!t.is_dirty(), "reading does not mark");
        t.push(2);
        assert!(t.is_dirty(), "a mutation marks");
        t.mark_compared();
        let _ = &mut *t;
        assert!(t.is_dirty(), "a mutable borrow marks, changed or not");
        t.mark_compared();
        assert!(t.clone().is_dirty(), "a clone is marked");
        assert_eq!(t.clone(), t, "equality ignores the mark");
    }

    #[test]
    fn a_tracked_vec_counts_the_items_no_mutation_reached() {
        let mut v = TrackedVec::new(vec![1, 2, 3]);
        assert!(v.is_dirty());
        assert_eq!(v.untouched(), 0, "a new vector has nothing untouched");
        v.mark_compared();
        assert_eq!((v.is_dirty(), v.untouched()), (false, 3));
        v.push(4);
        assert_eq!((v.is_dirty(), v.untouched()), (true, 3));
        v.pop();
        v.pop();
        assert_eq!(v.untouched(), 2);
        *v.last_mut().unwrap() = 9;
        assert_eq!(v.untouched(), 1);
        v.mark_compared();
        v.remove(1);
        assert_eq!(v.untouched(), 1);
        v.mark_compared();
        v.iter_mut().for_each(|x| *x += 1);
        assert_eq!((v.is_dirty(), v.untouched()), (true, 0));
        v.push(7);
        v.mark_compared();
        v[1] = 5;
        assert_eq!(v.untouched(), 1, "an indexed write touches from its index");
        v.mark_compared();
        v.resize(4, 0);
        assert_eq!(v.untouched(), 2, "growing touches nothing before");
        v.truncate(1);
        assert_eq!(v.untouched(), 1);
        v.mark_compared_up_to(9);
        assert_eq!(v.untouched(), 1, "never past the length");
        v.resize(3, 0);
        v.mark_compared_up_to(2);
        assert_eq!((v.is_dirty(), v.untouched()), (false, 2));
        v.clear();
        assert_eq!(v.untouched(), 0);
        v.push(1);
        v.mark_compared();
        for x in &mut v {
            *x += 1;
        }
        assert_eq!(v.untouched(), 0, "a mutable iteration touches every item");
        assert_eq!(v.clone().untouched(), 0);
        assert_eq!(v.clone(), v, "equality ignores the marks");
    }
}
