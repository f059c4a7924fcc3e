//! The proof that the exported tests are real: for each binary, the tests
//! of its line laid in a scratch Node-like tree (with the `test/common`
//! stand-in), the binding built against the binary's own headers, every
//! test run on the binary; then wrong variants of the tests (a lazy
//! mutant's observations rendered as the expectations, or an expected
//! value altered) must each make their test fail.

use super::layout::{self, Common};
use super::{lint, render, Export};
use crate::conform::{harness, ConformError, Harness, NodeSelection};
use crate::process::{self, Limits};
use lazy::mutant::Mutant;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long one test may run.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How one test ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestRun {
    /// Its path in the tree.
    pub path: String,
    /// It exited 0.
    pub passed: bool,
    /// Its exit, and what it wrote on stderr (cut), when it failed.
    pub failure: Option<String>,
}

/// A wrong variant and what it did: a lazy mutant rendered as the
/// expectations of the tests whose traces tell it apart (tried one test
/// after another until one fails), or one expected value altered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantRun {
    /// What is wrong: `mutant NAME` or `altered: LINE`.
    pub wrong: String,
    /// The tests tried, in order (the last one failed, if it was caught).
    pub tried: Vec<String>,
    /// A test failed on the binary: the variant is caught.
    pub killed: bool,
}

/// The proof on one binary.
#[derive(Clone, Debug)]
pub struct Proof {
    /// `node --version` of the binary.
    pub node_version: String,
    /// The binary.
    pub node: PathBuf,
    /// The headers the binding was built against.
    pub headers: PathBuf,
    /// The tests exported for its line.
    pub export: Export,
    /// Each test's run.
    pub runs: Vec<TestRun>,
    /// Each test's run again, with a `test/common` that does async work of
    /// its own as it loads ([`layout::INCIDENTAL_WORK`]).
    pub incidental: Vec<TestRun>,
    /// Each wrong variant's run.
    pub variants: Vec<VariantRun>,
    /// Seconds to build the binding.
    pub build_seconds: f64,
    /// Seconds to run the tests.
    pub run_seconds: f64,
    /// Seconds to run them again with async work in `test/common`.
    pub incidental_seconds: f64,
    /// Seconds to run the variants.
    pub variant_seconds: f64,
}

impl Proof {
    /// Tests that passed.
    pub fn passed(&self) -> usize {
        self.runs.iter().filter(|r| r.passed).count()
    }

    /// Variants no test caught.
    pub fn survivors(&self) -> Vec<&VariantRun> {
        self.variants.iter().filter(|v| !v.killed).collect()
    }

    /// Tests that passed with async work in `test/common`.
    pub fn passed_with_incidental_work(&self) -> usize {
        self.incidental.iter().filter(|r| r.passed).count()
    }

    /// Every test passed (with either `test/common`) and every variant was
    /// caught.
    pub fn holds(&self) -> bool {
        self.passed() == self.runs.len()
            && self.passed_with_incidental_work() == self.incidental.len()
            && self.survivors().is_empty()
    }
}

impl fmt::Display for Proof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "node {} ({}), binding built against {}",
            self.node_version,
            self.node.display(),
            self.headers.display()
        )?;
        let per_origin: Vec<String> = super::Origin::ALL
            .iter()
            .map(|o| {
                let n = self.export.tests.iter().filter(|t| t.origin == *o).count();
                let r = self
                    .export
                    .refused
                    .iter()
                    .filter(|t| t.origin == *o)
                    .count();
                format!("{} {n} (not exported {r})", o.name())
            })
            .collect();
        writeln!(f, "  exported: {}", per_origin.join(", "))?;
        writeln!(
            f,
            "  tests: {} run (each after `node --check` and Node's conventions), {} passed, {} failed (build {:.1} s, run {:.1} s)",
            self.runs.len(),
            self.passed(),
            self.runs.len() - self.passed(),
            self.build_seconds,
            self.run_seconds
        )?;
        write_failures(f, &self.runs, "")?;
        writeln!(
            f,
            "  again with async work in test/common as it loads (a tick, an Immediate, a promise reaction): {} run, {} passed, {} failed ({:.1} s)",
            self.incidental.len(),
            self.passed_with_incidental_work(),
            self.incidental.len() - self.passed_with_incidental_work(),
            self.incidental_seconds
        )?;
        write_failures(f, &self.incidental, " (with async work in test/common)")?;
        let killed = self.variants.iter().filter(|v| v.killed).count();
        writeln!(
            f,
            "  wrong variants: {} run, {killed} caught ({:.1} s)",
            self.variants.len(),
            self.variant_seconds
        )?;
        for v in &self.variants {
            match (v.killed, v.tried.last()) {
                (true, Some(t)) => writeln!(
                    f,
                    "    caught   {} by {} ({} tried)",
                    v.wrong,
                    t,
                    v.tried.len()
                )?,
                _ => writeln!(f, "    SURVIVED {} in {}", v.wrong, v.tried.join(", "))?,
            }
        }
        Ok(())
    }
}

/// One line for each run of `runs` that failed: its path, `what`, and why.
fn write_failures(f: &mut fmt::Formatter<'_>, runs: &[TestRun], what: &str) -> fmt::Result {
    for r in runs.iter().filter(|r| !r.passed) {
        let why = r.failure.as_deref().unwrap_or("");
        writeln!(f, "  FAILED {}{what}: {why}", r.path)?;
    }
    Ok(())
}

/// How much of the proof [`prove`] runs.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Tests run (in source order; `usize::MAX` for all).
    pub tests: usize,
    /// Tests tried at most for each mutant.
    pub per_mutant: usize,
    /// Tests with one expected value altered.
    pub altered: usize,
}

/// The proof on the binary `selection` picks, for `export` (its line's
/// tests), in the scratch tree `dir`.
pub fn prove(
    selection: &NodeSelection,
    export: Export,
    dir: &Path,
    budget: Budget,
) -> Result<Proof, ConformError> {
    let harness = Harness::with_node(selection, &dir.join("conform"))?;
    let tree = dir.join("tree");
    let busy_tree = dir.join("tree-incidental-work");
    let io = |what: &str, e: std::io::Error| ConformError::Io(format!("{what}: {e}"));
    for t in [&tree, &busy_tree] {
        if t.exists() {
            std::fs::remove_dir_all(t).map_err(|e| io("clear the scratch tree", e))?;
        }
    }
    let mut export = export;
    export.tests.truncate(budget.tests);
    layout::write_scratch(&tree, &export, Common::Plain)
        .map_err(|e| io("write the scratch tree", e))?;
    layout::write_scratch(&busy_tree, &export, Common::WithIncidentalWork)
        .map_err(|e| io("write the scratch tree", e))?;
    let started = Instant::now();
    build_binding(&harness, &tree)?;
    build_binding(&harness, &busy_tree)?;
    let build_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let runs: Vec<TestRun> = parallel(&export.tests, |t| {
        let mut problems = lint::conventions(&t.path, &t.rendered.source);
        problems.extend(syntax(&harness.node, &tree, &t.path)?);
        if let Some(fixture) = &t.rendered.fixture {
            let path = layout::fixture_path(&t.path);
            problems.extend(lint::conventions(&path, fixture));
            problems.extend(syntax(&harness.node, &tree, &path)?);
        }
        if !problems.is_empty() {
            return Ok(TestRun {
                path: t.path.clone(),
                passed: false,
                failure: Some(format!("lint: {}", problems.join("; "))),
            });
        }
        run_test(&harness.node, &tree, &t.path, &t.rendered.source, None)
    })?;
    let run_seconds = started.elapsed().as_secs_f64();
    // The same tests, with a test/common that does async work as it loads.
    let started = Instant::now();
    let incidental: Vec<TestRun> = parallel(&export.tests, |t| {
        let fixture = t.rendered.fixture.as_deref();
        run_test(
            &harness.node,
            &busy_tree,
            &t.path,
            &t.rendered.source,
            fixture,
        )
    })?;
    let incidental_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let plans = variants(&export, budget);
    let numbered: Vec<(usize, &Plan)> = plans.iter().enumerate().collect();
    let variants: Vec<VariantRun> = parallel(&numbered, |(n, (wrong, busy, tries))| {
        let mut run = VariantRun {
            wrong: wrong.clone(),
            tried: Vec::new(),
            killed: false,
        };
        let tree = if *busy { &busy_tree } else { &tree };
        for (k, (test, source, fixture)) in tries.iter().enumerate() {
            let path = variant_path(test, *n, k);
            let result = run_test(&harness.node, tree, &path, source, fixture.as_deref())?;
            let _ = std::fs::remove_file(tree.join(&path));
            if fixture.is_some() {
                let _ = std::fs::remove_file(tree.join(layout::fixture_path(&path)));
            }
            run.tried.push(test.clone());
            if !result.passed {
                run.killed = true;
                break;
            }
        }
        Ok(run)
    })?;
    let variant_seconds = started.elapsed().as_secs_f64();
    Ok(Proof {
        node_version: harness.node_version.clone(),
        node: harness.node.clone(),
        headers: harness.headers.clone(),
        export,
        runs,
        incidental,
        variants,
        build_seconds,
        run_seconds,
        incidental_seconds,
        variant_seconds,
    })
}

/// The variant's file, beside its test (so that `./build/` and the
/// `common` path stay right).
fn variant_path(path: &str, plan: usize, k: usize) -> String {
    let (stem, ext) = path.rsplit_once('.').unwrap_or((path, "js"));
    format!("{stem}-wrong-{plan}-{k}.{ext}")
}

/// A wrong variant to run: what is wrong, whether it runs in the tree whose
/// `test/common` does async work as it loads, and the tests to try it on
/// (path, the test's text and its ES module's, the wrong expectations in
/// the one that has them).
type Plan = (String, bool, Vec<(String, String, Option<String>)>);

/// The line of a test's hook recorder that leaves out the calls of ids not
/// the test's own (render's `ownIds`).
const OWN_IDS_FILTER: &str = "if (!ownIds.has(id)) return;";

/// The wrong variants: each mutant of the catalogue, rendered as the
/// expectations of up to `budget.per_mutant` tests whose traces tell it
/// apart from the model (those whose text it changes); then the first
/// `budget.altered` tests that have an expected value to alter, each with
/// one altered.
fn variants(export: &Export, budget: Budget) -> Vec<Plan> {
    let mut out: Vec<Plan> = Vec::new();
    for m in Mutant::ALL {
        let name = m.name();
        let tries: Vec<(String, String, Option<String>)> = (export.tests.iter())
            .filter(|t| t.mutants.contains(&name))
            .filter_map(|t| {
                let wrong = render::render(
                    &t.ops,
                    export.version,
                    || lazy::mutant::environment(*m),
                    &t.comment,
                )
                .ok()?;
                (wrong.source != t.rendered.source || wrong.fixture != t.rendered.fixture)
                    .then(|| (t.path.clone(), wrong.source, wrong.fixture))
            })
            .take(budget.per_mutant)
            .collect();
        if !tries.is_empty() {
            out.push((format!("mutant {name}"), false, tries));
        }
    }
    // The first `budget.altered` tests that have an expected value to alter
    // (a test that only checks how its child died may have none).
    let alters = export.tests.iter().filter_map(|t| {
        let alter = match &t.rendered.fixture {
            Some(fixture) => {
                altered(fixture).map(|(line, text)| (line, t.rendered.source.clone(), Some(text)))
            }
            None => altered(&t.rendered.source).map(|(line, text)| (line, text, None)),
        };
        alter.map(|(line, source, fixture)| {
            (
                format!("altered: {line}"),
                false,
                vec![(t.path.clone(), source, fixture)],
            )
        })
    });
    out.extend(alters.take(budget.altered));
    // The incidental run's own check: without the recorder's filter, a test
    // whose hooks see test/common's tick, Immediate or promise reaction
    // must fail there.
    let unfiltered: Vec<(String, String, Option<String>)> = (export.tests.iter())
        .filter(|t| t.rendered.fixture.is_none() && t.rendered.source.contains(OWN_IDS_FILTER))
        .map(|t| {
            let kept: Vec<&str> = (t.rendered.source.lines())
                .filter(|l| l.trim() != OWN_IDS_FILTER)
                .collect();
            (t.path.clone(), format!("{}\n", kept.join("\n")), None)
        })
        .take(budget.per_mutant)
        .collect();
    if !unfiltered.is_empty() {
        let wrong = "with async work in test/common: the hooks record its calls too";
        out.push((wrong.to_string(), true, unfiltered));
    }
    out
}

/// The test with its first `assert.strictEqual(..., N)` (or `expectSame`)
/// expecting `N + 1`
/// instead: the altered line and the source.
pub fn altered(source: &str) -> Option<(String, String)> {
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    for l in lines.iter_mut() {
        let t = l.trim_start();
        let checks = t.starts_with("assert.strictEqual(") || t.starts_with("expectSame(");
        if !checks || !t.ends_with(");") {
            continue;
        }
        let inner = &t[..t.len() - 2];
        let Some((head, last)) = inner.rsplit_once(", ") else {
            continue;
        };
        let Ok(n) = last.parse::<i64>() else { continue };
        let indent = &l[..l.len() - t.len()];
        let new = format!("{indent}{head}, {});", n + 1);
        let shown = new.trim().to_string();
        *l = new;
        let mut text = lines.join("\n");
        text.push('\n');
        return Some((shown, text));
    }
    None
}

/// Build the addon folder's two bindings (`binding.cc`, `napi_binding.c`) with the compiler, against the
/// binary's own headers, where `require(`./build/${common.buildType}/binding`)`
/// finds it.
fn build_binding(harness: &Harness, tree: &Path) -> Result<(), ConformError> {
    let addon = tree.join(layout::ADDON_DIR);
    if !addon.join("binding.cc").is_file() {
        return Ok(());
    }
    let out = addon.join("build/Release");
    std::fs::create_dir_all(&out)
        .map_err(|e| ConformError::Io(format!("create {}: {e}", out.display())))?;
    let cxx = harness::compiler()?;
    let std = harness::cxx_standard(&harness.headers);
    harness::build_addon(
        &cxx,
        &std,
        &harness.headers,
        &out,
        layout::BINDING_CC,
        &out.join("binding.node"),
    )?;
    harness::build_c_addon(
        &cxx,
        &harness.headers,
        &out,
        layout::NAPI_BINDING_C,
        &out.join("napi_binding.node"),
    )
}

/// Run `f` on each item, two at a time (the machine's two cores).
fn parallel<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, ConformError> + Sync,
) -> Result<Vec<R>, ConformError> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let chunk = items.len().div_ceil(workers).max(1);
    let results: Vec<Result<Vec<R>, ConformError>> = std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Result<Vec<R>, ConformError>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ConformError::Io("a worker panicked".to_string())))
            })
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// The `// Flags:` of a test, as Node's test runner reads them.
pub fn flags(source: &str) -> Vec<String> {
    source
        .lines()
        .find_map(|l| l.strip_prefix("// Flags:"))
        .map(|f| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// `node --check` on the test at `path` in `tree`: what it says if the
/// file does not parse.
fn syntax(node: &Path, tree: &Path, path: &str) -> Result<Option<String>, ConformError> {
    let mut command = Command::new(node);
    command
        .arg("--check")
        .arg(tree.join(path))
        .current_dir(tree);
    match process::run(&mut command, None, &Limits::new(TEST_TIMEOUT)) {
        Ok(out) if out.status.success() => Ok(None),
        Ok(out) => Ok(Some(format!(
            "node --check: {}",
            model::vocab::trace::quote_at_most(String::from_utf8_lossy(&out.stderr).trim(), 300)
        ))),
        Err(e) => match e.failure {
            process::Failure::Interrupted(signal) => Err(ConformError::Stopped(format!(
                "interrupted (signal {signal})"
            ))),
            other => Ok(Some(format!("node --check: {other}"))),
        },
    }
}

/// Write `source` at `path` in `tree` (and the ES module it runs, if
/// any, beside it) and run it with its flags, as `tools/test.py` does.
fn run_test(
    node: &Path,
    tree: &Path,
    path: &str,
    source: &str,
    fixture: Option<&str>,
) -> Result<TestRun, ConformError> {
    if let Some(text) = fixture {
        let file = tree.join(layout::fixture_path(path));
        crate::files::replace(&file, text.as_bytes())
            .map_err(|e| ConformError::Io(format!("write {}: {e}", file.display())))?;
    }
    let file = tree.join(path);
    crate::files::replace(&file, source.as_bytes())
        .map_err(|e| ConformError::Io(format!("write {}: {e}", file.display())))?;
    let mut command = Command::new(node);
    command.args(flags(source)).arg(&file).current_dir(tree);
    let result = process::run(&mut command, None, &Limits::new(TEST_TIMEOUT));
    let (passed, failure) = match result {
        Ok(out) if out.status.success() => (true, None),
        Ok(out) => (
            false,
            Some(format!(
                "{}; stderr: {}",
                out.status,
                model::vocab::trace::quote_at_most(
                    String::from_utf8_lossy(&out.stderr).trim(),
                    600
                )
            )),
        ),
        Err(e) => match e.failure {
            process::Failure::Interrupted(signal) => {
                return Err(ConformError::Stopped(format!(
                    "interrupted (signal {signal})"
                )))
            }
            other => (false, Some(other.to_string())),
        },
    };
    Ok(TestRun {
        path: path.to_string(),
        passed,
        failure,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_altered_value_is_the_first_number_a_strict_equal_expects() {
        let source = "'use strict';\nassert.strictEqual(a(), r1);\n  assert.strictEqual(executionAsyncId(), 5);\nassert.strictEqual(b(), 6);\n";
        let (line, text) = altered(source).expect("a number to alter");
        assert_eq!(line, "assert.strictEqual(executionAsyncId(), 6);");
        assert_eq!(text, "'use strict';\nassert.strictEqual(a(), r1);\n  assert.strictEqual(executionAsyncId(), 6);\nassert.strictEqual(b(), 6);\n");
        assert_eq!(
            flags("// Flags: --expose-internals --no-force-async-hooks-checks\n'use strict';\n"),
            ["--expose-internals", "--no-force-async-hooks-checks"]
        );
    }
}
