//! The runs of `scopecheck bench`: the addon of `node/addon.cc` built
//! against one binary's own headers (as the conformance addon is: the
//! module versions of two binaries differ), and one run of `n` calls of one
//! [`Kind`] in a fresh node process, timed inside it from before
//! `run(n, ...)` to its `finished` callback, as Node's
//! `benchmark/common.js` times `bench.start()` to `bench.end(n)`. Every
//! child runs under [`crate::process`]'s bounds.

use crate::conform::harness::{build_addon, compiler, cxx_standard};
use crate::conform::{ConformError, Harness, NodeSelection};
use crate::process::{self, Limits};
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
}

impl Sample {
    /// Calls per second of wall time (compare.js's rate).
    pub fn rate(&self) -> f64 {
        self.calls as f64 / (self.wall_ns as f64 / 1e9)
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

/// The program of one run: arguments `ADDON N KIND`; one JSON line.
const PROGRAM: &str = r#"'use strict';
const [addonPath, n, kind] = process.argv.slice(-3);
const addon = require(addonPath);
const calls = Number(n);
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
addon.run(calls, () => {}, () => {
  const wall = process.hrtime.bigint() - t0;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({
    calls, wall_ns: String(wall), cpu_us: cpu.user + cpu.system,
  }) + '\n');
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
        let harness = Harness::with_node_within(&selection, dir, timeout)?;
        let build_dir = dir.join(&harness.node_version);
        let cxx = compiler()?;
        let std = cxx_standard(&harness.headers);
        let mut h = DefaultHasher::new();
        (ADDON_CC, &harness.headers, &cxx, &std).hash(&mut h);
        let addon = build_dir.join(format!("scopecheck-bench-{:016x}.node", h.finish()));
        if !addon.is_file() {
            build_addon(&cxx, &std, &harness.headers, &build_dir, ADDON_CC, &addon)?;
        }
        // `require` takes a relative path for a module name.
        let addon = std::path::absolute(&addon)
            .map_err(|e| ConformError::Io(format!("{}: {e}", addon.display())))?;
        let bench = Bench {
            node: harness.node.clone(),
            node_version: harness.node_version.clone(),
            addon,
            timeout,
        };
        bench.run(Kind::Call, 1)?;
        Ok(bench)
    }

    /// One run of `n` calls of `kind` in a fresh node process.
    pub fn run(&self, kind: Kind, n: u64) -> Result<Sample, ConformError> {
        let mut command = Command::new(&self.node);
        command
            .args(["-e", PROGRAM, "--"])
            .arg(&self.addon)
            .arg(n.to_string())
            .arg(kind.code().to_string());
        let limits = Limits {
            max_stdout: 1 << 16,
            max_stderr: 1 << 20,
            ..Limits::new(self.timeout)
        };
        let out = process::run(&mut command, None, &limits).map_err(|e| {
            ConformError::Node(format!(
                "bench {} n={n} on {}: {}",
                kind.name(),
                self.node.display(),
                e.failure
            ))
        })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let fail = |why: &str| {
            ConformError::Node(format!(
                "bench {} n={n} on {}: {why} (status {}; stdout {:?}; stderr {:?})",
                kind.name(),
                self.node.display(),
                out.status,
                stdout.chars().take(200).collect::<String>(),
                String::from_utf8_lossy(&out.stderr)
                    .chars()
                    .take(400)
                    .collect::<String>()
            ))
        };
        if !out.status.success() {
            return Err(fail("node failed"));
        }
        let v: serde_json::Value =
            serde_json::from_str(stdout.trim()).map_err(|_| fail("no measurement"))?;
        let calls = v["calls"].as_u64();
        let wall_ns = v["wall_ns"].as_str().and_then(|s| s.parse::<u64>().ok());
        let cpu_us = v["cpu_us"].as_u64();
        match (calls, wall_ns, cpu_us) {
            (Some(calls), Some(wall_ns), Some(cpu_us)) if calls == n && wall_ns > 0 => Ok(Sample {
                calls,
                wall_ns,
                cpu_us,
            }),
            _ => Err(fail("a measurement that does not add up")),
        }
    }
}
