//! The runs of `scopecheck bench`: the addon of `node/addon.cc` built
//! against one binary's own headers (as the conformance addon is: the
//! module versions of two binaries differ), and one run of `n` calls of one
//! [`Kind`] in a fresh node process, timed inside it from before
//! `run(n, ...)` to its `finished` callback, as Node's
//! `benchmark/common.js` times `bench.start()` to `bench.end(n)`; or the
//! same run under valgrind, its instructions counted
//! ([`Bench::instructions_per_call`]). Every child runs under
//! [`crate::process`]'s bounds.

use crate::conform::harness::{build_addon, tool, Toolchain};
use crate::conform::{ConformError, NodeSelection};
use crate::process::{self, Limits, Output};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The addon's source.
pub const ADDON_CC: &str = include_str!("node/addon.cc");

/// How one run calls the JS function, Node's benchmark's `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `node::MakeCallback(isolate, recv, fn, 0, nullptr, {0, 0})`.
    MakeCallback,
    /// `node::AsyncResource::MakeCallback` on one resource.
    AsyncResource,
    /// `v8::Function::Call`: the call without Node's callback scope.
    Call,
}

impl Kind {
    /// The three, in the order of Node's benchmark.
    pub const ALL: [Kind; 3] = [Kind::MakeCallback, Kind::AsyncResource, Kind::Call];

    /// The name Node's benchmark gives it (`type=...`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::MakeCallback => "MakeCallback",
            Kind::AsyncResource => "AsyncResource",
            Kind::Call => "Call",
        }
    }

    /// The addon's number for it.
    fn code(self) -> u8 {
        match self {
            Kind::MakeCallback => 0,
            Kind::AsyncResource => 1,
            Kind::Call => 2,
        }
    }
}

/// What a run sets up before its calls (issue 56): the fields of
/// `async_hook_fields` it makes non-zero decide whether the pull request's
/// lazy path can apply (no hook enabled, `executionAsyncResource()` never
/// called) and whether `callbackTrampoline` runs each `MakeCallback`
/// (a hook enabled, and `kBefore + kAfter + kUsesExecutionAsyncResource >
/// 0`): a second, separate cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Variant {
    /// Nothing: Node's benchmark as it is.
    None,
    /// `createHook({ init() {} }).enable()`: kInit and kTotals.
    HookInit,
    /// `createHook({ before() {}, after() {} }).enable()`: kBefore and
    /// kAfter, so the trampoline.
    HookBeforeAfter,
    /// One `executionAsyncResource()` call: kUsesExecutionAsyncResource
    /// (no trampoline: only `enableHooks()` installs it).
    Ear,
    /// `new AsyncLocalStorage().enterWith({})`: on v20 an init hook and
    /// kUsesExecutionAsyncResource (so the trampoline); on Node 26 nothing
    /// (its AsyncLocalStorage is built on the AsyncContextFrame).
    Als,
}

impl Variant {
    /// Every variant, `none` first.
    pub const ALL: [Variant; 5] = [
        Variant::None,
        Variant::HookInit,
        Variant::HookBeforeAfter,
        Variant::Ear,
        Variant::Als,
    ];

    /// Its name on the command line and in the program.
    pub fn name(self) -> &'static str {
        match self {
            Variant::None => "none",
            Variant::HookInit => "hook-init",
            Variant::HookBeforeAfter => "hook-before-after",
            Variant::Ear => "ear",
            Variant::Als => "als",
        }
    }
}

/// What one run measured, inside the node process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The calls made.
    pub calls: u64,
    /// Wall time from before `run` to `finished`, in nanoseconds
    /// (`process.hrtime.bigint()`).
    pub wall_ns: u64,
    /// The process's CPU time (user + system) over the same span, in
    /// microseconds (`process.cpuUsage()`).
    pub cpu_us: u64,
    /// A call made before the timed ones, in the same set-up, ran through
    /// `callbackTrampoline` (its function's stack has that frame).
    pub trampoline: bool,
}

impl Sample {
    /// Calls per second of wall time (compare.js's rate).
    pub fn rate(&self) -> f64 {
        self.calls as f64 / (self.wall_ns as f64 / 1e9)
    }

    /// Calls per second of the process's CPU time.
    pub fn cpu_rate(&self) -> f64 {
        self.calls as f64 / (self.cpu_us.max(1) as f64 / 1e6)
    }
}

/// One binary, its addon built.
#[derive(Clone, Debug)]
pub struct Bench {
    /// The node binary.
    pub node: PathBuf,
    /// Its version (`v20.20.2`).
    pub node_version: String,
    /// The addon built against its headers.
    pub addon: PathBuf,
    /// The time limit of one run.
    pub timeout: Duration,
}

/// valgrind's options for an instruction count: cachegrind without its
/// cache simulation (it counts the instructions executed, `I refs`, and
/// nothing else), its summary on stderr and no `cachegrind.out.<pid>` file
/// left behind.
const CACHEGRIND: [&str; 3] = [
    "--tool=cachegrind",
    "--cache-sim=no",
    "--cachegrind-out-file=/dev/null",
];

/// node's options under valgrind: V8's `--predictable` (one thread, no
/// concurrent compilation or marking, fixed seeds), without which the
/// start-up's count moves by about 10 million instructions from run to run
/// (docs/performance.md); the calls themselves run the same code.
const PREDICTABLE: &str = "--predictable";

/// valgrind for `--measure instructions`: `$SCOPECHECK_VALGRIND`, else
/// `valgrind` on `PATH`.
pub fn valgrind() -> Result<PathBuf, ConformError> {
    tool(
        "SCOPECHECK_VALGRIND",
        "valgrind",
        "apt-get install valgrind (bench --measure instructions counts instructions under cachegrind)",
    )
}

/// The instructions of a cachegrind summary on stderr: the `I refs:` line
/// (`==PID== I   refs:      663,222,148`; valgrind 3.21 and later print
/// `I refs:` with one space).
pub fn parse_i_refs(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|line| {
        let (before, after) = line.split_once("refs:")?;
        let label = before.trim_end();
        if !(label.ends_with(" I") || label == "I") {
            return None;
        }
        let digits: String = after.trim().chars().filter(|c| *c != ',').collect();
        digits.parse().ok()
    })
}

/// The program of one run: arguments `ADDON N KIND VARIANT`; one JSON
/// line. The variant's set-up first, then one call outside the timing that
/// reads its own stack for a `callbackTrampoline` frame, then the timed
/// calls of Node's benchmark.
const PROGRAM: &str = r#"'use strict';
const [addonPath, n, kind, variant] = process.argv.slice(-4);
const addon = require(addonPath);
const asyncHooks = require('async_hooks');
const setUp = {
  'none': () => {},
  'hook-init': () => asyncHooks.createHook({ init() {} }).enable(),
  'hook-before-after': () => asyncHooks.createHook({ before() {}, after() {} }).enable(),
  'ear': () => asyncHooks.executionAsyncResource(),
  'als': () => new asyncHooks.AsyncLocalStorage().enterWith({}),
};
setUp[variant]();
const calls = Number(n);
let trampoline = false;
const probe = () => {
  trampoline = /callbackTrampoline/.test(new Error().stack);
};
addon.run(1, probe, () => {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  addon.run(calls, () => {}, () => {
    const wall = process.hrtime.bigint() - t0;
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(JSON.stringify({
      calls, wall_ns: String(wall), cpu_us: cpu.user + cpu.system, trampoline,
    }) + '\n');
  }, Number(kind));
}, Number(kind));
"#;

impl Bench {
    /// Find `node`'s headers (as `conform` does: `PREFIX/include/node`, or
    /// `headers`), build the bench addon against them in
    /// `dir/<version>/` (reused when the same source was built for the same
    /// binary), and load it once.
    pub fn prepare(
        node: &Path,
        headers: Option<&Path>,
        dir: &Path,
        timeout: Duration,
    ) -> Result<Bench, ConformError> {
        let selection = NodeSelection {
            node: Some(node.to_path_buf()),
            headers: headers.map(Path::to_path_buf),
        };
        let tools = Toolchain::find(&selection, timeout)?;
        let build_dir = dir.join(&tools.node_version);
        std::fs::create_dir_all(&build_dir)
            .map_err(|e| ConformError::Io(format!("create {}: {e}", build_dir.display())))?;
        let mut h = DefaultHasher::new();
        (ADDON_CC, &tools.headers, &tools.cxx, &tools.std).hash(&mut h);
        let addon = build_dir.join(format!("scopecheck-bench-{:016x}.node", h.finish()));
        if !addon.is_file() {
            build_addon(
                &tools.cxx,
                &tools.std,
                &tools.headers,
                &build_dir,
                ADDON_CC,
                &addon,
            )?;
        }
        // `require` takes a relative path for a module name.
        let addon = std::path::absolute(&addon)
            .map_err(|e| ConformError::Io(format!("{}: {e}", addon.display())))?;
        let bench = Bench {
            node: tools.node,
            node_version: tools.node_version,
            addon,
            timeout,
        };
        bench.run(Kind::Call, 1)?;
        Ok(bench)
    }

    /// One run of `n` calls of `kind` in a fresh node process (Node's
    /// benchmark: [`Variant::None`]).
    pub fn run(&self, kind: Kind, n: u64) -> Result<Sample, ConformError> {
        self.run_variant(kind, Variant::None, n)
    }

    /// [`Bench::run`] after the set-up of `variant`.
    pub fn run_variant(
        &self,
        kind: Kind,
        variant: Variant,
        n: u64,
    ) -> Result<Sample, ConformError> {
        let mut command = Command::new(&self.node);
        self.program(&mut command, kind, variant, n);
        self.child(&mut command, kind, n).map(|(_, sample)| sample)
    }

    /// The instructions a run of `n` calls of `kind` after the set-up of
    /// `variant` executes, from start to exit, under `valgrind`
    /// (cachegrind, node `--predictable`).
    pub fn instructions(
        &self,
        valgrind: &Path,
        kind: Kind,
        variant: Variant,
        n: u64,
    ) -> Result<u64, ConformError> {
        let mut command = Command::new(valgrind);
        command.args(CACHEGRIND).arg(&self.node).arg(PREDICTABLE);
        self.program(&mut command, kind, variant, n);
        let (out, _) = self.child(&mut command, kind, n)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        parse_i_refs(&stderr)
            .ok_or_else(|| self.failure(kind, n, "no `I refs:` line in valgrind's summary", &out))
    }

    /// Instructions per call of `kind`: runs of `n` and of `2n` calls
    /// counted ([`Bench::instructions`]), the difference over `n`, which
    /// cancels the start-up, the addon's loading and the JIT's warm-up of
    /// the first `n` calls.
    pub fn instructions_per_call(
        &self,
        valgrind: &Path,
        kind: Kind,
        variant: Variant,
        n: u64,
    ) -> Result<f64, ConformError> {
        let once = self.instructions(valgrind, kind, variant, n)?;
        let twice = self.instructions(valgrind, kind, variant, 2 * n)?;
        if twice <= once {
            return Err(ConformError::Node(format!(
                "bench {} on {}: {} instructions for {} calls, {once} for {n}: the calls cost nothing?",
                kind.name(),
                self.node.display(),
                twice,
                2 * n
            )));
        }
        Ok((twice - once) as f64 / n as f64)
    }

    /// `node -e PROGRAM -- ADDON N KIND VARIANT`'s arguments, after
    /// `command`'s.
    fn program(&self, command: &mut Command, kind: Kind, variant: Variant, n: u64) {
        command
            .args(["-e", PROGRAM, "--"])
            .arg(&self.addon)
            .arg(n.to_string())
            .arg(kind.code().to_string())
            .arg(variant.name());
    }

    /// A failed run, with what it printed.
    fn failure(&self, kind: Kind, n: u64, why: &str, out: &Output) -> ConformError {
        let tail = |bytes: &[u8], max: usize| {
            let text = String::from_utf8_lossy(bytes);
            let skip = text.chars().count().saturating_sub(max);
            text.chars().skip(skip).collect::<String>()
        };
        ConformError::Node(format!(
            "bench {} n={n} on {}: {why} (status {}; stdout {:?}; stderr {:?})",
            kind.name(),
            self.node.display(),
            out.status,
            tail(&out.stdout, 200),
            tail(&out.stderr, 400),
        ))
    }

    /// Run `command` (node, or valgrind running node) under the bounds and
    /// read the program's measurement line.
    fn child(
        &self,
        command: &mut Command,
        kind: Kind,
        n: u64,
    ) -> Result<(Output, Sample), ConformError> {
        let limits = Limits {
            max_stdout: 1 << 16,
            max_stderr: 1 << 20,
            ..Limits::new(self.timeout)
        };
        let out = process::run(command, None, &limits).map_err(|e| {
            ConformError::Node(format!(
                "bench {} n={n} on {}: {}",
                kind.name(),
                self.node.display(),
                e.failure
            ))
        })?;
        if !out.status.success() {
            return Err(self.failure(kind, n, "node failed", &out));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(stdout.trim())
            .map_err(|_| self.failure(kind, n, "no measurement", &out))?;
        let calls = v["calls"].as_u64();
        let wall_ns = v["wall_ns"].as_str().and_then(|s| s.parse::<u64>().ok());
        let cpu_us = v["cpu_us"].as_u64();
        let trampoline = v["trampoline"].as_bool();
        match (calls, wall_ns, cpu_us, trampoline) {
            (Some(calls), Some(wall_ns), Some(cpu_us), Some(trampoline))
                if calls == n && wall_ns > 0 =>
            {
                let sample = Sample {
                    calls,
                    wall_ns,
                    cpu_us,
                    trampoline,
                };
                Ok((out, sample))
            }
            _ => Err(self.failure(kind, n, "a measurement that does not add up", &out)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_i_refs;

    #[test]
    fn the_instruction_count_is_read_from_either_form_of_the_summary() {
        // valgrind 3.19 (Debian 12), then 3.22's single space.
        let old = "==27760== Cachegrind, a cache and branch-prediction profiler\n\
                   ==27760== \n==27760== I   refs:      663,222,148\n";
        assert_eq!(parse_i_refs(old), Some(663_222_148));
        assert_eq!(parse_i_refs("==1== I refs:        1,234\n"), Some(1234));
        // Not a count: another tool's line, or none.
        assert_eq!(parse_i_refs("==1== D   refs:  5\n"), None);
        assert_eq!(parse_i_refs("==1== I1  misses: 5\n"), None);
        assert_eq!(parse_i_refs(""), None);
    }
}
