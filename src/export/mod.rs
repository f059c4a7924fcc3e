//! `scopecheck export`: the suite's cases as Node core tests that the pull
//! request (<https://github.com/nodejs/node/pull/66511>) can carry.
//!
//! A case is a trace ([`Source`]): a scenario (`tests/scenarios/`), a
//! finding's counterexample (`docs/findings.md`), a regression
//! (`tests/regressions/`), or a generated case that reaches one named
//! situation of [`crate::coverage`] ([`situation_cases`]). Whether node can
//! run it is [`crate::conform::decide`]'s question, asked op by op as for
//! conformance ([`prepare`]); [`render`] writes what node can run as a test
//! whose expected values are the eager model's for the binary's line;
//! [`layout`] puts the tests where Node keeps them (docs/export.md).
//! [`proof`] shows the tests are real: they build and pass on both
//! binaries, and wrong variants of them fail.

pub mod layout;
pub mod lint;
pub mod proof;
pub mod render;

use crate::conform::prepare::{close_open_frames, run_until_exit};
use crate::conform::{Capabilities, Decider};
use crate::coverage::{self, Coverage, SITUATIONS};
use lazy::mutant::Mutant;
use model::vocab::{trace, NodeVersion, Op, Runtime};
use model::Eager;
use std::collections::BTreeSet;
use std::path::Path;

/// Where a case comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// `tests/scenarios/NAME.trace`.
    Scenario,
    /// A counterexample of `docs/findings.md` (or `docs/node-findings.md`).
    Finding,
    /// `tests/regressions/NAME.trace`.
    Regression,
    /// A generated case chosen to reach one named situation.
    Situation,
}

impl Origin {
    /// Every origin, in the order the tests are listed.
    pub const ALL: [Origin; 4] = [
        Origin::Scenario,
        Origin::Finding,
        Origin::Regression,
        Origin::Situation,
    ];

    /// Its name in file names and tables.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Scenario => "scenario",
            Origin::Finding => "finding",
            Origin::Regression => "regression",
            Origin::Situation => "situation",
        }
    }
}

/// One case to export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Where it comes from.
    pub origin: Origin,
    /// Its name (the trace file's stem, the mutant's, the situation's).
    pub name: String,
    /// The trace.
    pub ops: Vec<Op>,
    /// The named situation it was chosen for, if any.
    pub situation: Option<&'static str>,
    /// What a scenario shows, from its header (`# Scenario: TITLE`, to the
    /// first bare `#`), when that says more than its name ([`title_of`]).
    pub title: Option<String>,
}

/// The title of a scenario's text: its `# Scenario: ` line and the comment
/// lines that go on from it up to a bare `#`, joined. Where that only
/// repeats the trace's `name`, the first sentence of the paragraph after
/// it, if it stands alone in Node's tree ([`stands_alone`]; "Pins down "
/// and the full stop left off). `None` when there is no `# Scenario: ` line or neither will
/// do.
pub fn title_of(text: &str, name: &str) -> Option<String> {
    let mut lines = text.lines();
    let first = lines.find_map(|l| l.strip_prefix("# Scenario: "))?;
    let mut title = first.trim().to_string();
    let mut rest = Vec::new();
    let mut in_title = true;
    for l in lines {
        let Some(more) = l.strip_prefix('#').map(str::trim) else {
            break;
        };
        match (in_title, more.is_empty()) {
            (true, false) => {
                title.push(' ');
                title.push_str(more);
            }
            (true, true) => in_title = false,
            (false, true) if !rest.is_empty() => break,
            (false, true) => {}
            (false, false) => rest.push(more),
        }
    }
    if title != name && !title.is_empty() && !names_ours(&title) {
        return Some(title);
    }
    let paragraph = rest.join(" ");
    let sentence = match paragraph.find(". ") {
        Some(end) => &paragraph[..=end],
        None => paragraph.as_str(),
    };
    let sentence = sentence.strip_prefix("Pins down ").unwrap_or(sentence);
    (stands_alone(sentence)).then(|| sentence.trim_end_matches('.').to_string())
}

/// The longest sentence [`title_of`] takes from a scenario's text.
const TITLE_MAX: usize = 160;

/// Whether `sentence` reads as a test's comment in Node's tree: a whole
/// sentence of at most [`TITLE_MAX`] characters (its backquotes and
/// parentheses closed) that names none of this project's own things (a
/// trace file, its docs, an op of the trace language in backquotes) and
/// quotes no number (the test writes the trace's ids otherwise).
fn stands_alone(sentence: &str) -> bool {
    let quotes_ours = sentence.split('`').skip(1).step_by(2).any(|quoted| {
        quoted.contains(|c: char| c.is_ascii_digit())
            || trace::parse(quoted).is_ok_and(|t| !t.ops().is_empty())
    });
    let closed = sentence.matches('`').count().is_multiple_of(2)
        && sentence.matches('(').count() == sentence.matches(')').count();
    closed
        && sentence.len() <= TITLE_MAX
        && sentence.ends_with('.')
        && !names_ours(sentence)
        && !quotes_ours
}

/// Whether `text` names one of this project's own things: a trace file,
/// its docs, the project, its model.
fn names_ours(text: &str) -> bool {
    [".trace", "docs/", "scopecheck", "the model"]
        .iter()
        .any(|o| text.contains(o))
}

/// Why a case was not exported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The case.
    pub origin: Origin,
    /// Its name.
    pub name: String,
    /// Why, naming the op.
    pub reason: String,
}

/// An exported test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Test {
    /// Where it comes from.
    pub origin: Origin,
    /// The case's name.
    pub name: String,
    /// Its path in a Node checkout (`test/addons/...` or `test/async-hooks/...`).
    pub path: String,
    /// The test as written.
    pub rendered: render::Rendered,
    /// The test's own one-line description, as it reads in Node's tree:
    /// what the test shows, and the pull request.
    pub comment: String,
    /// Its row in docs/export-tests.md: the description, where the case
    /// comes from, and the design decisions whose mistakes it shows.
    pub listed: String,
    /// The ops as run (decided, cut at the model's death, closes appended).
    pub ops: Vec<Op>,
    /// The mutants (by name) whose observations differ from the model's on
    /// this trace: the design decisions the test exercises.
    pub mutants: Vec<String>,
}

/// The export of every source for one line: tests and refusals.
#[derive(Clone, Debug, Default)]
pub struct Export {
    /// The line the expectations are for.
    pub version: NodeVersion,
    /// The tests, in source order.
    pub tests: Vec<Test>,
    /// The cases not exported, with the reason.
    pub refused: Vec<Refusal>,
}

/// The capabilities of a binary of `version` (what decide asks of it).
pub fn capabilities(version: NodeVersion) -> Capabilities {
    match version {
        NodeVersion::V20 => Capabilities::default(),
        NodeVersion::V26 => Capabilities::node26(),
    }
}

/// The trace as node runs it: decided op by op for a binary of `version`
/// ([`Decider`]), cut after the model's death, with a close appended for
/// every frame left open. The first op node cannot express refuses it.
pub fn prepare(ops: &[Op], version: NodeVersion) -> Result<Vec<Op>, String> {
    let mut env = Eager::for_version(version);
    let mut decider = Decider::in_worker(capabilities(version));
    let mut run = Vec::with_capacity(ops.len() + 4);
    let mut step = |env: &mut Eager, op: &Op, run: &mut Vec<Op>| -> Result<(), String> {
        match decider.apply(env, op) {
            Err(u) => Err(u.to_string()),
            Ok(Err(e)) => Err(format!("the model rejects op {} `{op}`: {e}", run.len())),
            Ok(Ok(_)) => {
                run.push(op.clone());
                Ok(())
            }
        }
    };
    run_until_exit(&mut env, ops, |env, op| {
        if matches!(op, Op::NodeVersion(v) if *v != version) {
            return Err(format!(
                "the trace says `{op}`, but this export is for node {version}"
            ));
        }
        step(env, op, &mut run)
    })?;
    close_open_frames(&mut env, |env, op| step(env, &op, &mut run))?;
    Ok(run)
}

/// The named situations no test is exported for: the read that makes
/// `unspecified-resource` has an unspecified answer, and a test leaves it
/// out (`render::observe`).
pub const NOT_EXPORTED_SITUATIONS: &[&str] = &["unspecified-resource"];

/// The named situations `ops` reaches on the lazy side (the pull request's
/// design), in [`SITUATIONS`] order, but for [`NOT_EXPORTED_SITUATIONS`].
pub fn situations(ops: &[Op], version: NodeVersion) -> Vec<&'static str> {
    let mut lazy = lazy::Lazy::default();
    lazy.version = version;
    let mut c = Coverage::default();
    for op in ops {
        let closing = coverage::closes_lazy_scope(&lazy, op);
        c.before_op(&lazy, op);
        let Ok(obs) = lazy.apply(op) else { break };
        c.after_op(closing, &lazy, op, &obs);
        if lazy.exited {
            break;
        }
    }
    (SITUATIONS.iter())
        .map(|(name, _)| *name)
        .filter(|n| c.situations.contains_key(n) && !NOT_EXPORTED_SITUATIONS.contains(n))
        .collect()
}

/// The mutants whose observations on `ops` differ from the eager model's.
pub fn killed_by(ops: &[Op], version: NodeVersion) -> Vec<Mutant> {
    let mut eager = Eager::for_version(version);
    let expected: Vec<_> = ops.iter().map(|op| eager.apply(op)).collect();
    (Mutant::ALL.iter().copied())
        .filter(|&m| {
            let mut env = lazy::mutant::environment(m);
            env.version = version;
            let differs = ops.iter().zip(&expected).any(|(op, want)| {
                let got = crate::lockstep::catch_panic(|| env.apply(op));
                &got != want
            });
            differs
        })
        .collect()
}

/// The decision number of each mutant, as docs/findings.md's headings give
/// it (`## NAME (decision N)`).
pub fn decisions(findings: &str) -> Vec<(String, u32)> {
    findings
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("## ")?;
            let (name, rest) = rest.split_once(" (decision ")?;
            let n = rest.strip_suffix(')')?.parse().ok()?;
            Some((name.to_string(), n))
        })
        .collect()
}

/// The scenarios of `dir` (`*.trace`, by file name).
pub fn scenario_sources(dir: &Path, origin: Origin) -> Result<Vec<Source>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let t = trace::parse(&text).map_err(|e| format!("{}:{e}", f.display()))?;
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Source {
            origin,
            name: name.clone(),
            ops: t.ops(),
            situation: None,
            title: (origin == Origin::Scenario)
                .then(|| title_of(&text, &name))
                .flatten(),
        });
    }
    Ok(out)
}

/// The counterexamples of a findings document: each fenced block that
/// parses as a trace, named after its `## ` heading's first word.
pub fn finding_sources(text: &str) -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    let mut heading = String::new();
    let mut block: Option<String> = None;
    for l in text.lines() {
        if let Some(h) = l.strip_prefix("## ") {
            heading = h.split_whitespace().next().unwrap_or("").to_string();
        }
        if l.starts_with("```") {
            match block.take() {
                None => block = Some(String::new()),
                Some(b) => {
                    let is_trace = l.trim() == "```" && !heading.is_empty();
                    if let (true, Ok(t)) = (is_trace, trace::parse(&b)) {
                        let ops = t.ops();
                        if ops.is_empty() {
                            continue;
                        }
                        let taken = out.iter().filter(|s| s.name.starts_with(&heading)).count();
                        let name = match taken {
                            0 => heading.clone(),
                            n => format!("{heading}-{}", n + 1),
                        };
                        out.push(Source {
                            origin: Origin::Finding,
                            name,
                            ops,
                            situation: None,
                            title: None,
                        });
                    }
                }
            }
            continue;
        }
        if let Some(b) = &mut block {
            b.push_str(l);
            b.push('\n');
        }
    }
    out
}

/// How many random cases [`situation_cases`] looks through for each line.
pub const SITUATION_SEARCH: u64 = 3000;

/// For each named situation that exists on `version`, the first of the
/// conformance generator's cases (seed `seed`, decided for the binary)
/// that reaches it and that [`render`] can write, shrunk by removing ops
/// while it still does; the situations no case reached, apart.
pub fn situation_cases(version: NodeVersion, seed: u64) -> (Vec<Source>, Vec<&'static str>) {
    let caps = capabilities(version);
    let wanted: Vec<&'static str> = (SITUATIONS.iter())
        .map(|(n, _)| *n)
        .filter(|n| coverage::exists_on(version, n) && !NOT_EXPORTED_SITUATIONS.contains(n))
        .collect();
    let mut found: Vec<Source> = Vec::new();
    let mut left: BTreeSet<&'static str> = wanted.iter().copied().collect();
    for case in 0..SITUATION_SEARCH {
        if left.is_empty() {
            break;
        }
        let ops = crate::conform::random_case(seed, case, caps);
        let reached = situations(&ops, version);
        for s in reached {
            if !left.contains(s) {
                continue;
            }
            let keeps = |ops: &[Op]| {
                situations(ops, version).contains(&s)
                    && prepare(ops, version)
                        .ok()
                        .is_some_and(|run| writes(&run, version))
            };
            if !keeps(&ops) {
                continue;
            }
            let small = shrink(ops.clone(), &keeps);
            left.remove(s);
            found.push(Source {
                origin: Origin::Situation,
                name: s.to_string(),
                ops: small,
                situation: Some(s),
                title: None,
            });
        }
    }
    found.sort_by_key(|s| SITUATIONS.iter().position(|(n, _)| *n == s.name));
    (found, left.into_iter().collect())
}

/// Whether the renderer writes `run` (a prepared trace).
fn writes(run: &[Op], version: NodeVersion) -> bool {
    render::render(run, version, Eager::new, "").is_ok()
}

/// `ops` with ops removed (runs of 8, 4, 2, then single ops) while `keeps`
/// holds.
fn shrink(mut ops: Vec<Op>, keeps: &impl Fn(&[Op]) -> bool) -> Vec<Op> {
    for width in [8usize, 4, 2, 1] {
        let mut i = 0;
        while i < ops.len() {
            let end = (i + width).min(ops.len());
            let mut candidate = ops.clone();
            candidate.drain(i..end);
            if !candidate.is_empty() && keeps(&candidate) {
                ops = candidate;
            } else {
                i += 1;
            }
        }
    }
    ops
}

/// Every source of the repository at `root` for `version`: the scenarios,
/// the findings' counterexamples, the regressions and one case per
/// situation; the situations no generated case reached.
pub fn all_sources(
    root: &Path,
    version: NodeVersion,
    seed: u64,
) -> Result<(Vec<Source>, Vec<&'static str>), String> {
    let mut sources = scenario_sources(&root.join("tests/scenarios"), Origin::Scenario)?;
    for doc in ["docs/findings.md", "docs/node-findings.md"] {
        let p = root.join(doc);
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        sources.extend(finding_sources(&text));
    }
    sources.extend(scenario_sources(
        &root.join("tests/regressions"),
        Origin::Regression,
    )?);
    let (cases, mut missing) = situation_cases(version, seed);
    // A situation no generated case reaches (`stop`, which the conformance
    // generator never draws) may still be reached by a written source.
    missing.retain(|s| {
        !sources.iter().any(|source| {
            prepare(&source.ops, version)
                .is_ok_and(|run| situations(&run, version).contains(s) && writes(&run, version))
        })
    });
    sources.extend(cases);
    Ok((sources, missing))
}

/// Export `sources` for `version`, with the decision numbers of
/// `findings` (docs/findings.md's text) in the comments.
pub fn export(sources: &[Source], version: NodeVersion, findings: &str) -> Export {
    let decisions = decisions(findings);
    let mut out = Export {
        version,
        ..Export::default()
    };
    let mut names = BTreeSet::new();
    let generated: BTreeSet<&str> = sources.iter().filter_map(|s| s.situation).collect();
    for s in sources {
        let refuse = |reason: String| Refusal {
            origin: s.origin,
            name: s.name.clone(),
            reason,
        };
        let run = match prepare(&s.ops, version) {
            Ok(run) => run,
            Err(e) => {
                out.refused.push(refuse(e));
                continue;
            }
        };
        let reached = situations(&run, version);
        // The situation named: the source's own, else the first it reaches
        // that no generated case is exported for, else the first it reaches.
        let uncovered = reached.iter().find(|n| !generated.contains(*n));
        let situation = s.situation.or(uncovered.or(reached.first()).copied());
        let mutants: Vec<String> = killed_by(&run, version).iter().map(|m| m.name()).collect();
        let (comment, listed) = comment(s, situation, &mutants, &decisions);
        let rendered = match render::render(&run, version, Eager::new, &comment) {
            Ok(r) => r,
            Err(e) => {
                out.refused.push(refuse(format!(
                    "op {} `{}`: {}",
                    e.index,
                    run.get(e.index).map(|o| o.to_string()).unwrap_or_default(),
                    e.reason
                )));
                continue;
            }
        };
        let ext = if rendered.module && rendered.fixture.is_none() {
            "mjs"
        } else {
            "js"
        };
        // Named by subsystem, as Node's tests are.
        let file = format!(
            "test-async-context-scope-{}-{}.{ext}",
            s.origin.name(),
            s.name
        );
        if !names.insert(file.clone()) {
            out.refused
                .push(refuse(format!("a second case named {file}")));
            continue;
        }
        let path = layout::path_of(&file, rendered.binding);
        out.tests.push(Test {
            origin: s.origin,
            name: s.name.clone(),
            path,
            rendered,
            comment,
            listed,
            ops: run,
            mutants,
        });
    }
    out
}

/// The test's one-line description, and its row in the listing. The
/// description says what the test shows (the lazy situation it reaches) and
/// names the pull request; it stands alone in Node's tree, without this
/// project's names and numbers. The row adds where the case comes from and
/// the decisions whose mistakes it would show.
fn comment(
    s: &Source,
    situation: Option<&str>,
    mutants: &[String],
    decisions: &[(String, u32)],
) -> (String, String) {
    let what = match (
        &s.title,
        situation.and_then(|n| SITUATIONS.iter().find(|(k, _)| *k == n)),
    ) {
        (Some(title), _) => title.clone(),
        (None, Some((_, text))) => text.to_string(),
        (None, None) => "the async context across callback scopes".to_string(),
    };
    let mut numbers: Vec<u32> = mutants
        .iter()
        .filter_map(|m| decisions.iter().find(|(n, _)| n == m).map(|(_, d)| *d))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let decided = match numbers.as_slice() {
        [] => String::new(),
        [one] => format!("; decision {one}"),
        many => format!(
            "; decisions {}",
            many.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    (
        format!("{what} (nodejs/node#66511)."),
        format!(
            "{what} ({} {}{decided}; nodejs/node#66511).",
            s.origin.name(),
            s.name
        ),
    )
}

/// The list of exported tests as docs/export-tests.md holds it: for each
/// test, the lines it is exported for and its description (situation,
/// decisions), from the exports of every line.
pub fn listing(exports: &[Export]) -> String {
    let mut rows: std::collections::BTreeMap<&str, (Vec<String>, &str)> = Default::default();
    for e in exports {
        for t in &e.tests {
            let row = rows.entry(&t.path).or_insert((Vec::new(), &t.listed));
            row.0.push(e.version.major().to_string());
        }
    }
    let mut out = String::from(
        "# The exported tests\n\n\
         Written by `scopecheck export --list > docs/export-tests.md` (a test\n\
         checks it is current); docs/export.md says how they are made and\n\
         proved. Each row: the test's path in a Node checkout, the release\n\
         lines it is exported for, and its first comment (what it shows: a\n\
         scenario's title, or the lazy situation it reaches), where it comes\n\
         from, and the design decisions of docs/lazy-design.md whose mistakes\n\
         it shows.\n\n\
         | test | lines | situation; source; decisions |\n\
         | --- | --- | --- |\n",
    );
    for (path, (lines, comment)) in rows {
        let _ = std::fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "| `{path}` | {} | {} |\n",
                lines.join(", "),
                comment.replace('|', "\\|")
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::title_of;

    #[test]
    fn a_scenario_title_is_its_header_or_the_first_sentence_after_it_that_stands_alone() {
        let text = "# Scenario: a Timeout made in a store, the storage\n\
                    # disabled again\n#\n# More that is not the title.\nset-timeout\n";
        assert_eq!(
            title_of(text, "timer-store").as_deref(),
            Some("a Timeout made in a store, the storage disabled again")
        );
        // A header that only repeats the name: the next paragraph's first
        // sentence, where it stands alone.
        let bare = "# Scenario: tick-body-throws\n#\n# Pins down a tick callback that throws. More.\n#\n# Not this.\n";
        assert_eq!(
            title_of(bare, "tick-body-throws").as_deref(),
            Some("a tick callback that throws")
        );
        let ops = "# Scenario: x\n#\n# A scope and `next-tick-body` in it.\nclose\n";
        assert_eq!(title_of(ops, "x"), None, "an op of the trace language");
        let header = "# Scenario: the ops of y.trace on v20\n#\n# A tick that throws.\n";
        assert_eq!(title_of(header, "x").as_deref(), Some("A tick that throws"));
        let files = "# Scenario: x\n#\n# The ops of x.trace on v20.\n";
        assert_eq!(title_of(files, "x"), None, "a trace file");
        let long = format!("# Scenario: x\n#\n# {}.\n", "word ".repeat(40).trim());
        assert_eq!(title_of(&long, "x"), None, "too long");
        let numbers = "# Scenario: x\n#\n# After `emitDestroy(3)`, `emitAfter(3)`.\n";
        assert_eq!(
            title_of(numbers, "x"),
            None,
            "an id the test writes otherwise"
        );
        let cut = "# Scenario: x\n#\n# The loop (`do { f(). g() }`). More.\n";
        assert_eq!(title_of(cut, "x"), None, "a sentence cut inside code");
        let node = "# Scenario: x\n#\n# Pins down `emitAfter` from JS.\n";
        assert_eq!(title_of(node, "x").as_deref(), Some("`emitAfter` from JS"));
        assert_eq!(
            title_of("# Counterexample found by ...\nclose\n", "x"),
            None
        );
    }
}
