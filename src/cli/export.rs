//! `scopecheck export`: the suite's cases as Node core tests for the pull
//! request (docs/export.md). It is a top-level job, not `plumbing`: its
//! output is what a reviewer or the pull request's author takes away (the
//! tests to copy into a Node checkout), and `--prove` is the check that
//! they are real, run by a reviewer as `conform` is.
//!
//! Without `--prove`, it writes the tests for one line (`--node-version`,
//! 26 by default: main, where the pull request lands) under `--out` as a
//! Node checkout holds them, and lists what it did not export and why.
//! With `--prove`, it exports for both lines into scratch trees under
//! `--out` (`v20/`, `v26/`, with a `test/common` stand-in), builds the
//! binding against each binary's own headers, runs every test on its
//! binary, and runs wrong variants, each of which must fail; exit 1 if a
//! test fails or a variant passes. A missing node, headers or compiler is
//! exit 3.

use super::CliError;
use crate::conform::{ConformError, NodeSelection};
use crate::export::{self, proof, Export};
use clap::Args;
use model::vocab::NodeVersion;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `scopecheck export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Where to write the tests (a Node checkout's root, or an empty
    /// directory); with --prove, the scratch trees.
    #[arg(long, value_name = "DIR", required_unless_present = "list")]
    pub out: Option<PathBuf>,
    /// Print the list of the tests of both lines as docs/export-tests.md
    /// holds it, instead of writing them.
    #[arg(long, conflicts_with_all = ["prove", "out"])]
    pub list: bool,
    /// The line the expected values are for (20 or 26; not with --prove,
    /// which does both).
    #[arg(long, default_value = "26", value_parser = parse_version, conflicts_with = "prove")]
    pub node_version: NodeVersion,
    /// Prove the tests real on both binaries (build, run, wrong variants).
    #[arg(long)]
    pub prove: bool,
    /// The v20 binary for --prove (default: $SCOPECHECK_NODE, else `node`
    /// on PATH; headers under its prefix).
    #[arg(long, value_name = "PATH")]
    pub node: Option<PathBuf>,
    /// The Node 26 binary for --prove (default: $SCOPECHECK_NODE26, else
    /// the pinned one in .node/, installed if missing).
    #[arg(long, value_name = "PATH")]
    pub node26: Option<PathBuf>,
    /// Run only the first N tests of each line in --prove.
    #[arg(long, value_name = "N")]
    pub tests: Option<usize>,
    /// Tests tried at most for each mutant in --prove (until one fails).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub per_mutant: usize,
    /// Tests run with one expected value altered in --prove.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub altered: usize,
    /// Seed of the generated cases searched for each situation.
    #[arg(long, default_value_t = 66511)]
    pub seed: u64,
    /// The repository whose scenarios, findings and regressions are
    /// exported (default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Export these trace files only (as scenarios), instead of every
    /// source of the repository.
    pub files: Vec<PathBuf>,
}

fn parse_version(s: &str) -> Result<NodeVersion, String> {
    s.parse()
}

/// Export every source of `root` for `version` (or only `files`).
pub fn export_line(
    root: &Path,
    files: &[PathBuf],
    version: NodeVersion,
    seed: u64,
) -> Result<(Export, Vec<&'static str>), CliError> {
    let (sources, missing) = if files.is_empty() {
        export::all_sources(root, version, seed).map_err(|e| {
            CliError::Usage(format!(
                "{e} (run from the repository's root, or pass --root)"
            ))
        })?
    } else {
        let mut sources = Vec::new();
        for f in files {
            let trace = super::input::load_trace(f)?;
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let title = std::fs::read_to_string(f)
                .ok()
                .and_then(|text| export::title_of(&text, &name));
            sources.push(export::Source {
                origin: export::Origin::Scenario,
                name,
                ops: trace.ops(),
                situation: None,
                title,
            });
        }
        (sources, Vec::new())
    };
    let findings = std::fs::read_to_string(root.join("docs/findings.md")).unwrap_or_default();
    Ok((export::export(&sources, version, &findings), missing))
}

/// What was exported, per origin, and what was not, with the reasons.
pub fn summary(export: &Export, missing: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "node {} line: {} tests",
        export.version,
        export.tests.len()
    )?;
    for o in export::Origin::ALL {
        let n = export.tests.iter().filter(|t| t.origin == o).count();
        let r = export.refused.iter().filter(|t| t.origin == o).count();
        writeln!(out, "  {:<10} {n:>3} exported, {r:>3} not", o.name())?;
    }
    for r in &export.refused {
        writeln!(
            out,
            "  not exported: {} {}: {}",
            r.origin.name(),
            r.name,
            r.reason
        )?;
    }
    for s in missing {
        writeln!(out, "  no generated case reached situation {s}")?;
    }
    Ok(())
}

/// Run `scopecheck export`.
pub fn execute(args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // A mutant that panics is a difference, caught and counted: not printed.
    crate::lockstep::quiet_caught_panics();
    run(args, out)
}

fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let Some(dest) = &args.out else {
        let mut exports = Vec::new();
        for version in [NodeVersion::V20, NodeVersion::V26] {
            exports.push(export_line(&args.root, &args.files, version, args.seed)?.0);
        }
        return write!(out, "{}", export::listing(&exports)).map_err(CliError::Output);
    };
    crate::files::check_dir(dest).map_err(CliError::Usage)?;
    if !args.prove {
        let (exp, missing) = export_line(&args.root, &args.files, args.node_version, args.seed)?;
        export::layout::write(dest, &exp).map_err(|source| CliError::Write {
            path: dest.clone(),
            what: "the tests",
            source,
        })?;
        summary(&exp, &missing, out).map_err(CliError::Output)?;
        writeln!(out, "written under {}", dest.display()).map_err(CliError::Output)?;
        return Ok(());
    }
    let node26 = match &args.node26 {
        Some(p) => p.clone(),
        None => {
            crate::node26::find_or_install().map_err(|e| CliError::Environment(format!("{e:?}")))?
        }
    };
    let lines = [
        (NodeVersion::V20, args.node.clone()),
        (NodeVersion::V26, Some(node26)),
    ];
    let mut holds = true;
    let budget = proof::Budget {
        tests: args.tests.unwrap_or(usize::MAX),
        per_mutant: args.per_mutant,
        altered: args.altered,
    };
    for (version, node) in lines {
        let started = std::time::Instant::now();
        let (exp, missing) = export_line(&args.root, &args.files, version, args.seed)?;
        let export_seconds = started.elapsed().as_secs_f64();
        summary(&exp, &missing, out).map_err(CliError::Output)?;
        let selection = NodeSelection {
            node,
            headers: None,
        };
        let dir = dest.join(format!("v{}", version.major()));
        let p = proof::prove(&selection, exp, &dir, budget).map_err(|e| match e {
            ConformError::Stopped(why) => CliError::Environment(why),
            other => CliError::Environment(other.to_string()),
        })?;
        write!(out, "{p}").map_err(CliError::Output)?;
        writeln!(
            out,
            "  export {export_seconds:.1} s; proof on this binary {:.1} s in all",
            started.elapsed().as_secs_f64()
        )
        .map_err(CliError::Output)?;
        holds &= p.holds();
    }
    if holds {
        Ok(())
    } else {
        Err(CliError::Verdict(
            "a test failed on its binary, or a wrong variant passed".to_string(),
        ))
    }
}
