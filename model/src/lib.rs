//! Eager reference model of Node.js async-context tracking (`src/env.cc`,
//! `src/api/callback.cc`, `lib/internal/async_hooks.js`) as it is today, and
//! the vocabulary shared with the lazy implementation of PR 66511.

pub mod eager;
pub mod vocab;

pub use eager::Eager;
