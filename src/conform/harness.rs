//! The binary side: find `node` and `g++`, build the addon, run a program.
//!
//! Every child (the probes `node -e`, the compiler, each program) runs
//! through [`crate::process`]: its own process group, a time limit, output
//! read with a bound, the group killed at the end, SIGINT and SIGTERM
//! honoured. A binary that does not start the program on
//! [`BROKEN_AFTER`] cases in a row, the same way each time, stops the run
//! ([`Harness::stop_reason`]).

use super::ConformError;
use crate::process::{self, Failure, Limits};
use model::vocab::NodeVersion;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The addon's C++ source (`node/addon.cc`).
pub const ADDON_CC: &str = include_str!("node/addon.cc");

/// The Node-API module's source (`node/napi.cc`): N-API
/// callback scopes, for `close-outer`. Built beside the addon, at
/// [`napi_addon_path`] of it.
pub const NAPI_CC: &str = include_str!("node/napi.cc");

/// The Node-API module (`node/napi.cc`) built beside the addon at `addon`:
/// the same name with `-napi` before the extension.
pub fn napi_addon_path(addon: &Path) -> PathBuf {
    let stem = addon
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    addon.with_file_name(format!("{stem}-napi.node"))
}

/// What to install when a tool is missing.
const INSTALL_NODE: &str = "install Node.js with its C++ headers (the Debian `nodejs` package ships /usr/bin/node and /usr/include/node; scripts/install-node.sh installs the pinned Node 26), or point SCOPECHECK_NODE (or --node) at a node binary";
const INSTALL_GXX: &str =
    "install a C++ compiler: `apt-get install g++` (or point SCOPECHECK_CXX at one)";

/// How long one program, or one probe of the binary (`node -e`), may run
/// before it is killed with its process group, unless
/// `$SCOPECHECK_CONFORM_TIMEOUT` (seconds) or `conform --timeout` says
/// otherwise (the programs take well under a second; a loaded machine can
/// stall a start for many).
pub const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the compiler may take to build the addon.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(600);

/// Cases in a row on which node did not start the program, the same way
/// each time (timed out, or ended before the prologue with the same exit
/// and first line of stderr), after which the run stops.
pub const BROKEN_AFTER: u32 = 3;

/// The line a program prints once its prologue has run (`runtime.js`).
pub const START_LINE: &str = "# start";

/// Whether node's output shows the prologue finished.
fn started(stdout: &str) -> bool {
    stdout.lines().any(|line| line == START_LINE)
}

/// The most a program may print on stdout: 64 MiB, and 256 bytes per byte
/// of its source beyond that (a program's output grows with its trace, as
/// its source does); past it node is killed and the run reported.
pub fn stdout_bound(source_len: usize) -> u64 {
    (64u64 << 20).saturating_add((source_len as u64).saturating_mul(256))
}

/// Whether node keeps starting programs: the failures in a row and how
/// they looked, shared by the clones of a [`Harness`] (the worker threads).
#[derive(Debug, Default)]
pub struct Health {
    state: Mutex<HealthState>,
}

#[derive(Debug, Default)]
struct HealthState {
    /// Node has started a program at least once.
    started_once: bool,
    /// The failure of the last run, and how many runs in a row failed so.
    last: Option<(String, u32)>,
    /// Set once [`BROKEN_AFTER`] runs in a row failed the same way.
    broken: Option<String>,
}

impl Health {
    fn lock(&self) -> std::sync::MutexGuard<'_, HealthState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stop the run now, for `why` (a destination that cannot be written:
    /// every later case would fail the same way).
    fn stop_now(&self, why: String) {
        let mut state = self.lock();
        if state.broken.is_none() {
            state.broken = Some(why);
        }
    }

    /// Record a run: started, or failed with `failure` (how it looked).
    fn record(&self, node: &Path, failure: Option<String>) {
        let mut state = self.lock();
        let Some(failure) = failure else {
            state.started_once = true;
            state.last = None;
            return;
        };
        let count = match &state.last {
            Some((last, n)) if *last == failure => n + 1,
            _ => 1,
        };
        if count >= BROKEN_AFTER && state.broken.is_none() {
            state.broken = Some(format!(
                "{} did not start the program on {count} cases in a row, each time the same way: {failure}; the run stops here (a binary that hangs or fails on every program)",
                node.display()
            ));
        }
        state.last = Some((failure, count));
    }

    /// Why the binary is taken for broken, if it is.
    pub fn broken(&self) -> Option<String> {
        self.lock().broken.clone()
    }

    fn started_once(&self) -> bool {
        self.lock().started_once
    }
}

/// Which node binary a [`Harness`] runs, and which C++ headers its addon is
/// built against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSelection {
    /// The binary; `None`: `$SCOPECHECK_NODE`, else `node` on `PATH`.
    pub node: Option<PathBuf>,
    /// The `include/node` directory of the same version; `None`:
    /// `PREFIX/include/node`, where `PREFIX` is the binary's `../..` (after
    /// symlinks): `/usr/include/node` for `/usr/bin/node`.
    pub headers: Option<PathBuf>,
}

/// What the node binary's public C++ API offers, as the addon found it when
/// it was compiled (the translation expresses only what the binary can run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// `node::CallbackScope(Environment*, v8::Global<v8::Object>*,
    /// async_context)` exists (Node 26's `include/node/node.h`; not v20's):
    /// traces with `global` resources and `reset-global` can run.
    pub global_callback_scope: bool,
    /// `AsyncLocalStorage` runs on `AsyncContextFrame` (the default since
    /// Node 24): traces with the ALS ops can run.
    pub async_context_frame: bool,
    /// The model's node version for this binary (from its major version).
    pub node_version: NodeVersion,
}

impl Default for Capabilities {
    /// v20's: no Global scopes, no frames, node version 20.
    fn default() -> Self {
        Capabilities {
            global_callback_scope: false,
            async_context_frame: false,
            node_version: NodeVersion::V20,
        }
    }
}

impl Capabilities {
    /// Everything Node 26 offers, and its node version.
    pub fn node26() -> Self {
        Capabilities {
            global_callback_scope: true,
            async_context_frame: true,
            node_version: NodeVersion::V26,
        }
    }
}

/// A node binary, its headers and the built addon.
#[derive(Clone, Debug)]
pub struct Harness {
    /// The node binary.
    pub node: PathBuf,
    /// `node --version`.
    pub node_version: String,
    /// The `include/node` directory the addon was built against.
    pub headers: PathBuf,
    /// What the binary's public API offers (see [`Capabilities`]); the
    /// translation and the generator use only these (a caller may turn one
    /// off, to run the traces of a binary without it).
    pub capabilities: Capabilities,
    /// The built `addon.node`.
    pub addon: PathBuf,
    /// Where programs are written while they run.
    pub work_dir: PathBuf,
    /// How long one program or probe may run.
    pub timeout: Duration,
    /// Whether the binary keeps starting programs (shared by clones).
    pub health: Arc<Health>,
}

/// How a node run ended, and what it printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRun {
    /// Everything written to fd 1.
    pub stdout: String,
    /// Everything written to fd 2.
    pub stderr: String,
    /// The exit code, if it exited.
    pub code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    /// It ran past [`RUN_TIMEOUT`] and was killed.
    pub timed_out: bool,
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

pub(crate) fn tool(env: &str, name: &str, hint: &str) -> Result<PathBuf, ConformError> {
    if let Some(p) = std::env::var_os(env) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(ConformError::MissingTool {
            tool: name.to_string(),
            hint: format!("{env}={} is not a file; {hint}", p.display()),
        });
    }
    find_in_path(name).ok_or_else(|| ConformError::MissingTool {
        tool: name.to_string(),
        hint: hint.to_string(),
    })
}

/// Remove what a run which no longer exists left in `dir`, named
/// `<prefix><PID>-...`: the programs of `runs/` (`p<PID>-<N>.js`), the
/// sources, outputs and compiler scratch directories of an addon build
/// (`addon-<PID>-<N>.*`). Such a run was ended at once by a second SIGINT
/// or SIGTERM (`crate::interrupt`), or killed. A live run's are left alone.
fn remove_orphans(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() as i32 && !process_exists(pid) {
            let path = entry.path();
            if path.is_dir() {
                let _ = std::fs::remove_dir_all(&path);
            } else {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// Whether a process `pid` exists (`kill(pid, 0)` does not fail with
/// `ESRCH`).
#[cfg(unix)]
fn process_exists(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks the pid.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Whether a process `pid` exists: assumed, where it cannot be asked.
#[cfg(not(unix))]
fn process_exists(_pid: i32) -> bool {
    true
}

fn io_err(what: &str, e: std::io::Error) -> ConformError {
    ConformError::Io(format!("{what}: {e}"))
}

/// The `include/node` directory of Node's C++ headers for this binary:
/// `headers` if given, else `PREFIX/include/node` with `PREFIX` the
/// binary's `../..` after symlinks (`/usr/include/node` for
/// `/usr/bin/node`). No other place is tried: headers of another version
/// would build an addon the binary cannot load, or worse, load wrongly.
fn header_dir(node: &Path, headers: Option<&Path>) -> Result<PathBuf, ConformError> {
    if let Some(dir) = headers {
        if dir.join("node.h").is_file() && dir.join("node_version.h").is_file() {
            return Ok(dir.to_path_buf());
        }
        return Err(ConformError::Headers(format!(
            "--headers {}: expected a directory holding node.h and node_version.h (Node's include/node)",
            dir.display()
        )));
    }
    let real = std::fs::canonicalize(node).map_err(|e| ConformError::MissingTool {
        tool: "node".to_string(),
        hint: format!("{}: {e}; {INSTALL_NODE}", node.display()),
    })?;
    let Some(prefix) = real.parent().and_then(Path::parent) else {
        return Err(ConformError::Headers(format!(
            "{} has no install prefix (PREFIX/bin/node) to find include/node under; pass --headers DIR",
            real.display()
        )));
    };
    let dir = prefix.join("include/node");
    if dir.join("node.h").is_file() && dir.join("node_version.h").is_file() {
        Ok(dir)
    } else {
        Err(ConformError::Headers(format!(
            "no C++ headers for {}: expected {}/node.h (the binary's PREFIX/include/node); pass --headers DIR (include/node of the same version), or {INSTALL_NODE}",
            real.display(),
            dir.display()
        )))
    }
}

/// The number of `#define NAME <number>` in a header (a definition by
/// another macro, as `NODE_EMBEDDER_MODULE_VERSION`, is skipped).
fn header_define(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("#define")?.trim_start();
        let value = rest.strip_prefix(name)?;
        if !value.starts_with(char::is_whitespace) {
            return None;
        }
        let value = value.trim();
        (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())).then(|| value.to_string())
    })
}

/// The C++ standard Node builds addons with: the `-std=gnu++NN` of the
/// headers' `common.gypi` (node-gyp's settings; gnu++17 for v20, gnu++20 for
/// v26, whose V8 headers refuse anything older), else gnu++17.
pub(crate) fn cxx_standard(headers: &Path) -> String {
    let gypi = std::fs::read_to_string(headers.join("common.gypi")).unwrap_or_default();
    gypi.split("'-std=")
        .skip(1)
        .filter_map(|rest| rest.split('\'').next())
        .find(|std| std.starts_with("gnu++") || std.starts_with("c++"))
        .map(|std| format!("-std={std}"))
        .unwrap_or_else(|| "-std=gnu++17".to_string())
}

/// What the binary says about itself: `(process.version,
/// process.versions.modules)`.
/// A probe of the binary (`node -e SCRIPT`) within `timeout`: its output,
/// or why the binary is unusable.
fn probe(node: &Path, script: &str, timeout: Duration) -> Result<process::Output, ConformError> {
    let mut command = Command::new(node);
    command.args(["-e", script]);
    process::run(&mut command, None, &Limits::new(timeout)).map_err(|e| match e.failure {
        Failure::Interrupted(signal) => ConformError::Stopped(format!(
            "interrupted (signal {signal}) while probing {}",
            node.display()
        )),
        Failure::Spawn(ref why) => ConformError::MissingTool {
            tool: "node".to_string(),
            hint: format!("{} does not run ({why}); {INSTALL_NODE}", node.display()),
        },
        other => ConformError::MissingTool {
            tool: "node".to_string(),
            hint: format!(
                "{} is not a working node: `node -e` (a probe of a few milliseconds): {other}; {INSTALL_NODE}",
                node.display()
            ),
        },
    })
}

fn node_identity(node: &Path, timeout: Duration) -> Result<(String, String), ConformError> {
    let out = probe(
        node,
        "process.stdout.write(process.version + ' ' + process.versions.modules)",
        timeout,
    )?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match text.split_once(' ') {
        Some((version, modules)) if out.status.success() && version.starts_with('v') => {
            Ok((version.to_string(), modules.to_string()))
        }
        _ => Err(ConformError::MissingTool {
            tool: "node".to_string(),
            hint: format!(
                "{} did not say its version (exit {}, stdout {}, stderr {}); {INSTALL_NODE}",
                node.display(),
                out.status,
                bounded(&text),
                bounded(String::from_utf8_lossy(&out.stderr).trim())
            ),
        }),
    }
}

/// The headers must be the binary's own: the same `NODE_MODULE_VERSION`
/// (the addon ABI) and the same version number.
fn check_headers(
    headers: &Path,
    node: &Path,
    version: &str,
    modules: &str,
) -> Result<(), ConformError> {
    let file = headers.join("node_version.h");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| io_err(&format!("read {}", file.display()), e))?;
    let part = |name: &str| header_define(&text, name).unwrap_or_else(|| "?".to_string());
    let header_version = format!(
        "v{}.{}.{}",
        part("NODE_MAJOR_VERSION"),
        part("NODE_MINOR_VERSION"),
        part("NODE_PATCH_VERSION")
    );
    let header_modules = part("NODE_MODULE_VERSION");
    if header_modules != modules || header_version != version {
        return Err(ConformError::Headers(format!(
            "{} are the headers of node {header_version} (NODE_MODULE_VERSION {header_modules}), but {} is {version} (modules {modules}): pass --headers with the include/node of the same version",
            headers.display(),
            node.display()
        )));
    }
    Ok(())
}

/// The C++ compiler: `$SCOPECHECK_CXX`, else `g++` on `PATH`.
pub(crate) fn compiler() -> Result<PathBuf, ConformError> {
    tool("SCOPECHECK_CXX", "g++", INSTALL_GXX)
}

/// What building an addon for one binary needs, found and checked: the
/// binary, its version, its headers (same version and
/// `NODE_MODULE_VERSION`), the C++ compiler and the standard the headers ask
/// for. The conformance harness and `scopecheck bench` both start here.
#[derive(Clone, Debug)]
pub(crate) struct Toolchain {
    /// The node binary.
    pub node: PathBuf,
    /// Its version (`v20.20.2`).
    pub node_version: String,
    /// Its C++ headers.
    pub headers: PathBuf,
    /// The C++ compiler.
    pub cxx: PathBuf,
    /// `-std=...` for the headers.
    pub std: String,
}

impl Toolchain {
    /// The binary of `selection` (else `$SCOPECHECK_NODE`, else `node` on
    /// `PATH`), asked for its version within `timeout`, and its headers and
    /// the compiler.
    pub(crate) fn find(selection: &NodeSelection, timeout: Duration) -> Result<Self, ConformError> {
        let node = match &selection.node {
            Some(p) if p.is_file() => p.clone(),
            Some(p) => {
                return Err(ConformError::MissingTool {
                    tool: "node".to_string(),
                    hint: format!("{} is not a file; {INSTALL_NODE}", p.display()),
                })
            }
            None => tool("SCOPECHECK_NODE", "node", INSTALL_NODE)?,
        };
        let cxx = compiler()?;
        let (node_version, modules) = node_identity(&node, timeout)?;
        let headers = header_dir(&node, selection.headers.as_deref())?;
        check_headers(&headers, &node, &node_version, &modules)?;
        let std = cxx_standard(&headers);
        Ok(Toolchain {
            node,
            node_version,
            headers,
            cxx,
            std,
        })
    }
}

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Harness {
    /// Find the tools (the node binary of `$SCOPECHECK_NODE`, else `node` on
    /// `PATH`) and build the addon into `dir` (reused when a build of the
    /// same source for the same node is already there).
    pub fn new(dir: &Path) -> Result<Harness, ConformError> {
        Harness::with_node(&NodeSelection::default(), dir)
    }

    /// [`Harness::new`] for a chosen binary and headers. The addon is built
    /// against the binary's own headers (checked: same version and
    /// `NODE_MODULE_VERSION`) with the C++ standard they ask for, cached in
    /// `dir/<node version>/` under a name that hashes the addon source, the
    /// headers' path and the compiler; then loaded once to learn the
    /// binary's [`Capabilities`].
    pub fn with_node(selection: &NodeSelection, dir: &Path) -> Result<Harness, ConformError> {
        let timeout = process::timeout_from_env("SCOPECHECK_CONFORM_TIMEOUT", RUN_TIMEOUT);
        Harness::with_node_within(selection, dir, timeout)
    }

    /// [`Harness::with_node`] with `timeout` for each probe and program.
    pub fn with_node_within(
        selection: &NodeSelection,
        dir: &Path,
        timeout: Duration,
    ) -> Result<Harness, ConformError> {
        let Toolchain {
            node,
            node_version,
            headers,
            cxx,
            std,
        } = Toolchain::find(selection, timeout)?;
        let build_dir = dir.join(&node_version);
        std::fs::create_dir_all(&build_dir)
            .map_err(|e| io_err(&format!("create {}", build_dir.display()), e))?;
        remove_orphans(&build_dir, "addon-");
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ADDON_CC.hash(&mut h);
        NAPI_CC.hash(&mut h);
        node_version.hash(&mut h);
        headers.hash(&mut h);
        cxx.hash(&mut h);
        std.hash(&mut h);
        let addon = build_dir.join(format!("scopecheck-conform-{:016x}.node", h.finish()));
        if !addon.is_file() {
            build_addon(&cxx, &std, &headers, &build_dir, ADDON_CC, &addon)?;
        }
        let napi = napi_addon_path(&addon);
        if !napi.is_file() {
            build_addon(&cxx, &std, &headers, &build_dir, NAPI_CC, &napi)?;
        }
        let capabilities = probe_addon(&node, &addon, timeout)?;
        let work_dir = dir.join("runs");
        std::fs::create_dir_all(&work_dir)
            .map_err(|e| io_err(&format!("create {}", work_dir.display()), e))?;
        remove_orphans(&work_dir, "p");
        Ok(Harness {
            node,
            node_version,
            headers,
            capabilities,
            addon,
            work_dir,
            timeout,
            health: Arc::new(Health::default()),
        })
    }

    /// Why no more programs should run: SIGINT or SIGTERM came
    /// ([`crate::interrupt`]), or the binary is broken ([`Health`]).
    pub fn stop_reason(&self) -> Option<String> {
        if let Some(signal) = crate::interrupt::requested() {
            return Some(format!("interrupted (signal {signal})"));
        }
        self.health.broken()
    }

    /// One line naming the binary, its version, the headers and what the
    /// addon can do with them.
    pub fn describe(&self) -> String {
        let node = std::fs::canonicalize(&self.node).unwrap_or_else(|_| self.node.clone());
        format!(
            "node {} ({}; addon built against {}; traces with Global<Object>* resources: {}; AsyncLocalStorage ops (AsyncContextFrame): {}; model node version {})",
            self.node_version,
            node.display(),
            self.headers.display(),
            if self.capabilities.global_callback_scope {
                "yes"
            } else {
                "no"
            },
            if self.capabilities.async_context_frame {
                "yes"
            } else {
                "no"
            },
            self.capabilities.node_version
        )
    }

    /// The harness `conform_trace` uses: built once per process, in
    /// `$SCOPECHECK_CONFORM_DIR` or else `<temp dir>/scopecheck-conform`.
    pub fn shared() -> Result<&'static Harness, ConformError> {
        static SHARED: std::sync::OnceLock<Result<Harness, ConformError>> =
            std::sync::OnceLock::new();
        SHARED
            .get_or_init(|| Harness::new(&super::default_build_dir()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Run `source` with node (`--no-deprecation --expose-internals` and
    /// `args`). The program is written to `keep` when given (and left
    /// there), else to a file in the work dir that is removed afterwards.
    pub fn run(
        &self,
        source: &str,
        args: &[String],
        keep: Option<&Path>,
    ) -> Result<NodeRun, ConformError> {
        self.run_as(source, args, false, keep)
    }

    /// [`Harness::run`], with the program written as an ES module
    /// (`program.mjs`) when `module` (an `entry-module` trace).
    pub fn run_as(
        &self,
        source: &str,
        args: &[String],
        module: bool,
        keep: Option<&Path>,
    ) -> Result<NodeRun, ConformError> {
        if let Some(why) = self.stop_reason() {
            return Err(ConformError::Stopped(why));
        }
        let ext = if module { "mjs" } else { "js" };
        let path = match keep {
            Some(dir) => {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    return Err(self.keep_failed(&format!("create {}", dir.display()), e));
                }
                let path = dir.join(format!("program.{ext}"));
                self.keep_write(&path, source)?;
                path
            }
            None => {
                let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
                let path = self
                    .work_dir
                    .join(format!("p{}-{n}.{ext}", std::process::id()));
                std::fs::write(&path, source)
                    .map_err(|e| io_err(&format!("write {}", path.display()), e))?;
                path
            }
        };
        let bound = stdout_bound(source.len());
        let mut result = self.run_file(&path, args, bound);
        // A start that timed out before the prologue finished says nothing
        // about the trace (a stalled machine) once the binary has been
        // seen to start programs: try once more.
        if matches!(&result, Ok(r) if r.timed_out && !started(&r.stdout))
            && self.health.started_once()
        {
            result = self.run_file(&path, args, bound);
        }
        if keep.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        if !matches!(&result, Err(ConformError::Stopped(_))) {
            self.health
                .record(&self.node, not_started(&result, self.timeout));
        }
        result
    }

    /// Write a file of `--keep` (a program, its output, the verdict). If it
    /// cannot be written (a full disk, a read-only file system that
    /// `check_dir` did not see), what was written of it is removed and the
    /// run stops: every later case would fail the same way.
    pub fn keep_write(&self, path: &Path, text: &str) -> Result<(), ConformError> {
        std::fs::write(path, text).map_err(|e| {
            let _ = std::fs::remove_file(path);
            self.keep_failed(&format!("write {}", path.display()), e)
        })
    }

    /// A `--keep` destination failed: the run stops, for that reason.
    fn keep_failed(&self, what: &str, e: std::io::Error) -> ConformError {
        let why = format!("--keep: cannot {what}: {e}; the run stops here");
        self.health.stop_now(why.clone());
        ConformError::Io(why)
    }

    fn run_file(&self, path: &Path, args: &[String], bound: u64) -> Result<NodeRun, ConformError> {
        let mut command = Command::new(&self.node);
        // A deep trace nests as deep calls in node: a large stack.
        super::stack::NodeStack::get().apply(&mut command);
        // An abort (a CHECK, --abort-on-uncaught-exception) writes no core
        // file: its size has no bound, and it would land in the cwd.
        #[cfg(unix)]
        // SAFETY: the closure runs in the child between fork and exec and
        // calls only `setrlimit`, which is async-signal-safe.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, no_core_file);
        }
        command
            .arg("--no-deprecation")
            .arg("--expose-internals")
            .args(args)
            .arg(path);
        let limits = Limits {
            max_stdout: bound,
            ..Limits::new(self.timeout)
        };
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match process::run(&mut command, None, &limits) {
            Ok(out) => {
                #[cfg(unix)]
                let signal = std::os::unix::process::ExitStatusExt::signal(&out.status);
                #[cfg(not(unix))]
                let signal = None;
                Ok(NodeRun {
                    stdout: text(&out.stdout),
                    stderr: text(&out.stderr),
                    code: out.status.code(),
                    signal,
                    timed_out: false,
                })
            }
            Err(e) => match e.failure {
                // A program that runs too long is an observation (its death).
                Failure::TimedOut(_) => Ok(NodeRun {
                    stdout: text(&e.stdout),
                    stderr: text(&e.stderr),
                    code: None,
                    signal: Some(9),
                    timed_out: true,
                }),
                Failure::Interrupted(signal) => Err(ConformError::Stopped(format!(
                    "interrupted (signal {signal})"
                ))),
                Failure::Spawn(why) => Err(io_err(&format!("spawn {}", self.node.display()), why)),
                // Said without the program's path, so that the same failure
                // on every case reads the same ([`Health`]).
                other => Err(ConformError::Node(format!(
                    "{} running a program: {other}",
                    self.node.display()
                ))),
            },
        }
    }
}

/// How a run looked if node did not start the program (for [`Health`]):
/// `None` when it did, or when the run says nothing about the binary.
fn not_started(result: &Result<NodeRun, ConformError>, timeout: Duration) -> Option<String> {
    match result {
        Ok(r) if started(&r.stdout) => None,
        Ok(r) if r.timed_out => Some(format!(
            "it ran past the time limit of {} s before the program's prologue finished (killed with its process group)",
            timeout.as_secs_f64()
        )),
        Ok(r) => Some(format!(
            "it ended (exit {:?}, signal {:?}) before the program's prologue finished; stderr: {}",
            r.code,
            r.signal,
            bounded(r.stderr.lines().next().unwrap_or("").trim())
        )),
        Err(ConformError::Node(why)) => Some(why.clone()),
        Err(_) => None,
    }
}

/// `text` quoted, cut after 200 characters (with how many more there were):
/// what a message shows of a binary's output.
fn bounded(text: &str) -> String {
    model::vocab::trace::quote_at_most(text, 200)
}

/// Load the addon once and read what it was compiled with.
fn probe_addon(node: &Path, addon: &Path, timeout: Duration) -> Result<Capabilities, ConformError> {
    let script = format!(
        "const a = require({}); const major = +process.versions.node.split('.')[0]; process.stdout.write(JSON.stringify({{ global: a.hasGlobalCallbackScope === true, major, frame: major >= 24 && !process.execArgv.includes('--no-async-context-frame') }}))",
        serde_json::to_string(&addon.to_string_lossy()).unwrap_or_default()
    );
    let out = probe(node, &script, timeout)?;
    let text = String::from_utf8_lossy(&out.stdout);
    match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(v) if out.status.success() => Ok(Capabilities {
            global_callback_scope: v.get("global").and_then(serde_json::Value::as_bool)
                == Some(true),
            async_context_frame: v.get("frame").and_then(serde_json::Value::as_bool) == Some(true),
            node_version: NodeVersion::of_major(
                v.get("major")
                    .and_then(serde_json::Value::as_u64)
                    .map_or(0, |m| m as u32),
            ),
        }),
        _ => Err(ConformError::Build(format!(
            "{} cannot load the addon {} (exit {}): {}",
            node.display(),
            addon.display(),
            out.status,
            bounded(String::from_utf8_lossy(&out.stderr).trim())
        ))),
    }
}

/// Compile `code` into the addon `target` with `cxx` against `headers`
/// (the C++ standard `std`), through a temporary file in `dir`.
pub(crate) fn build_addon(
    cxx: &Path,
    std: &str,
    headers: &Path,
    dir: &Path,
    code: &str,
    target: &Path,
) -> Result<(), ConformError> {
    build_module(cxx, &[std], "cc", headers, dir, code, target)
}

/// Compile the C source `code` (a Node-API module) into `target` with the
/// compiler driver `cxx` in C mode (`-x c -std=c11`), as [`build_addon`].
pub(crate) fn build_c_addon(
    cxx: &Path,
    headers: &Path,
    dir: &Path,
    code: &str,
    target: &Path,
) -> Result<(), ConformError> {
    build_module(
        cxx,
        &["-x", "c", "-std=c11"],
        "c",
        headers,
        dir,
        code,
        target,
    )
}

fn build_module(
    cxx: &Path,
    language: &[&str],
    extension: &str,
    headers: &Path,
    dir: &Path,
    code: &str,
    target: &Path,
) -> Result<(), ConformError> {
    let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let source = dir.join(format!("addon-{}-{n}.{extension}", std::process::id()));
    let tmp = dir.join(format!("addon-{}-{n}.node.tmp", std::process::id()));
    std::fs::write(&source, code).map_err(|e| io_err(&format!("write {}", source.display()), e))?;
    let mut command = Command::new(cxx);
    command
        .args(["-shared", "-fPIC"])
        .args(language)
        .args(["-O1", "-w"])
        .arg(format!("-I{}", headers.display()))
        .arg("-DNODE_GYP_MODULE_NAME=scopecheck_conform")
        .arg(&source)
        .arg("-o")
        .arg(&tmp);
    // The compiler's own temporary files (`cc*.s`, `cc*.o`) go to a
    // directory of this build, removed on every path: a compiler killed
    // with its group (an interrupt, the time limit) cannot remove them.
    let scratch = dir.join(format!("addon-{}-{n}.tmpdir", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| io_err(&format!("create {}", scratch.display()), e))?;
    command.env("TMPDIR", &scratch);
    let output = process::run(&mut command, None, &Limits::new(COMPILE_TIMEOUT));
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_file(&source);
    let output = output.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        match e.failure {
            Failure::Spawn(why) => ConformError::MissingTool {
                tool: "g++".to_string(),
                hint: format!("{} does not run ({why}); {INSTALL_GXX}", cxx.display()),
            },
            Failure::Interrupted(signal) => ConformError::Stopped(format!(
                "interrupted (signal {signal}) while building the addon"
            )),
            other => ConformError::Build(format!("{}: {other}", cxx.display())),
        }
    })?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        return Err(ConformError::Build(format!(
            "{} failed ({}):\n{}",
            cxx.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    // Another process may have built the same file meanwhile: a rename over
    // it is atomic, either copy is the same.
    std::fs::rename(&tmp, target).map_err(|e| io_err(&format!("rename to {}", target.display()), e))
}

/// Set `RLIMIT_CORE` to 0 in the child (node) before it runs.
#[cfg(unix)]
fn no_core_file() -> std::io::Result<()> {
    let none = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &none) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_defines_are_numbers_only() {
        let text = "#if defined(NODE_EMBEDDER_MODULE_VERSION)\n\
                    #define NODE_MODULE_VERSION NODE_EMBEDDER_MODULE_VERSION\n\
                    #else\n#define NODE_MODULE_VERSION 147\n#endif\n\
                    #define NODE_MAJOR_VERSION 26\n#define NODE_MAJOR_VERSIONS 9\n";
        assert_eq!(
            header_define(text, "NODE_MODULE_VERSION").as_deref(),
            Some("147")
        );
        assert_eq!(
            header_define(text, "NODE_MAJOR_VERSION").as_deref(),
            Some("26")
        );
        assert_eq!(header_define(text, "NODE_MINOR_VERSION"), None);
    }

    #[test]
    fn the_cxx_standard_comes_from_common_gypi() {
        let dir = std::env::temp_dir().join(format!("scopecheck-gypi-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        // As Node 26's: an MSVC flag first, then the gcc one.
        let gypi = "'AdditionalOptions': [ '-std:c++20' ],\n'cflags_cc': [ '-fno-rtti', '-std=gnu++20' ],\n'-qxclang=-std=c++14',";
        let _ = std::fs::write(dir.join("common.gypi"), gypi);
        assert_eq!(cxx_standard(&dir), "-std=gnu++20");
        let _ = std::fs::remove_file(dir.join("common.gypi"));
        assert_eq!(cxx_standard(&dir), "-std=gnu++17", "no common.gypi: v20's");
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn headers_must_be_the_binarys_own() {
        let dir = std::env::temp_dir().join(format!("scopecheck-hdr-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(
            dir.join("node_version.h"),
            "#define NODE_MAJOR_VERSION 20\n#define NODE_MINOR_VERSION 20\n#define NODE_PATCH_VERSION 2\n#define NODE_MODULE_VERSION 115\n",
        );
        let node = Path::new("/x/bin/node");
        assert!(check_headers(&dir, node, "v20.20.2", "115").is_ok());
        match check_headers(&dir, node, "v26.12.1", "147") {
            Err(ConformError::Headers(e)) => assert!(e.contains("v20.20.2"), "{e}"),
            other => panic!("expected a header mismatch, got {other:?}"),
        }
        // --headers must name a directory with node.h.
        assert!(matches!(
            header_dir(node, Some(&dir)),
            Err(ConformError::Headers(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
