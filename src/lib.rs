//! The lockstep harness and command-line tool around the eager model
//! (`model/`) and the lazy implementation (`impl/`).

pub mod bench;
pub mod canonical;
pub mod check;
pub mod cli;
pub mod conform;
pub mod coverage;
pub mod draw;
pub mod explore;
pub mod export;
pub mod files;
pub mod fixpoint;
pub mod fuzzing;
pub mod generate;
pub mod html;
pub mod interrupt;
pub mod lockstep;
pub mod memory;
pub mod mutants;
pub mod node26;
pub mod process;
pub mod refinement;
