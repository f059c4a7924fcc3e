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

#[cfg(test)]
mod tests {
    use super::Tracked;

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
}
