//! `scopecheck mutants`: every deliberate mistake of the lazy design run
//! through the random check; killed or survived, cases and time to the kill,
//! and the length of the minimal counterexample.

use super::CliError;
use crate::mutants::{
    corpus_mutant, explore_mutant, explore_mutant_fixpoint, row, run_mutant, HEADER,
};
use clap::Args;
use lazy::mutant::Mutant;
use std::io::Write;

/// Arguments of `scopecheck mutants`.
#[derive(Debug, Args)]
pub struct MutantsArgs {
    /// Cases per mutant before it counts as survived (at least 1).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub cases: u32,
    /// Seed.
    #[arg(long, default_value_t = 66511)]
    pub seed: u64,
    /// Only this mutant (kebab-case name).
    #[arg(long, value_parser = super::parse_mutant)]
    pub only: Option<Mutant>,
    /// Print each minimal counterexample as a trace.
    #[arg(long)]
    pub traces: bool,
    /// The explorer column: by default the fixpoint explorer's shortest
    /// counterexample (`explore --fixpoint`: with `--deep` to its fixpoint,
    /// then with `--frames` up to 6 levels:
    /// [`crate::mutants::explore_mutant_fixpoint`]); with a depth, the
    /// depth-bounded explorer's up to that depth instead (0: skip the
    /// column).
    #[arg(long)]
    pub explore_depth: Option<usize>,
    /// The fuzz corpus to replay per mutant.
    #[arg(long, default_value = "fuzz/corpus/lockstep")]
    pub corpus: std::path::PathBuf,
}

/// Run `scopecheck mutants`.
pub fn execute(args: &MutantsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let mutants: Vec<Mutant> = match args.only {
        None => Mutant::ALL.to_vec(),
        Some(m) => vec![m],
    };
    writeln!(out, "{HEADER}")?;
    // Mutants may panic; the harness reports that as a kill, so the hook
    // does not print those (any other panic still is).
    crate::lockstep::quiet_caught_panics();
    let mut survivors = Vec::new();
    let mut results = Vec::new();
    for m in mutants {
        let mut r = run_mutant(m, args.cases, args.seed, true);
        match args.explore_depth {
            None => r.explorer = Some(explore_mutant_fixpoint(m)),
            Some(0) => {}
            Some(depth) => r.explorer = Some(explore_mutant(m, depth)),
        }
        r.corpus = corpus_mutant(m, &args.corpus).ok();
        writeln!(out, "{}", row(&r))?;
        if !r.killed() {
            survivors.push(m.name());
        }
        results.push(r);
    }
    let mut times: Vec<f64> = results
        .iter()
        .filter_map(|r| r.killed_after.map(|(_, t)| t.as_secs_f64()))
        .collect();
    times.sort_by(f64::total_cmp);
    let killed = results.iter().filter(|r| r.killed()).count();
    let longest = results
        .iter()
        .filter_map(|r| r.counterexample.as_ref().map(|c| c.ops.len()))
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "\nkilled {killed} of {} ({:.0} %); median time to kill {:.3} s; longest minimal counterexample {longest} ops",
        results.len(),
        100.0 * killed as f64 / results.len().max(1) as f64,
        times.get(times.len() / 2).copied().unwrap_or(0.0)
    )?;
    if args.traces {
        for r in &results {
            if let Some(cx) = &r.counterexample {
                writeln!(out, "\n## {}\n{}", r.mutant.name(), cx.trace_text())?;
            }
        }
    }
    if survivors.is_empty() {
        Ok(())
    } else {
        Err(CliError::Verdict(format!(
            "mutants survived: {}",
            survivors.join(", ")
        )))
    }
}
