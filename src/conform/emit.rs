//! From a trace to a Node.js program: `node/runtime.js` (the prologue and
//! an interpreter of the trace format) and one call `runTrace(TRACE, PLAN)`.
//! TRACE is the trace itself, one op per line as `Op`'s `Display` writes it:
//! the runtime switches on each op's own name. PLAN is what the text does
//! not say, taken from the model's run ([`Plan`]). The program's size is
//! linear in the trace and its source nests nothing, so node's parser never
//! meets the trace's depth.
//!
//! Whether node can express the trace is [`super::decide`]'s question; this
//! module writes what was decided.

use model::env::resources::ScopeSerial;
use model::env::Frame;
use model::vocab::{AsyncId, Observation, Op};
use model::Eager;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

/// The JS prologue and interpreter every program starts with.
pub const RUNTIME_JS: &str = include_str!("node/runtime.js");

/// What an `entry-module` program (`program.mjs`) starts with, before the
/// runtime: an ES module has no `require`, so it makes the CommonJS one; and
/// v20's ESM loader reads the entry with `fs.promises` and closes the file
/// after the module body has started (a `CloseReq` still active, whose
/// destroy hook would fire in the middle of the trace), so the module first
/// waits, one `setImmediate` at a time, until no such request is left. With
/// none (Node 26), nothing is awaited and the body runs straight on. After
/// an await the body goes on in the microtask checkpoint of the Immediate's
/// `InternalMakeCallback` scope, after its pop: at (0, 0) on an empty stack,
/// at callback-scope depth 1, as the module body itself runs, and that
/// scope's `Close` goes on as the main-script scope's would (the `kTotals`
/// CHECK, the ticks). No hook exists yet, so none of this is observed.
const ESM_HEADER: &str = "import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
while (process.getActiveResourcesInfo().some((r) => r === 'CloseReq' || r.startsWith('FSReq') || r.startsWith('FileHandle'))) {
  await new Promise((resolve) => setImmediate(resolve));
}
";

/// A Node.js program for a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The JavaScript source: the runtime, then one line
    /// `runTrace(TRACE, PLAN);`.
    pub source: String,
    /// Node options beyond `--no-deprecation --expose-internals`.
    pub node_args: Vec<String>,
    /// The indices of the ops that write a marker, ascending. An op without
    /// one (the close of a make-callback or of the main script right after an
    /// `uncaught-exception` in it: nothing runs in between) shares the group
    /// of the op before it: the comparison takes the two together.
    pub group_starts: Vec<usize>,
    /// The entry is an ES module (`entry-module`): the source is run as
    /// `program.mjs`, and starts by making `require` with
    /// `module.createRequire`.
    pub module: bool,
}

/// What the program needs of the model's run beyond the ops' own text,
/// noted op by op ([`Plan::before`], [`Plan::after`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Ops that write no marker: the close of a scope whose callback threw
    /// (a make-callback's, the main script's), which the runtime takes right
    /// after the exception unwound the frame.
    unmarked: BTreeSet<usize>,
    /// The id the model handed out at an op (`new-async-id`, `next-tick`,
    /// `next-tick-body`, `napi-async-init`), by the op's index: the runtime
    /// maps it to Node's.
    ids: Vec<(usize, AsyncId)>,
    /// For each `close-outer`, by its index, the index of the
    /// `callback-scope` it closes: the runtime opens that one as an N-API
    /// callback scope.
    napi: Vec<(usize, usize)>,
    /// The op that opened each open native scope, by the model's serial.
    opened: HashMap<ScopeSerial, usize>,
    /// For each `timer` that starts a `processTimers` call, by its index,
    /// how many `timer` ops the call has (it and those that follow an
    /// `end-timer` directly): the runtime picks the `now` at which exactly
    /// their Timeouts are due.
    timers: Vec<(usize, i64)>,
}

impl Plan {
    /// Note op `index` before the model runs it, in the state `env` is in.
    pub fn before(&mut self, index: usize, env: &Eager, op: &Op) {
        let innermost = env.frames.last();
        match op {
            Op::CloseScope { .. } => {
                if matches!(innermost, Some(Frame::Native(s)) if s.threw) {
                    self.unmarked.insert(index);
                }
            }
            Op::Timer => match (env.timers.call, self.timers.last_mut()) {
                (Some(_), Some((_, chain))) => *chain += 1,
                _ => self.timers.push((index, 1)),
            },
            Op::CloseOuter { outer } => {
                let target = super::decide::outer_target(env, *outer).map(|i| &env.frames[i]);
                if let Some(Frame::Native(scope)) = target {
                    if let Some(&open) = self.opened.get(&scope.serial) {
                        self.napi.push((index, open));
                    }
                }
            }
            _ => {}
        }
    }

    /// Note op `index` after the model ran it (`env`'s state now), with what
    /// it showed.
    pub fn after(&mut self, index: usize, op: &Op, env: &Eager, observations: &[Observation]) {
        match op {
            Op::OpenScope { .. } if !env.exited => {
                if let Some(Frame::Native(scope)) = env.frames.last() {
                    self.opened.insert(scope.serial, index);
                }
            }
            Op::NewAsyncId => {
                let id = observations.iter().find_map(|o| match o {
                    Observation::NewAsyncId(id) => Some(*id),
                    _ => None,
                });
                self.ids.extend(id.map(|id| (index, id)));
            }
            Op::NextTick { .. } | Op::NextTickBody | Op::NapiAsyncInit(_) | Op::SetTimeout => {
                let id = env.async_hooks.async_id_fields.k_async_id_counter;
                self.ids.push((index, id));
            }
            _ => {}
        }
    }

    /// The `PLAN` argument of `runTrace`:
    /// `{"ids":{..},"napi":{..},"timers":{..}}`.
    fn to_js(&self) -> String {
        let object = |pairs: &mut dyn Iterator<Item = (usize, i64)>| {
            let fields: Vec<String> = pairs.map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", fields.join(","))
        };
        format!(
            "{{\"ids\":{},\"napi\":{},\"timers\":{}}}",
            object(&mut self.ids.iter().map(|&(i, id)| (i, id))),
            object(&mut self.napi.iter().map(|&(i, open)| (i, open as i64))),
            object(&mut self.timers.iter().copied())
        )
    }
}

/// The program for `ops` (as the model ran them, with `plan` noted along),
/// loading the addon at `addon` and the Node-API module beside it.
pub fn program(ops: &[Op], plan: &Plan, addon: &Path) -> Program {
    let module = ops.iter().any(|op| matches!(op, Op::EntryModule { .. }));
    let js_path = |p: &Path| serde_json::to_string(&p.to_string_lossy()).unwrap_or_default();
    let prologue = RUNTIME_JS
        .replace(
            "require(ADDON_PATH)",
            &format!("require({})", js_path(addon)),
        )
        .replace(
            "require(NAPI_PATH)",
            &format!(
                "require({})",
                js_path(&super::harness::napi_addon_path(addon))
            ),
        );
    let mut trace = String::with_capacity(24 * ops.len());
    for op in ops {
        let _ = writeln!(trace, "{op}");
    }
    let mut source = String::with_capacity(prologue.len() + 2 * trace.len() + 128);
    if module {
        source.push_str(ESM_HEADER);
    }
    source.push_str(&prologue);
    source.push_str("runTrace(");
    source.push_str(&serde_json::to_string(&trace).unwrap_or_default());
    source.push_str(", ");
    source.push_str(&plan.to_js());
    source.push_str(");\n");
    let mut node_args = Vec::new();
    if ops.contains(&Op::NoForceAsyncHooksChecks) {
        node_args.push("--no-force-async-hooks-checks".to_string());
    }
    if ops.contains(&Op::AbortOnUncaughtException) {
        node_args.push("--abort-on-uncaught-exception".to_string());
    }
    // The mode (the last header that gives one, as in the model); the
    // warnings it queues stay ticks (no listener writes them).
    if let Some(Op::UnhandledRejections { mode, .. }) =
        (ops.iter().rev()).find(|op| matches!(op, Op::UnhandledRejections { .. }))
    {
        node_args.push(format!("--unhandled-rejections={mode}"));
        node_args.push("--no-warnings".to_string());
    }
    Program {
        source,
        node_args,
        group_starts: (0..ops.len())
            .filter(|i| !plan.unmarked.contains(i))
            .collect(),
        module,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::vocab::{trace, Runtime};

    /// The program of a trace the model runs whole, with its plan.
    fn program_of(text: &str) -> Program {
        let ops = trace::parse(text).unwrap_or_else(|e| panic!("{e}")).ops();
        let mut env = Eager::new();
        let mut plan = Plan::default();
        for (i, op) in ops.iter().enumerate() {
            plan.before(i, &env, op);
            let obs = env.apply(op).unwrap_or_else(|e| panic!("{op}: {e}"));
            plan.after(i, op, &env, &obs);
        }
        program(&ops, &plan, Path::new("/x/addon.node"))
    }

    /// The `runTrace(...)` line.
    fn call(p: &Program) -> &str {
        &p.source[p.source.rfind("runTrace(").unwrap_or(0)..]
    }

    #[test]
    fn the_program_runs_the_trace_text() {
        let p = program_of("make-callback 5 1 R1\nuncaught-exception handled\nclose threw\nexecution-async-id\nclose");
        assert_eq!(
            call(&p),
            "runTrace(\"make-callback 5 1 R1\\nuncaught-exception handled\\nclose threw\\nexecution-async-id\\nclose\\n\", {\"ids\":{},\"napi\":{},\"timers\":{}});\n"
        );
        // The make-callback's close right after the exception in it has no
        // marker: it shares the exception's group.
        assert_eq!(p.group_starts, vec![0, 1, 3, 4]);
        assert!(p.source.contains("require(\"/x/addon.node\")"));
        assert!(p.source.contains("require(\"/x/addon-napi.node\")"));
        assert!(!p.module && p.node_args.is_empty());
        // So has the main script's close after an exception in it.
        let p = program_of("uncaught-exception handled\nclose\ncallback-scope 5 0 R1\nclose");
        assert_eq!(p.group_starts, vec![0, 2, 3]);
    }

    #[test]
    fn the_plan_holds_what_the_text_does_not_say() {
        // The ids the model handed out, by op.
        let p = program_of("new-async-id\nnext-tick\nnext-tick-body\ntick-callback\nend-tick");
        assert!(
            call(&p).ends_with("{\"ids\":{\"0\":2,\"1\":3,\"2\":4},\"napi\":{},\"timers\":{}});\n")
        );
        // The scope a close-outer closes (opened at op 1) is an N-API scope.
        let p = program_of(
            "callback-scope 5 1 R1\ncallback-scope 6 5 R2\ncallback-scope 6 6 R3\nclose-outer 1\nclose\nclose",
        );
        assert!(call(&p).ends_with("{\"ids\":{},\"napi\":{\"3\":1},\"timers\":{}});\n"));
        // Header ops: an .mjs program, a node option.
        let p = program_of("no-force-async-hooks-checks\nentry-module\nexecution-async-id");
        assert!(p.module);
        assert!(p
            .source
            .starts_with("import { createRequire } from 'node:module';"));
        assert_eq!(p.node_args, ["--no-force-async-hooks-checks"]);
        // --unhandled-rejections: the last header's mode, as the model takes it.
        let p = program_of(
            "unhandled-rejections warn
unhandled-rejections strict on-uncaught-exception
promise-reject",
        );
        assert_eq!(
            p.node_args,
            ["--unhandled-rejections=strict", "--no-warnings"]
        );
    }
}
