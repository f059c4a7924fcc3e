//! The binary side: find `node` and `g++`, build the addon, run a program.

use super::ConformError;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The addon's C++ source (`tests/conformance/addon.cc`).
pub const ADDON_CC: &str = include_str!("../../tests/conformance/addon.cc");

/// What to install when a tool is missing.
const INSTALL_NODE: &str = "install Node.js v20 with its C++ headers (the Debian `nodejs` package from NodeSource ships /usr/bin/node and /usr/include/node), or point SCOPECHECK_NODE at a node binary";
const INSTALL_GXX: &str =
    "install a C++ compiler: `apt-get install g++` (or point SCOPECHECK_CXX at one)";

/// How long one program may run before it is killed (the programs take well
/// under a second; a loaded machine can stall a start for many).
pub const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// A node binary, its headers and the built addon.
#[derive(Clone, Debug)]
pub struct Harness {
    /// The node binary.
    pub node: PathBuf,
    /// `node --version`.
    pub node_version: String,
    /// The built `addon.node`.
    pub addon: PathBuf,
    /// Where programs are written while they run.
    pub work_dir: PathBuf,
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

fn tool(env: &str, name: &str, hint: &str) -> Result<PathBuf, ConformError> {
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

fn io_err(what: &str, e: std::io::Error) -> ConformError {
    ConformError::Io(format!("{what}: {e}"))
}

/// The directory of Node's C++ headers for this binary: `<prefix>/include/node`.
fn header_dir(node: &Path) -> Result<PathBuf, ConformError> {
    let mut candidates = Vec::new();
    if let Ok(real) = std::fs::canonicalize(node) {
        if let Some(prefix) = real.parent().and_then(Path::parent) {
            candidates.push(prefix.join("include/node"));
        }
    }
    candidates.push(PathBuf::from("/usr/include/node"));
    candidates.push(PathBuf::from("/usr/local/include/node"));
    candidates
        .into_iter()
        .find(|d| d.join("node.h").is_file())
        .ok_or_else(|| ConformError::MissingTool {
            tool: "node.h".to_string(),
            hint: INSTALL_NODE.to_string(),
        })
}

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Harness {
    /// Find the tools and build the addon into `dir` (reused when a build of
    /// the same source for the same node is already there).
    pub fn new(dir: &Path) -> Result<Harness, ConformError> {
        let node = tool("SCOPECHECK_NODE", "node", INSTALL_NODE)?;
        let cxx = tool("SCOPECHECK_CXX", "g++", INSTALL_GXX)?;
        let version = Command::new(&node).arg("--version").output().map_err(|e| {
            ConformError::MissingTool {
                tool: "node".to_string(),
                hint: format!("{} does not run ({e}); {INSTALL_NODE}", node.display()),
            }
        })?;
        let node_version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        let headers = header_dir(&node)?;
        std::fs::create_dir_all(dir)
            .map_err(|e| io_err(&format!("create {}", dir.display()), e))?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ADDON_CC.hash(&mut h);
        node_version.hash(&mut h);
        headers.hash(&mut h);
        cxx.hash(&mut h);
        let addon = dir.join(format!("scopecheck-conform-{:016x}.node", h.finish()));
        if !addon.is_file() {
            build_addon(&cxx, &headers, dir, &addon)?;
        }
        let work_dir = dir.join("runs");
        std::fs::create_dir_all(&work_dir)
            .map_err(|e| io_err(&format!("create {}", work_dir.display()), e))?;
        Ok(Harness {
            node,
            node_version,
            addon,
            work_dir,
        })
    }

    /// The harness `conform_trace` uses: built once per process, in
    /// `$SCOPECHECK_CONFORM_DIR` or else `<temp dir>/scopecheck-conform`.
    pub fn shared() -> Result<&'static Harness, ConformError> {
        static SHARED: std::sync::OnceLock<Result<Harness, ConformError>> =
            std::sync::OnceLock::new();
        SHARED
            .get_or_init(|| {
                let dir = std::env::var_os("SCOPECHECK_CONFORM_DIR")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| std::env::temp_dir().join("scopecheck-conform"));
                Harness::new(&dir)
            })
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
        let path = match keep {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| io_err(&format!("create {}", dir.display()), e))?;
                dir.join("program.js")
            }
            None => {
                let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
                self.work_dir
                    .join(format!("p{}-{n}.js", std::process::id()))
            }
        };
        std::fs::write(&path, source)
            .map_err(|e| io_err(&format!("write {}", path.display()), e))?;
        let mut result = self.run_file(&path, args);
        // A start that timed out before the prologue finished says nothing
        // about the trace (a stalled machine): try once more.
        if matches!(&result, Ok(r) if r.timed_out && !r.stdout.contains("{\"k\":\"start\"}")) {
            result = self.run_file(&path, args);
        }
        if keep.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        result
    }

    fn run_file(&self, path: &Path, args: &[String]) -> Result<NodeRun, ConformError> {
        let mut command = Command::new(&self.node);
        // A deep trace nests as deep calls in node: a large stack.
        super::stack::NodeStack::get().apply(&mut command);
        let mut child = command
            .arg("--no-deprecation")
            .arg("--expose-internals")
            .args(args)
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io_err(&format!("spawn {}", self.node.display()), e))?;
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let out_thread = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(o) = out.as_mut() {
                let _ = o.read_to_end(&mut buf);
            }
            buf
        });
        let err_thread = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_end(&mut buf);
            }
            buf
        });
        let start = Instant::now();
        let mut timed_out = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {
                    if start.elapsed() > RUN_TIMEOUT {
                        timed_out = true;
                        let _ = child.kill();
                        match child.wait() {
                            Ok(status) => break status,
                            Err(e) => return Err(io_err("wait for node", e)),
                        }
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(io_err("wait for node", e)),
            }
        };
        let stdout = out_thread.join().unwrap_or_default();
        let stderr = err_thread.join().unwrap_or_default();
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        Ok(NodeRun {
            // No copy unless it is not UTF-8 (it is long for a long trace).
            stdout: String::from_utf8(stdout)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            code: status.code(),
            signal,
            timed_out,
        })
    }
}

fn build_addon(cxx: &Path, headers: &Path, dir: &Path, target: &Path) -> Result<(), ConformError> {
    let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let source = dir.join(format!("addon-{}-{n}.cc", std::process::id()));
    let tmp = dir.join(format!("addon-{}-{n}.node.tmp", std::process::id()));
    std::fs::write(&source, ADDON_CC)
        .map_err(|e| io_err(&format!("write {}", source.display()), e))?;
    let output = Command::new(cxx)
        .args(["-shared", "-fPIC", "-std=c++17", "-O1", "-w"])
        .arg(format!("-I{}", headers.display()))
        .arg("-DNODE_GYP_MODULE_NAME=scopecheck_conform")
        .arg(&source)
        .arg("-o")
        .arg(&tmp)
        .output();
    let _ = std::fs::remove_file(&source);
    let output = output.map_err(|e| ConformError::MissingTool {
        tool: "g++".to_string(),
        hint: format!("{} does not run ({e}); {INSTALL_GXX}", cxx.display()),
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
