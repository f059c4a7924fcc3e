//! The pinned Node 26 that the conformance tests run beside v20: the binary
//! of `$SCOPECHECK_NODE26`, else the one `scripts/install-node.sh` leaves
//! in the checkout (`.node/VERSION/bin/node`, or under
//! `$SCOPECHECK_NODE_DIR`), else that script is run once (it fetches the
//! pinned package with npm and checks its sha512; side by side runs wait
//! for one another). `SCOPECHECK_NODE26=skip` asks for no Node 26 at all.

use crate::process::{self, Limits};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The install script, as built into this binary (for its pinned version).
const SCRIPT: &str = include_str!("../scripts/install-node.sh");

/// How long the install (an npm download of about 50 MB) may take.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

/// Why there is no Node 26 binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// `SCOPECHECK_NODE26=skip`: the caller asked for none.
    Skipped,
    /// The install failed: why, with the script's output.
    Failed(String),
}

/// The version the install script pins (`VERSION=` of the script).
pub fn pinned_version() -> &'static str {
    SCRIPT
        .lines()
        .find_map(|l| l.strip_prefix("VERSION="))
        .map_or("?", str::trim)
}

/// Where the install script puts the pinned binary.
pub fn installed_path() -> PathBuf {
    let base = std::env::var_os("SCOPECHECK_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".node"));
    base.join(pinned_version()).join("bin/node")
}

/// The Node 26 binary: found, or installed once per process (see the
/// module documentation).
pub fn find_or_install() -> Result<PathBuf, Missing> {
    static FOUND: OnceLock<Result<PathBuf, Missing>> = OnceLock::new();
    FOUND.get_or_init(locate).clone()
}

fn locate() -> Result<PathBuf, Missing> {
    match std::env::var_os("SCOPECHECK_NODE26") {
        Some(v) if v == "skip" => return Err(Missing::Skipped),
        Some(v) => return Ok(PathBuf::from(v)),
        None => {}
    }
    let installed = installed_path();
    if installed.is_file() {
        return Ok(installed);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-node.sh");
    let mut command = Command::new("bash");
    command.arg(&script);
    let limits = Limits::new(INSTALL_TIMEOUT);
    let fail = |why: String| {
        Missing::Failed(format!(
            "no Node 26 binary: {} {why}; install npm (apt-get install npm) so that it can fetch the pinned Node {} from the npm registry, or set SCOPECHECK_NODE26 to a Node 26 binary (SCOPECHECK_NODE26=skip leaves the Node 26 tests out)",
            script.display(),
            pinned_version()
        ))
    };
    match process::run(&mut command, None, &limits) {
        Ok(out) if out.status.success() => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let path = PathBuf::from(stdout.lines().last().unwrap_or("").trim());
            if path.is_file() {
                Ok(path)
            } else {
                Err(fail(format!("printed no binary: {stdout}")))
            }
        }
        Ok(out) => Err(fail(format!(
            "failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) => Err(fail(format!("did not finish: {e}"))),
    }
}
