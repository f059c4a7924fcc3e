//! Every integration test of the root crate, as one test binary: each file
//! of `tests/` is a module here (`autotests = false` in Cargo.toml), so the
//! suite is built and linked once and its tests run side by side.
//! `cargo test --test suite conform` runs the modules whose path names
//! `conform`; `cargo test MODULE::` one file's tests.

mod binaries;

mod bench;
mod cli_check;
mod cli_faults;
mod cli_run;
mod cli_truth;
mod conform;
mod conform_deep;
mod conform_scenarios;
mod cost;
mod explore;
mod export;
mod fuzz_corpus;
mod html_replay;
mod http_parser_scopes;
mod import_cycles;
mod listener_bodies;
mod lockstep;
mod microtask_bodies;
mod mutants;
mod refinement;
mod scenarios;
mod spec_laws;
mod trace_format;
