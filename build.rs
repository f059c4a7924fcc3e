//! Build script: the commit the binary is built from (`SCOPECHECK_COMMIT`,
//! `unknown` outside a git checkout), part of the tool version a `--json`
//! summary carries so that `plumbing merge` refuses summaries of two builds.

use std::process::Command;

/// `git ARGS` in the package directory, trimmed; `None` if git is missing
/// or fails.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SCOPECHECK_COMMIT={commit}");
    // Rerun when HEAD moves: HEAD itself, the branch it names, packed refs.
    let branch = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
    let mut watched = vec![
        git(&["rev-parse", "--git-path", "HEAD"]),
        git(&["rev-parse", "--git-path", "packed-refs"]),
    ];
    if let Some(branch) = branch.filter(|b| b.starts_with("refs/")) {
        watched.push(git(&["rev-parse", "--git-path", &branch]));
    }
    println!("cargo:rerun-if-changed=build.rs");
    for path in watched.into_iter().flatten() {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
