//! `scopecheck bench`'s comparison of two binaries: the runs, alternated
//! between the binaries run by run as `benchmark/compare.js` alternates
//! them (so that a drift of the machine falls on both alike), and the table
//! `benchmark/compare.R` prints, one row per kind and size, with each
//! binary's time (or instructions) per call.

use super::runner::{Bench, Kind, Variant};
use super::stats::{compare, Comparison};
use crate::conform::ConformError;
use model::vocab::NodeVersion;
use std::fmt;
use std::path::Path;

/// What a rate is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Measure {
    /// Wall time inside the process (`process.hrtime`), compare.js's.
    Wall,
    /// The process's CPU time (user + system) over the same span: what
    /// other processes on a shared machine disturb less.
    Cpu,
    /// Instructions per call under valgrind (runs of n and 2n calls,
    /// [`Bench::instructions_per_call`]); a rate is calls per 10^9
    /// instructions. What the machine's load does not move at all.
    Instructions,
}

impl Measure {
    /// The name of a table's rates: `wall time`, ...
    pub fn describe(self) -> &'static str {
        match self {
            Measure::Wall => "wall time",
            Measure::Cpu => "CPU time",
            Measure::Instructions => {
                "instructions (valgrind's cachegrind, node --predictable; runs of n and 2n calls)"
            }
        }
    }

    /// The unit of a per-call figure: `ns` or `instr`.
    pub fn per_call_unit(self) -> &'static str {
        match self {
            Measure::Wall | Measure::Cpu => "ns",
            Measure::Instructions => "instr",
        }
    }

    /// Its name on the command line and in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Wall => "wall",
            Measure::Cpu => "cpu",
            Measure::Instructions => "instructions",
        }
    }
}

/// One row: one kind at one size after one set-up, the old binary against
/// the new.
#[derive(Clone, Debug)]
pub struct Row {
    /// The kind of call.
    pub kind: Kind,
    /// The set-up before the calls.
    pub variant: Variant,
    /// For a variant other than `none`: the `none` runs made alternately
    /// with its own on each binary (old, new), and each binary's variant
    /// compared with them (`none` the old side).
    pub against_none: Option<AgainstNone>,
    /// The calls of each run.
    pub n: u64,
    /// The rates of the old binary's runs, then the new one's.
    pub rates: [Vec<f64>; 2],
    /// compare.R's figures.
    pub comparison: Comparison,
}

/// A variant's runs against `none` within each binary (issue 56).
#[derive(Clone, Debug)]
pub struct AgainstNone {
    /// The `none` rates of the old binary, then the new one's.
    pub rates: [Vec<f64>; 2],
    /// Each binary's `none` runs (the old side) against its variant runs.
    pub comparisons: [Comparison; 2],
}

impl Row {
    /// Its name in the table: Node's benchmark's, and the set-up if any.
    pub fn name(&self) -> String {
        let name = format!(
            "napi/make_callback type='{}' n={}",
            self.kind.name(),
            self.n
        );
        match self.variant {
            Variant::None => name,
            v => format!("{name} variant={}", v.name()),
        }
    }

    /// Nanoseconds (or instructions) per call of binary `i` (0 old, 1
    /// new): the inverse of its mean rate.
    pub fn per_call(&self, i: usize) -> f64 {
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

/// The runs one row takes on each binary: a variant other than `none`
/// alternates with `none` runs of its own.
pub fn runs_per_row(variant: Variant, runs: usize) -> usize {
    if variant == Variant::None {
        runs
    } else {
        2 * runs
    }
}

/// The node line of a binary's version (`v20.20.2`: v20; any other: 26),
/// and its short name.
fn line_of(version: &str) -> (NodeVersion, &'static str) {
    if version.starts_with("v20.") {
        (NodeVersion::V20, "v20")
    } else {
        (NodeVersion::V26, "26")
    }
}

/// The runs of each binary per row and the sizes `scopecheck bench` takes
/// where `--runs` or `--n` is not given (`runs`, `sizes` what was given):
/// Node's own (`--runs 30`, `--n 1000000 10000000`) for `none` alone;
/// `--runs 10 --n 1000000` once a variant other than `none` is asked for,
/// since each such variant doubles its rows' runs: the five variants at
/// Node's budget make 3 240 runs, six times the 540 of this one, which
/// still sees a few per cent with `--measure cpu` (its figures and time in
/// docs/performance.md). With `--measure
/// instructions`, whose counts barely move: `--runs 3 --n 100000`, and
/// `--runs 2` with variants (each run is two valgrind runs of about 7 s).
pub fn default_budget(
    measure: Measure,
    variants: &[Variant],
    runs: Option<usize>,
    sizes: &[u64],
) -> (usize, Vec<u64>) {
    let with_variants = variants.iter().any(|&v| v != Variant::None);
    let (default_runs, default_sizes) = match (measure, with_variants) {
        (Measure::Instructions, false) => (3, vec![100_000]),
        (Measure::Instructions, true) => (2, vec![100_000]),
        (_, false) => (30, vec![1_000_000, 10_000_000]),
        (_, true) => (10, vec![1_000_000]),
    };
    let sizes = if sizes.is_empty() {
        default_sizes
    } else {
        sizes.to_vec()
    };
    (runs.unwrap_or(default_runs), sizes)
}

/// One run's rate of `kind` after `variant` on `bench`.
fn rate(
    bench: &Bench,
    kind: Kind,
    variant: Variant,
    n: u64,
    measure: Measure,
    valgrind: Option<&Path>,
) -> Result<f64, ConformError> {
    Ok(match measure {
        Measure::Wall => bench.run_variant(kind, variant, n)?.rate(),
        Measure::Cpu => bench.run_variant(kind, variant, n)?.cpu_rate(),
        Measure::Instructions => {
            let valgrind = valgrind.ok_or_else(|| ConformError::MissingTool {
                tool: "valgrind".to_string(),
                hint: "--measure instructions runs node under valgrind".to_string(),
            })?;
            1e9 / bench.instructions_per_call(valgrind, kind, variant, n)?
        }
    })
}

/// Run every kind at every size in `sizes` after each set-up of
/// `variants`, `runs` times on each of the two binaries, alternating (a
/// variant other than `none` alternating with `none` runs of its own on
/// each binary too), and compare; `tick` after each run (a progress bar),
/// `stop` asked before each (an interrupt: `Ok(None)`).
/// [`Measure::Instructions`] needs `valgrind`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    benches: [&Bench; 2],
    sizes: &[u64],
    variants: &[Variant],
    runs: usize,
    measure: Measure,
    valgrind: Option<&Path>,
    tick: &mut dyn FnMut(),
    stop: &dyn Fn() -> bool,
) -> Result<Option<Table>, ConformError> {
    let mut rows = Vec::new();
    for &variant in variants {
        for &n in sizes {
            for kind in Kind::ALL {
                let with_none = variant != Variant::None;
                let mut rates = [Vec::with_capacity(runs), Vec::with_capacity(runs)];
                let mut none = [Vec::with_capacity(runs), Vec::with_capacity(runs)];
                for _ in 0..runs {
                    for (i, bench) in benches.iter().enumerate() {
                        let mut steps = vec![(variant, &mut rates[i])];
                        if with_none {
                            steps.push((Variant::None, &mut none[i]));
                        }
                        for (v, into) in steps {
                            if stop() {
                                return Ok(None);
                            }
                            into.push(rate(bench, kind, v, n, measure, valgrind)?);
                            tick();
                        }
                    }
                }
                let no_runs = || {
                    ConformError::Node(format!("bench {} n={n}: no runs to compare", kind.name()))
                };
                let comparison = compare(&rates[0], &rates[1]).ok_or_else(no_runs)?;
                let against_none = if with_none {
                    let old = compare(&none[0], &rates[0]).ok_or_else(no_runs)?;
                    let new = compare(&none[1], &rates[1]).ok_or_else(no_runs)?;
                    Some(AgainstNone {
                        rates: none,
                        comparisons: [old, new],
                    })
                } else {
                    None
                };
                rows.push(Row {
                    kind,
                    variant,
                    against_none,
                    n,
                    rates,
                    comparison,
                });
            }
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
            "old: node {}, new: node {}; {} runs of each, rates from {}",
            self.versions[0],
            self.versions[1],
            self.runs,
            self.measure.describe()
        )?;
        let unit = self.measure.per_call_unit();
        let width = (self.rows.iter().map(|r| r.name().len()).max())
            .unwrap_or(0)
            .max(52);
        let variants = self.rows.iter().any(|r| r.against_none.is_some());
        write!(
            f,
            "{:<width$} {:>10} {:>12} {:>12} {:>9} {:>9} {:>12} {:>12}",
            "",
            "confidence",
            "improvement",
            "accuracy (*)",
            "(**)",
            "(***)",
            format!("old {unit}/call"),
            format!("new {unit}/call")
        )?;
        if variants {
            write!(f, " {:>16} {:>16}", "old vs none", "new vs none")?;
        }
        writeln!(f, " {:>16}", "model lazy/eager")?;
        for row in &self.rows {
            let c = &row.comparison;
            let acc = |i: usize| {
                c.accuracy_percent
                    .map_or("NA".to_string(), |a| format!("±{:.2}%", a[i]))
            };
            write!(
                f,
                "{:<width$} {:>10} {:>11.2}% {:>12} {:>9} {:>9} {:>12.1} {:>12.1}",
                row.name(),
                c.stars(),
                c.improvement_percent,
                acc(0),
                acc(1),
                acc(2),
                row.per_call(0),
                row.per_call(1)
            )?;
            if let Some(a) = &row.against_none {
                for c in &a.comparisons {
                    let figure = format!("{:+.2}% {:<3}", c.improvement_percent, c.stars());
                    write!(f, " {figure:>16}")?;
                }
            } else if variants {
                write!(f, " {:>16} {:>16}", "", "")?;
            }
            let predicted =
                (self.predicted_ratio(row)).map_or("-".to_string(), |r| format!("{r:.2}"));
            writeln!(f, " {predicted:>16}")?;
        }
        writeln!(f)?;
        if variants {
            writeln!(
                f,
                "old / new vs none: the variant's runs against the runs of `none` made alternately with them on the same binary (improvement: + faster than none)."
            )?;
        }
        writeln!(
            f,
            "model lazy/eager: the model's writes a call of the scope on the lazy side (the pull request) over the eager side's (Node today), on the new binary's line; 1.00 where the lazy path cannot apply, - where no scope opens."
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "The model's account of one MakeCallback call ({{0, 0}}, from the event loop), per set-up and line:"
        )?;
        for (variant, line, account) in self.accounts() {
            match account {
                Ok(a) => writeln!(f, "  {:<18} {line}: {}", variant.name(), a.describe())?,
                Err(e) => writeln!(f, "  {:<18} {line}: not computed: {e}", variant.name())?,
            }
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

impl Table {
    /// The model's account of one call ([`super::account`]) for each
    /// variant of the rows, on each node line of the two binaries (v20 or
    /// 26, by the version's major number; once if both are one line).
    pub fn accounts(
        &self,
    ) -> Vec<(
        Variant,
        &'static str,
        Result<super::account::Account, String>,
    )> {
        let mut lines: Vec<(NodeVersion, &'static str)> = Vec::new();
        for v in &self.versions {
            let line = line_of(v);
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        let mut variants: Vec<Variant> = Vec::new();
        for row in &self.rows {
            if !variants.contains(&row.variant) {
                variants.push(row.variant);
            }
        }
        let mut out = Vec::new();
        for variant in variants {
            for &(version, name) in &lines {
                out.push((variant, name, super::account::account(variant, version)));
            }
        }
        out
    }

    /// The model's predicted lazy/eager ratio of the scope's writes for
    /// `row` ([`super::account::Account::predicted_ratio`]) on the new
    /// binary's line, which a reviewer's run (`--node BASE --node PR`)
    /// sets beside the measured improvement: for the two kinds that open
    /// an `InternalCallbackScope` (`MakeCallback`, and
    /// `AsyncResource::MakeCallback`, whose scope the pull request changes
    /// alike); `None` for a plain `Call`, which opens none, or where the
    /// account could not be computed.
    pub fn predicted_ratio(&self, row: &Row) -> Option<f64> {
        if row.kind == Kind::Call {
            return None;
        }
        let (version, _) = line_of(&self.versions[1]);
        let account = super::account::account(row.variant, version).ok()?;
        Some(account.predicted_ratio())
    }

    /// The table as JSON for `--json`: the binaries, the measure, and per
    /// row its kind and size, each binary's rates (calls per second, or per
    /// 10^9 instructions) and per-call figure, and compare.R's figures
    /// (`p`, `df`, `accuracy_percent` null where the samples allow no test).
    pub fn to_json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = (self.rows.iter())
            .map(|row| {
                let c = &row.comparison;
                let against_none = row.against_none.as_ref().map(|a| {
                    let side = |i: usize| {
                        let c = &a.comparisons[i];
                        serde_json::json!({
                            "none_rates": a.rates[i],
                            "improvement_percent": c.improvement_percent,
                            "confidence": c.stars(),
                            "p": c.test.map(|w| w.p),
                        })
                    };
                    serde_json::json!({ "old": side(0), "new": side(1) })
                });
                serde_json::json!({
                    "benchmark": "napi/make_callback",
                    "type": row.kind.name(),
                    "variant": row.variant.name(),
                    "against_none": against_none,
                    "n": row.n,
                    "old_rates": row.rates[0],
                    "new_rates": row.rates[1],
                    "old_per_call": row.per_call(0),
                    "new_per_call": row.per_call(1),
                    "predicted_ratio": self.predicted_ratio(row),
                    "improvement_percent": c.improvement_percent,
                    "confidence": c.stars(),
                    "p": c.test.map(|w| w.p),
                    "t": c.test.map(|w| w.t),
                    "df": c.test.map(|w| w.df),
                    "accuracy_percent": c.accuracy_percent.map(|a| serde_json::json!({
                        "95": a[0], "99": a[1], "99.9": a[2],
                    })),
                })
            })
            .collect();
        let accounts: Vec<serde_json::Value> = (self.accounts().into_iter())
            .map(|(variant, line, a)| {
                let cost = |c: &model::vocab::Cost| {
                    serde_json::json!({
                        "stack_writes": c.stack_writes,
                        "resource_writes": c.resource_writes,
                        "chain_writes": c.chain_writes,
                        "crossings": c.crossings,
                    })
                };
                match a {
                    Ok(a) => serde_json::json!({
                        "variant": variant.name(),
                        "line": line,
                        "eager": cost(&a.eager),
                        "lazy": cost(&a.lazy),
                        "saved_writes": a.saved_writes(),
                        "predicted_ratio": a.predicted_ratio(),
                        "no_lazy_path": a.no_lazy_path,
                    }),
                    Err(e) => serde_json::json!({
                        "variant": variant.name(), "line": line, "error": e,
                    }),
                }
            })
            .collect();
        serde_json::json!({
            "old": self.versions[0],
            "new": self.versions[1],
            "account": accounts,
            "measure": self.measure.name(),
            "per_call_unit": self.measure.per_call_unit(),
            "runs": self.runs,
            "rows": rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node's budget for `none` alone; a smaller one once variants double
    /// the runs; what is given on the command line wins.
    #[test]
    fn variants_take_a_budget_of_their_own() {
        use Variant::*;
        let all = [None, HookInit, HookBeforeAfter, Ear, Als];
        let wall = Measure::Wall;
        assert_eq!(
            default_budget(wall, &[None], Option::None, &[]),
            (30, vec![1_000_000, 10_000_000])
        );
        assert_eq!(
            default_budget(Measure::Cpu, &all, Option::None, &[]),
            (10, vec![1_000_000])
        );
        assert_eq!(
            default_budget(wall, &[Ear], Some(4), &[]),
            (4, vec![1_000_000])
        );
        assert_eq!(
            default_budget(wall, &[Ear], Option::None, &[5_000]),
            (10, vec![5_000])
        );
        assert_eq!(
            default_budget(Measure::Instructions, &[None], Option::None, &[]),
            (3, vec![100_000])
        );
        assert_eq!(
            default_budget(Measure::Instructions, &[None, Ear], Option::None, &[]),
            (2, vec![100_000])
        );
        // All five variants at the default budget: 540 runs, where Node's
        // budget would make 3 240.
        let (runs, sizes) = default_budget(wall, &all, Option::None, &[]);
        let per_row: usize = all.iter().map(|&v| runs_per_row(v, runs)).sum();
        assert_eq!(sizes.len() * Kind::ALL.len() * per_row * 2, 540);
        let per_row: usize = all.iter().map(|&v| runs_per_row(v, 30)).sum();
        assert_eq!(2 * Kind::ALL.len() * per_row * 2, 3_240);
    }

    /// A table of instruction counts names its measure and its unit, and
    /// its per-call figures are the counts the rates came from.
    #[test]
    fn an_instruction_table_shows_instructions_per_call() {
        // 1 501 and 1 593 instructions a call, as v20 and Node 26 counted
        // MakeCallback (docs/performance.md), with a little noise.
        let old = vec![1e9 / 1501.0, 1e9 / 1501.2];
        let new = vec![1e9 / 1593.0, 1e9 / 1592.8];
        let comparison = compare(&old, &new).expect("two samples");
        let table = Table {
            versions: ["v20.20.2".to_string(), "v26.12.1".to_string()],
            measure: Measure::Instructions,
            runs: 2,
            rows: vec![Row {
                kind: Kind::MakeCallback,
                variant: Variant::None,
                against_none: None,
                n: 100_000,
                rates: [old, new],
                comparison,
            }],
        };
        let text = table.to_string();
        assert!(text.contains("rates from instructions (valgrind"), "{text}");
        assert!(text.contains("old instr/call new instr/call"), "{text}");
        let row = (text.lines())
            .find(|l| l.starts_with("napi/make_callback type='MakeCallback' n=100000"))
            .unwrap_or_else(|| panic!("{text}"));
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            fields[fields.len() - 3..],
            ["1501.1", "1592.9", "0.50"],
            "{row}"
        );
        // Fewer calls per 10^9 instructions: slower, significantly.
        assert_eq!(fields[3], "***", "{row}");
        assert!(fields[4].starts_with("-5.7"), "{row}");
        let json = table.to_json();
        assert_eq!(json["measure"], "instructions");
        assert_eq!(json["per_call_unit"], "instr");
        assert_eq!(json["rows"][0]["type"], "MakeCallback");
    }
}
