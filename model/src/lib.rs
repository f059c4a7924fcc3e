//! Eager reference model of Node.js async-context tracking (`src/env.cc`,
//! `src/api/callback.cc`, `lib/internal/async_hooks.js`) as it is today, and
//! the vocabulary shared with the lazy implementation of PR 66511.
//!
//! [`env`] is Node's code, written once over an async-context store
//! ([`env::AsyncIdStack`]); [`eager`] is the store of Node today, and
//! [`Eager`] the environment over it. The lazy store lives in the
//! `lazy-scopes` crate.

pub mod eager;
pub mod env;
pub mod vocab;

pub use eager::Eager;
pub use env::{AsyncIdStack, Environment};
