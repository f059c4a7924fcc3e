//! `scopecheck bench` (issue 52): Node's own `benchmark/napi/make_callback`
//! on two real binaries, compared as `benchmark/compare.js` and
//! `benchmark/compare.R` compare them. Here: the statistics
//! of the table ([`stats`]: Welch's t-test, the confidence stars, the
//! accuracy at 95 / 99 / 99.9 %), checked against R's and SciPy's
//! figures; the addon and one timed run on a binary ([`runner`]); the runs
//! of two binaries, alternated, and compare.R's table ([`table`]), which
//! `scopecheck bench` prints; the run under valgrind that counts a call's
//! instructions (`--measure instructions`) rather than timing it, which
//! the machine's load cannot blur; and the model's [`account`] of one call
//! after each set-up, on the eager and the lazy side (issue 56).

pub mod account;
pub mod runner;
pub mod stats;
pub mod table;
