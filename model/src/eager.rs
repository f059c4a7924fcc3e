//! `Eager`: Node.js as it is today. Every native scope pushes its pair on the
//! id stack and pops it on close; every reader of the stack is Node's own
//! code, the defaults of [`AsyncIdStack`].

use crate::env::{AsyncIdStack, Environment};

/// The eager store: Node today keeps nothing beside `AsyncHooks`' own fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EagerStack;

impl AsyncIdStack for EagerStack {
    /// A scope needs nothing but `pushed_ids_` to pop what it pushed.
    type Entered = ();
}

/// The eager reference model: one Node.js `Environment` as it is today.
pub type Eager = Environment<EagerStack>;
