//! The lockstep harness and command-line tool around the eager model
//! (`model/`) and the lazy implementation (`impl/`).

pub mod cli;
pub mod conform;
