//! `scopecheck bench`'s comparison of two binaries: the runs, alternated
//! between the binaries run by run as `benchmark/compare.js` alternates
//! them (so that a drift of the machine falls on both alike), and the table
//! `benchmark/compare.R` prints, one row per kind and size, with each
//! binary's time per call.

use super::runner::{Bench, Kind, Sample};
use super::stats::{compare, Comparison};
use crate::conform::ConformError;
use std::fmt;

/// What a rate is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Measure {
    /// Wall time inside the process (`process.hrtime`), compare.js's.
    Wall,
    /// The process's CPU time (user + system) over the same span: what
    /// other processes on a shared machine disturb less.
    Cpu,
}

impl Measure {
    /// Calls per second of `sample`, by this measure.
    pub fn rate(self, sample: &Sample) -> f64 {
        match self {
            Measure::Wall => sample.rate(),
            Measure::Cpu => sample.calls as f64 / (sample.cpu_us.max(1) as f64 / 1e6),
        }
    }
}

/// One row: one kind at one size, the old binary against the new.
#[derive(Clone, Debug)]
pub struct Row {
    /// The kind of call.
    pub kind: Kind,
    /// The calls of each run.
    pub n: u64,
    /// The rates of the old binary's runs, then the new one's.
    pub rates: [Vec<f64>; 2],
    /// compare.R's figures.
    pub comparison: Comparison,
}

impl Row {
    /// Nanoseconds per call of binary `i` (0 old, 1 new): the inverse of
    /// its mean rate.
    pub fn ns_per_call(&self, i: usize) -> f64 {
        let mean = [self.comparison.old_mean, self.comparison.new_mean][i];
        1e9 / mean
    }
}

/// The whole comparison.
#[derive(Clone, Debug)]
pub struct Table {
    /// The two binaries' versions, old first.
    pub versions: [String; 2],
    /// The measure.
    pub measure: Measure,
    /// Runs of each binary per row.
    pub runs: usize,
    /// The rows, kinds within sizes.
    pub rows: Vec<Row>,
}

/// Run every kind at every size in `sizes`, `runs` times on each of the
/// two binaries, alternating, and compare; `tick` after each run (a
/// progress bar), `stop` asked before each (an interrupt: `Ok(None)`).
pub fn run(
    benches: [&Bench; 2],
    sizes: &[u64],
    runs: usize,
    measure: Measure,
    tick: &mut dyn FnMut(),
    stop: &dyn Fn() -> bool,
) -> Result<Option<Table>, ConformError> {
    let mut rows = Vec::new();
    for &n in sizes {
        for kind in Kind::ALL {
            let mut rates = [Vec::with_capacity(runs), Vec::with_capacity(runs)];
            for _ in 0..runs {
                for (i, bench) in benches.iter().enumerate() {
                    if stop() {
                        return Ok(None);
                    }
                    let sample = bench.run(kind, n)?;
                    rates[i].push(measure.rate(&sample));
                    tick();
                }
            }
            let comparison = compare(&rates[0], &rates[1]).ok_or_else(|| {
                ConformError::Node(format!("bench {} n={n}: no runs to compare", kind.name()))
            })?;
            rows.push(Row {
                kind,
                n,
                rates,
                comparison,
            });
        }
    }
    Ok(Some(Table {
        versions: [
            benches[0].node_version.clone(),
            benches[1].node_version.clone(),
        ],
        measure,
        runs,
        rows,
    }))
}

impl fmt::Display for Table {
    /// compare.R's columns (confidence, improvement, accuracy at 95, 99 and
    /// 99.9 %), then each binary's nanoseconds per call.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "old: node {}, new: node {}; {} runs of each, rates from {} time",
            self.versions[0],
            self.versions[1],
            self.runs,
            match self.measure {
                Measure::Wall => "wall",
                Measure::Cpu => "CPU",
            }
        )?;
        writeln!(
            f,
            "{:<52} {:>10} {:>12} {:>12} {:>9} {:>9} {:>12} {:>12}",
            "",
            "confidence",
            "improvement",
            "accuracy (*)",
            "(**)",
            "(***)",
            "old ns/call",
            "new ns/call"
        )?;
        for row in &self.rows {
            let c = &row.comparison;
            let name = format!("napi/make_callback type='{}' n={}", row.kind.name(), row.n);
            let acc = |i: usize| {
                c.accuracy_percent
                    .map_or("NA".to_string(), |a| format!("±{:.2}%", a[i]))
            };
            writeln!(
                f,
                "{:<52} {:>10} {:>11.2}% {:>12} {:>9} {:>9} {:>12.1} {:>12.1}",
                name,
                c.stars(),
                c.improvement_percent,
                acc(0),
                acc(1),
                acc(2),
                row.ns_per_call(0),
                row.ns_per_call(1)
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "Be aware that when doing many comparisons the risk of a false-positive result increases."
        )?;
        writeln!(
            f,
            "  *   p < 0.05, accuracy (*) at 95 %; **  p < 0.01 (99 %); *** p < 0.001 (99.9 %)"
        )
    }
}
