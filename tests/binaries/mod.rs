//! The node binaries the conformance tests run on: the default one
//! (`$SCOPECHECK_NODE`, else `node` on `PATH`: v20, the model's oracle),
//! `node` on `PATH` too when `$SCOPECHECK_NODE` names another, and Node 26
//! (`$SCOPECHECK_NODE26`, else the binary `scripts/install-node.sh` leaves in
//! the checkout, `.node/<VERSION>/bin/node`). Each test runs on every one
//! of them.
//!
//! Without a working default binary (node with its headers, and g++) every
//! test fails, saying what to install. Without Node 26 the tests run on the
//! others and say so on stderr (uncaptured, so `cargo test` shows it); they
//! do not download anything themselves. A `$SCOPECHECK_NODE26` that is not
//! a Node 26 binary fails them.

use scopecheck::conform::{ConformError, Harness, NodeSelection};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the tests build the addon and write programs.
pub fn build_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("conform")
}

/// Where scripts/install-node.sh puts its pinned node: the `VERSION=` of
/// the script, under `$SCOPECHECK_NODE_DIR` or the checkout's `.node/`.
pub fn installed_node26() -> PathBuf {
    let script = include_str!("../../scripts/install-node.sh");
    let version = script
        .lines()
        .find_map(|l| l.strip_prefix("VERSION="))
        .map(str::trim)
        .unwrap_or("?");
    let base = std::env::var_os("SCOPECHECK_NODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".node"));
    base.join(version).join("bin/node")
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn with_node(node: &Path) -> Result<Harness, ConformError> {
    let selection = NodeSelection {
        node: Some(node.to_path_buf()),
        headers: None,
    };
    Harness::with_node(&selection, &build_dir())
}

fn find() -> Result<Vec<Harness>, String> {
    let default =
        Harness::new(&build_dir()).map_err(|e| format!("the conformance tests cannot run: {e}"))?;
    let mut found = vec![default];
    let note = |line: String| {
        let _ = writeln!(std::io::stderr(), "conformance tests: {line}");
    };
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a)
            .ok()
            .is_some_and(|a| std::fs::canonicalize(b).ok() == Some(a))
    };
    if std::env::var_os("SCOPECHECK_NODE").is_some() {
        if let Some(node) = on_path("node").filter(|p| !found.iter().any(|h| same(&h.node, p))) {
            match with_node(&node) {
                Ok(h) => found.push(h),
                Err(e) => note(format!("not run on {}: {e}", node.display())),
            }
        }
    }
    let node26 = match std::env::var_os("SCOPECHECK_NODE26") {
        Some(p) => Some(PathBuf::from(p)),
        None => Some(installed_node26()).filter(|p| p.is_file()),
    };
    match node26 {
        Some(node) if found.iter().any(|h| same(&h.node, &node)) => {}
        Some(node) => {
            let h = with_node(&node).map_err(|e| format!("Node 26 ({}): {e}", node.display()))?;
            if !h.node_version.starts_with("v26.") {
                return Err(format!(
                    "{} is {}, not Node 26 (SCOPECHECK_NODE26 must name a v26 binary)",
                    node.display(),
                    h.node_version
                ));
            }
            found.push(h);
        }
        None => note(format!(
            "no Node 26 binary: the tests run on {} only (set SCOPECHECK_NODE26, or run scripts/install-node.sh, which installs {})",
            found
                .iter()
                .map(|h| h.node_version.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            installed_node26().display()
        )),
    }
    Ok(found)
}

/// Every binary the tests run on, the default one first; built once per
/// test process. Panics, saying what to install, without a default binary.
pub fn all() -> &'static [Harness] {
    static FOUND: OnceLock<Result<Vec<Harness>, String>> = OnceLock::new();
    match FOUND.get_or_init(find) {
        Ok(found) => found,
        Err(e) => panic!("{e}"),
    }
}

/// The default binary (`$SCOPECHECK_NODE`, else `node` on `PATH`).
#[allow(dead_code)]
pub fn default() -> &'static Harness {
    &all()[0]
}
