//! Conformance on deep and long traces: the program node runs is linear in
//! the trace and nests nothing in its source, node gets a stack for the
//! trace's depth, and what it cannot run is refused before anything runs.
//!
//! Runs on every node binary on this machine (`binaries`); the stack test
//! also runs `sh` (for `ulimit`).

use crate::binaries;

use binaries::build_dir;
use model::vocab::{AsyncContext, Holder, NativeResource, Op, ResourceId, ScopeFlags, ScopeKind};
use scopecheck::conform::emit::{self, Plan};
use scopecheck::conform::stack::{NodeStack, BYTES_PER_LEVEL};
use scopecheck::conform::ConformError;
use std::path::{Path, PathBuf};
use std::process::Command;

fn native(kind: ScopeKind) -> Op {
    Op::OpenScope {
        kind,
        context: AsyncContext {
            async_id: 5,
            trigger_async_id: 1,
        },
        resource: NativeResource {
            id: ResourceId(1),
            holder: Holder::Local,
        },
        flags: ScopeFlags::default(),
    }
}

/// The four kinds of frame: (open, close).
fn frame(kind: usize) -> (Op, Op) {
    match kind % 4 {
        0 => (
            native(ScopeKind::CallbackScope),
            Op::CloseScope { threw: false },
        ),
        1 => (
            native(ScopeKind::MakeCallback),
            Op::CloseScope { threw: false },
        ),
        2 => (
            Op::EnterRunInAsyncScope {
                async_id: 5,
                trigger_async_id: 1,
                resource: ResourceId(2),
            },
            Op::ExitRunInAsyncScope,
        ),
        _ => (
            Op::EnterDefaultTriggerScope {
                trigger_async_id: 5,
            },
            Op::ExitDefaultTriggerScope,
        ),
    }
}

/// `opens` frames of the kinds `kinds` (cycled), queries and a tick at the
/// bottom, and every close.
fn nested(opens: usize, kinds: &[usize]) -> Vec<Op> {
    let mut ops = Vec::with_capacity(2 * opens + 4);
    let mut closes = Vec::with_capacity(opens);
    for i in 0..opens {
        let (open, close) = frame(kinds[i % kinds.len()]);
        ops.push(open);
        closes.push(close);
    }
    ops.extend([
        Op::ExecutionAsyncId,
        Op::ExecutionAsyncResource,
        Op::NextTick {
            query_resource: true,
        },
        Op::TickCallback,
    ]);
    ops.extend(closes.into_iter().rev());
    ops
}

#[test]
fn a_trace_10_000_frames_deep_agrees() {
    let ops = nested(10_000, &[0, 1, 2, 3]);
    for h in binaries::all() {
        let v = h
            .conform_trace(&ops, None)
            .unwrap_or_else(|e| panic!("node {}: {e}", h.node_version));
        assert!(v.is_equal(), "node {}: {v}", h.node_version);
        assert_eq!(v.given, ops.len());
    }
}

#[test]
fn the_program_is_linear_in_the_trace() {
    let runtime = emit::RUNTIME_JS.len();
    for depth in [1_000, 10_000] {
        let ops = nested(depth, &[0, 1, 2, 3]);
        let p = emit::program(&ops, &Plan::default(), Path::new("/x/addon.node"));
        // The trace's own text, each line break escaped: at most about 27
        // bytes per op (the longest line, `end-default-trigger-scope`, is 25
        // characters, and `\n` 2).
        let per_op = (p.source.len() - runtime) as f64 / ops.len() as f64;
        assert!(per_op < 28.0, "{per_op} bytes per op at depth {depth}");
        // One line for the trace, whatever its depth: nothing for node's
        // parser to recurse on.
        let runtime_lines = emit::RUNTIME_JS.lines().count();
        assert_eq!(p.source.lines().count(), runtime_lines + 1, "depth {depth}");
    }
}

#[test]
fn deeper_than_the_stack_is_refused_before_node_runs() {
    let max = NodeStack::get().max_nesting();
    // Opens of frames 2 ..= max + 1 (the main script's scope is frame 1).
    let ops = nested(max, &[0]);
    for h in binaries::all() {
        let started = std::time::Instant::now();
        match h.conform_trace(&ops, None) {
            Err(ConformError::Unsupported(u)) => {
                assert_eq!(u.index, max - 1, "{u}");
                assert!(u.reason.contains("stack"), "{u}");
            }
            Err(e) => panic!("expected a refusal, got {e}"),
            Ok(v) => panic!("expected a refusal, got a verdict: {v}"),
        }
        // Refused as the model reaches it, before the program or node ran.
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }
}

fn write_trace(name: &str, ops: &[Op]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("conform_deep");
    std::fs::create_dir_all(&dir).expect("create the temp dir");
    let path = dir.join(format!("{name}.trace"));
    std::fs::write(&path, model::vocab::trace::print(ops)).expect("write the trace");
    path
}

/// `scopecheck conform --node NODE FILE` with the stack limited to 16 MiB
/// (soft and hard), so that node gets that stack and no more.
fn conform_on_16_mib(node: &Path, file: &Path) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -Ss 16384 && ulimit -Hs 16384 && exec \"$0\" conform --node \"$1\" \"$2\"")
        .arg(env!("CARGO_BIN_EXE_scopecheck"))
        .arg(node)
        .arg(file)
        .env("SCOPECHECK_CONFORM_DIR", build_dir())
        .output()
        .expect("run sh")
}

#[test]
fn traces_as_deep_as_the_bound_allows_run_on_a_small_stack() {
    let stack = NodeStack::from_limits(Some((16 << 20, 16 << 20)));
    let max = stack.max_nesting();
    assert_eq!(max, ((14 << 20) / BYTES_PER_LEVEL) as usize);
    // Each kind on its own, and all of them with a hook enabled (its
    // callbacks run at the bottom too): exactly `max` frames deep.
    let hook = [
        Op::CreateHook {
            hook: model::vocab::HookId(1),
            callbacks: model::vocab::HookCallbacks::ALL,
        },
        Op::EnableHook(model::vocab::HookId(1)),
    ];
    let mut cases: Vec<(String, Vec<Op>)> = (0..4)
        .map(|k| (format!("kind-{k}"), nested(max - 1, &[k])))
        .collect();
    let mut hooked = hook.to_vec();
    hooked.extend(nested(max - 1, &[1, 0, 2, 3]));
    cases.push(("hooked".to_string(), hooked));
    let too_deep = write_trace("too-deep", &nested(max, &[1]));
    for h in binaries::all() {
        for (name, ops) in &cases {
            let out = conform_on_16_mib(&h.node, &write_trace(name, ops));
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let on = format!("{name} on node {}", h.node_version);
            assert_eq!(out.status.code(), Some(0), "{on}: {stdout}\n{stderr}");
            assert!(stdout.contains(": equal ("), "{on}: {stdout}");
        }
        // One frame more is refused, exit code 2, naming the line of the open.
        let out = conform_on_16_mib(&h.node, &too_deep);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}:{max}:1: ", too_deep.display())),
            "{stderr}"
        );
        assert!(stderr.contains("ulimit -Hs"), "{stderr}");
    }
}
