//! From an op trace to a Node.js program.
//!
//! Native scopes and the JS frames become nested functions: `callback-scope
//! A T R; <ops>; close` is `addon.callbackScope(A, T, R, () => { <ops> },
//! closeIndex)`. Every op writes a marker line `{"op":i}` before its code, so
//! that the observations after it can be told apart from the next op's;
//! a few ops cannot be separated from the op before them (see
//! [`Program::group_starts`]). The prologue is `tests/conformance/runtime.js`.
//!
//! [`Checker`] decides, one op at a time, what the program can express; every
//! refusal is an [`Unsupported`] that says why. docs/conformance.md lists the
//! decisions.

use super::harness::Capabilities;
use model::vocab::{AsyncId, Holder, HookCallbacks, Op, ScopeFlags, ScopeKind};
use std::fmt;
use std::path::Path;

/// The JS prologue every program starts with.
pub const RUNTIME_JS: &str = include_str!("../../tests/conformance/runtime.js");

/// Ids are doubles in JS: larger magnitudes would not round-trip.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// An op the Node.js program cannot express, at its index in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The op's index in the trace (0-based).
    pub index: usize,
    /// The op as trace text.
    pub op: String,
    /// Why the binary cannot run it.
    pub reason: String,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "op {} `{}` cannot run on node: {}",
            self.index, self.op, self.reason
        )
    }
}

impl std::error::Error for Unsupported {}

/// A frame of the program's call stack, as the translator tracks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    /// The main script (`StartExecution`'s scope).
    Main,
    /// `addon.callbackScope` (or `addon.globalCallbackScope`).
    CallbackScope,
    /// `addon.makeCallback`.
    MakeCallback,
    /// `runInAsyncScope`.
    RunInAsyncScope,
    /// `defaultTriggerAsyncIdScope`.
    DefaultTriggerScope,
}

impl FrameKind {
    fn describe(self) -> &'static str {
        match self {
            FrameKind::Main => "the main script's scope",
            FrameKind::CallbackScope => "a callback-scope",
            FrameKind::MakeCallback => "a make-callback",
            FrameKind::RunInAsyncScope => "a run-in-async-scope",
            FrameKind::DefaultTriggerScope => "a default-trigger-scope",
        }
    }

    fn is_native(self) -> bool {
        matches!(
            self,
            FrameKind::Main | FrameKind::CallbackScope | FrameKind::MakeCallback
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Frame {
    kind: FrameKind,
    /// An `uncaught-exception` was thrown in this frame's callback: it can
    /// only close now. `Some(handled)`.
    thrown: Option<bool>,
    /// A callback-scope holding its resource as a Global: the resource's
    /// number, which names the Global in the addon.
    global_key: Option<u32>,
}

/// What the translator can express, decided op by op, for a binary with
/// given [`Capabilities`]. Cloning it is cheap: the random generator tries an
/// op on a clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checker {
    capabilities: Capabilities,
    frames: Vec<Frame>,
    index: usize,
    main_closed: bool,
    exited: bool,
    no_force_checks: bool,
}

impl Default for Checker {
    fn default() -> Self {
        Self::new()
    }
}

/// How an accepted op is written, for the code generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Its code starts with its own marker.
    Plain,
    /// It opens a frame of this kind.
    Open(FrameKind),
    /// It closes a frame of this kind; `thrown` if an uncaught exception was
    /// thrown in it, `threw` is the op's own flag.
    Close {
        kind: FrameKind,
        thrown: bool,
        threw: bool,
        global_key: Option<u32>,
    },
}

impl Checker {
    /// A checker at the start of the main script, for v20's public API
    /// (no `Global<Object>*` callback scopes).
    pub fn new() -> Self {
        Self::with_capabilities(Capabilities::default())
    }

    /// A checker at the start of the main script, for a binary with these
    /// capabilities.
    pub fn with_capabilities(capabilities: Capabilities) -> Self {
        Checker {
            capabilities,
            frames: vec![Frame {
                kind: FrameKind::Main,
                thrown: None,
                global_key: None,
            }],
            index: 0,
            main_closed: false,
            exited: false,
            no_force_checks: false,
        }
    }

    /// Whether the trace so far asks for `--no-force-async-hooks-checks`.
    pub fn no_force_checks(&self) -> bool {
        self.no_force_checks
    }

    /// Ops accepted so far.
    pub fn len(&self) -> usize {
        self.index
    }

    /// No op accepted yet.
    pub fn is_empty(&self) -> bool {
        self.index == 0
    }

    /// Open frames, the main script's scope included (0 once it closed).
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// Whether the innermost frame had an uncaught exception thrown in it
    /// (the only op it can take now is its close).
    pub fn must_close(&self) -> bool {
        self.frames.last().is_some_and(|f| f.thrown.is_some())
    }

    /// Accept the next op, or say why the program cannot express it. On
    /// error the checker is unchanged.
    pub fn push(&mut self, op: &Op) -> Result<(), Unsupported> {
        self.accept(op).map(|_| ())
    }

    fn refuse<T>(&self, op: &Op, reason: impl Into<String>) -> Result<T, Unsupported> {
        Err(Unsupported {
            index: self.index,
            op: op.to_string(),
            reason: reason.into(),
        })
    }

    fn accept(&mut self, op: &Op) -> Result<Shape, Unsupported> {
        let shape = self.shape(op)?;
        match shape {
            Shape::Open(kind) => {
                let global_key = match op {
                    Op::OpenScope { resource, .. } if resource.holder == Holder::Global => {
                        Some(resource.id.0)
                    }
                    _ => None,
                };
                self.frames.push(Frame {
                    kind,
                    thrown: None,
                    global_key,
                })
            }
            Shape::Close { kind, .. } => {
                self.frames.pop();
                if kind == FrameKind::Main {
                    self.main_closed = true;
                }
            }
            Shape::Plain => match op {
                Op::NoForceAsyncHooksChecks => self.no_force_checks = true,
                Op::UncaughtException { handled } => {
                    if let Some(frame) = self.frames.last_mut() {
                        frame.thrown = Some(*handled);
                    }
                    if !handled {
                        self.exited = true;
                    }
                }
                _ => {}
            },
        }
        self.index += 1;
        Ok(shape)
    }

    fn check_id(&self, op: &Op, id: AsyncId) -> Result<(), Unsupported> {
        if !(-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&id) {
            return self.refuse(
                op,
                format!("id {id} is not a safe integer, and Node's ids are JS numbers"),
            );
        }
        Ok(())
    }

    fn open_scope_shape(&self, op: &Op) -> Result<Shape, Unsupported> {
        let Op::OpenScope {
            kind,
            context,
            resource,
            flags,
        } = op
        else {
            return self.refuse(op, "not a scope");
        };
        self.check_id(op, context.async_id)?;
        self.check_id(op, context.trigger_async_id)?;
        if resource.holder == Holder::Global {
            if *kind == ScopeKind::MakeCallback {
                return self.refuse(
                    op,
                    "a `global` resource on a make-callback: node::MakeCallback takes its resource as a Local<Object> on every version",
                );
            }
            if !self.capabilities.global_callback_scope {
                return self.refuse(
                    op,
                    "a `global` resource holder: this binary's public node::CallbackScope takes a Local<Object> only (v20; the Global<Object>* constructor is in Node 26's node.h)",
                );
            }
        }
        if *flags != ScopeFlags::default() {
            return self.refuse(
                op,
                "skip-hooks / skip-queues are InternalCallbackScope flags that node::CallbackScope does not expose",
            );
        }
        Ok(Shape::Open(match kind {
            ScopeKind::CallbackScope => FrameKind::CallbackScope,
            ScopeKind::MakeCallback => FrameKind::MakeCallback,
        }))
    }

    fn reset_global_shape(&self, op: &Op) -> Result<Shape, Unsupported> {
        if !self.capabilities.global_callback_scope {
            return self.refuse(
                op,
                "reset-global: this binary's public API has no Global<Object> resource holder (v20; node::CallbackScope(Environment*, Global<Object>*, async_context) is in Node 26's node.h)",
            );
        }
        Ok(Shape::Plain)
    }

    fn shape(&self, op: &Op) -> Result<Shape, Unsupported> {
        if self.exited {
            return self.refuse(
                op,
                "the process has exited (an unhandled uncaught exception)",
            );
        }
        let Some(innermost) = self.frames.last() else {
            // After the main script: the program's event-loop callback runs
            // JS outside any scope only to open a native one (or to reset a
            // Global, which is native code in the model and touches no
            // async context in the program either).
            if matches!(op, Op::OpenScope { .. }) {
                return self.open_scope_shape(op);
            }
            if let Op::ResetGlobal(_) = op {
                return self.reset_global_shape(op);
            }
            return self.refuse(
                op,
                "after the main script (its scope closed), JavaScript runs from the event loop only inside a native scope: open one with callback-scope or make-callback",
            );
        };
        if innermost.thrown.is_some() && !matches!(op, Op::CloseScope { .. }) {
            return self.refuse(
                op,
                format!(
                    "an uncaught exception was thrown in {}: no more of its callback runs, the next op must be its `close`",
                    innermost.kind.describe()
                ),
            );
        }
        let ids: Vec<AsyncId> = match op {
            Op::OpenScope { context, .. } => vec![context.async_id, context.trigger_async_id],
            Op::EmitInit {
                async_id,
                trigger_async_id,
                ..
            }
            | Op::EmitBefore {
                async_id,
                trigger_async_id,
                ..
            }
            | Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                ..
            } => vec![*async_id, *trigger_async_id],
            Op::EmitAfter { async_id } | Op::EmitDestroy { async_id } => vec![*async_id],
            Op::EnterDefaultTriggerScope { trigger_async_id } => vec![*trigger_async_id],
            _ => Vec::new(),
        };
        for id in ids {
            self.check_id(op, id)?;
        }
        match op {
            Op::NoForceAsyncHooksChecks => {
                if self.index != 0 {
                    return self.refuse(op, "--no-force-async-hooks-checks is a command-line option: only as the first op");
                }
                Ok(Shape::Plain)
            }
            Op::OpenScope { .. } => self.open_scope_shape(op),
            Op::CloseScope { threw } => {
                let kind = innermost.kind;
                if !kind.is_native() {
                    return self.refuse(op, format!("close: the innermost frame is {}", kind.describe()));
                }
                let thrown = innermost.thrown.is_some();
                if *threw && kind == FrameKind::Main {
                    return self.refuse(
                        op,
                        "`close threw` on the main script's scope: StartExecution's scope is never marked failed (after an exception in the main script, write `close`)",
                    );
                }
                if *threw && !thrown && kind == FrameKind::CallbackScope {
                    return self.refuse(
                        op,
                        "`close threw` on a callback-scope: node::CallbackScope's TryCatch is verbose, so an exception from its callback always reaches the uncaught-exception handler first; write `uncaught-exception handled|unhandled` before the close",
                    );
                }
                Ok(Shape::Close {
                    kind,
                    thrown,
                    threw: *threw,
                    global_key: innermost.global_key,
                })
            }
            Op::ResetGlobal(_) => self.reset_global_shape(op),
            Op::Stop => self.refuse(
                op,
                "stop: Environment::ExitEnv comes from another thread (worker.terminate()); a program cannot stop its environment at a chosen op and go on running ops",
            ),
            Op::ExitRunInAsyncScope => {
                if innermost.kind != FrameKind::RunInAsyncScope {
                    return self.refuse(
                        op,
                        format!("end-run-in-async-scope: the innermost frame is {}", innermost.kind.describe()),
                    );
                }
                Ok(Shape::Close {
                    kind: FrameKind::RunInAsyncScope,
                    thrown: false,
                    threw: false,
                    global_key: None,
                })
            }
            Op::ExitDefaultTriggerScope => {
                if innermost.kind != FrameKind::DefaultTriggerScope {
                    return self.refuse(
                        op,
                        format!("end-default-trigger-scope: the innermost frame is {}", innermost.kind.describe()),
                    );
                }
                Ok(Shape::Close {
                    kind: FrameKind::DefaultTriggerScope,
                    thrown: false,
                    threw: false,
                    global_key: None,
                })
            }
            Op::EnterRunInAsyncScope { .. } => Ok(Shape::Open(FrameKind::RunInAsyncScope)),
            Op::EnterDefaultTriggerScope { .. } => Ok(Shape::Open(FrameKind::DefaultTriggerScope)),
            Op::UncaughtException { .. } => {
                if !innermost.kind.is_native() {
                    return self.refuse(
                        op,
                        format!(
                            "uncaught-exception: the innermost frame is {}; the exception unwinds the JS frames before it reaches a native scope",
                            innermost.kind.describe()
                        ),
                    );
                }
                Ok(Shape::Plain)
            }
            Op::CreateHook { .. }
            | Op::EnableHook(_)
            | Op::DisableHook(_)
            | Op::EmitInit { .. }
            | Op::EmitBefore { .. }
            | Op::EmitAfter { .. }
            | Op::EmitDestroy { .. }
            | Op::NextTick { .. }
            | Op::TickCallback
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::ClearAsyncIdStack => Ok(Shape::Plain),
        }
    }
}

/// Whether every op of `ops` can run on a v20 node, in order.
pub fn check(ops: &[Op]) -> Result<(), Unsupported> {
    check_with(ops, Capabilities::default())
}

/// Whether every op of `ops` can run, in order, on a node binary with these
/// capabilities.
pub fn check_with(ops: &[Op], capabilities: Capabilities) -> Result<(), Unsupported> {
    let mut checker = Checker::with_capabilities(capabilities);
    for op in ops {
        checker.push(op)?;
    }
    Ok(())
}

/// A Node.js program for a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The JavaScript source (the runtime prologue, then the trace).
    pub source: String,
    /// Node options beyond `--no-deprecation --expose-internals`.
    pub node_args: Vec<String>,
    /// The indices of the ops that write a marker, ascending. An op without
    /// one (the close of a make-callback or of the main script right after an
    /// `uncaught-exception` in it: nothing runs in between) shares the group
    /// of the op before it: the comparison takes the two together.
    pub group_starts: Vec<usize>,
}

fn js_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn id(x: AsyncId) -> String {
    format!("I({x})")
}

fn callbacks_js(c: &HookCallbacks) -> String {
    let mut names = Vec::new();
    for (on, name) in [
        (c.init, "init"),
        (c.before, "before"),
        (c.after, "after"),
        (c.destroy, "destroy"),
        (c.promise_resolve, "promiseResolve"),
    ] {
        if on {
            names.push(js_string(name));
        }
    }
    format!("[{}]", names.join(", "))
}

/// Translate `ops` into a program that loads the addon at `addon`, for a
/// binary with `capabilities`. `assigned[i]` is the id the model handed out
/// at op `i` (`new-async-id`, `next-tick`), which the program maps to the
/// one Node hands out; a missing entry maps nothing.
pub fn translate(
    ops: &[Op],
    assigned: &[Option<AsyncId>],
    addon: &Path,
    capabilities: Capabilities,
) -> Result<Program, Unsupported> {
    let mut checker = Checker::with_capabilities(capabilities);
    let mut out = String::new();
    let addon_js = js_string(&addon.to_string_lossy());
    out.push_str(&RUNTIME_JS.replace("require(ADDON_PATH)", &format!("require({addon_js})")));
    let mut group_starts = Vec::new();
    // A make-callback's `verbose` argument (report an exception from its
    // callback as uncaught) follows the callback's body, so it is written
    // when the close is reached and known.
    let mut indent = 0usize;
    let pad = |n: usize| "  ".repeat(n);
    for (i, op) in ops.iter().enumerate() {
        let shape = checker.accept(op)?;
        let model_id = assigned.get(i).copied().flatten();
        let marker = format!("W({{ op: {i} }});");
        match shape {
            Shape::Open(kind) => {
                group_starts.push(i);
                out.push_str(&format!("{}{marker}\n", pad(indent)));
                let head = match op {
                    Op::OpenScope {
                        context, resource, ..
                    } => {
                        let f = if kind != FrameKind::CallbackScope {
                            "addon.makeCallback"
                        } else if resource.holder == Holder::Global {
                            "addon.globalCallbackScope"
                        } else {
                            "addon.callbackScope"
                        };
                        format!(
                            "{f}({}, {}, R({}), function () {{",
                            id(context.async_id),
                            id(context.trigger_async_id),
                            resource.id.0
                        )
                    }
                    Op::EnterRunInAsyncScope {
                        async_id,
                        trigger_async_id,
                        resource,
                    } => format!(
                        "rias({}, {}, {}, () => {{",
                        resource.0,
                        id(*async_id),
                        id(*trigger_async_id)
                    ),
                    Op::EnterDefaultTriggerScope { trigger_async_id } => {
                        format!(
                            "iah.defaultTriggerAsyncIdScope({}, () => {{",
                            id(*trigger_async_id)
                        )
                    }
                    _ => String::new(),
                };
                out.push_str(&format!("{}{head} // {op}\n", pad(indent)));
                indent += 1;
            }
            Shape::Close {
                kind,
                thrown,
                threw,
                global_key,
            } => {
                let inner = pad(indent);
                indent = indent.saturating_sub(1);
                let outer = pad(indent);
                match kind {
                    FrameKind::CallbackScope => {
                        // The addon writes the marker once the callback is done.
                        group_starts.push(i);
                        let key = global_key.map_or(String::new(), |k| format!(", {k}"));
                        out.push_str(&format!("{outer}}}, {i}{key}); // {op}\n"));
                    }
                    FrameKind::MakeCallback => {
                        if thrown {
                            out.push_str(&format!(
                                "{outer}}}, true); // {op} (after the uncaught exception)\n"
                            ));
                        } else if threw {
                            group_starts.push(i);
                            out.push_str(&format!(
                                "{inner}{marker}\n{inner}throw new Thrown('close threw');\n"
                            ));
                            out.push_str(&format!("{outer}}}, false); // {op}\n"));
                        } else {
                            group_starts.push(i);
                            out.push_str(&format!("{inner}{marker}\n{outer}}}, false); // {op}\n"));
                        }
                    }
                    FrameKind::RunInAsyncScope | FrameKind::DefaultTriggerScope => {
                        group_starts.push(i);
                        out.push_str(&format!("{inner}{marker}\n{outer}}}); // {op}\n"));
                    }
                    FrameKind::Main => {
                        if !thrown {
                            group_starts.push(i);
                            out.push_str(&format!(
                                "{marker} // {op}: the end of the main script\n"
                            ));
                        }
                        // What follows runs from the event loop.
                        out.push_str("\nfunction afterMainScript() {\n");
                        indent = 1;
                    }
                }
            }
            Shape::Plain => {
                group_starts.push(i);
                let code = match op {
                    Op::NoForceAsyncHooksChecks => "// --no-force-async-hooks-checks".to_string(),
                    Op::CreateHook { hook, callbacks } => {
                        format!(
                            "createHook({}, {});",
                            js_string(&hook.to_string()),
                            callbacks_js(callbacks)
                        )
                    }
                    Op::EnableHook(h) => {
                        format!("hooks.get({}).enable();", js_string(&h.to_string()))
                    }
                    Op::DisableHook(h) => {
                        format!("hooks.get({}).disable();", js_string(&h.to_string()))
                    }
                    Op::EmitInit {
                        async_id,
                        type_name,
                        trigger_async_id,
                        resource,
                    } => format!(
                        "iah.emitInit({}, {}, {}, {});",
                        id(*async_id),
                        js_string(type_name),
                        id(*trigger_async_id),
                        resource.map_or("undefined".to_string(), |r| format!("R({})", r.0))
                    ),
                    Op::EmitBefore {
                        async_id,
                        trigger_async_id,
                        resource,
                    } => format!(
                        "iah.emitBefore({}, {}, {});",
                        id(*async_id),
                        id(*trigger_async_id),
                        resource.map_or("undefined".to_string(), |r| format!("R({})", r.0))
                    ),
                    Op::EmitAfter { async_id } => format!("iah.emitAfter({});", id(*async_id)),
                    Op::EmitDestroy { async_id } => format!("iah.emitDestroy({});", id(*async_id)),
                    Op::NextTick { query_resource } => {
                        let m = model_id.map_or("null".to_string(), |m| m.to_string());
                        format!("nextTick({m}, {query_resource});")
                    }
                    Op::TickCallback => "process._tickCallback();".to_string(),
                    Op::ExecutionAsyncId => "W({ k: 'eid', v: eid() });".to_string(),
                    Op::TriggerAsyncId => "W({ k: 'tid', v: tid() });".to_string(),
                    Op::ExecutionAsyncResource => {
                        "W({ k: 'ear', r: nameOf(iah.executionAsyncResource()) });".to_string()
                    }
                    Op::DefaultTriggerAsyncId => {
                        "W({ k: 'dtid', v: iah.getDefaultTriggerAsyncId() });".to_string()
                    }
                    Op::NewAsyncId => {
                        let m = model_id.map_or("null".to_string(), |m| m.to_string());
                        format!("{{ const v = iah.newAsyncId(); W({{ k: 'new', v }}); assign({m}, v); }}")
                    }
                    Op::UncaughtException { handled } => format!("uncaught({handled});"),
                    Op::ResetGlobal(r) => format!("addon.resetGlobal({});", r.0),
                    Op::ClearAsyncIdStack => "iah.clearAsyncIdStack();".to_string(),
                    // Refused by the checker.
                    Op::OpenScope { .. }
                    | Op::CloseScope { .. }
                    | Op::EnterRunInAsyncScope { .. }
                    | Op::ExitRunInAsyncScope
                    | Op::EnterDefaultTriggerScope { .. }
                    | Op::ExitDefaultTriggerScope
                    | Op::Stop => String::new(),
                };
                out.push_str(&format!("{}{marker} {code} // {op}\n", pad(indent)));
            }
        }
    }
    // Frames the trace leaves open end with the program's functions, without
    // markers (conform_trace appends explicit closes, so this is for direct
    // callers of translate).
    while let Some(frame) = checker.frames.pop() {
        if frame.kind == FrameKind::Main {
            break;
        }
        indent = indent.saturating_sub(1);
        let close = match frame.kind {
            FrameKind::CallbackScope => match frame.global_key {
                Some(k) => format!("}}, -1, {k});"),
                None => "}, -1);".to_string(),
            },
            FrameKind::MakeCallback => {
                if frame.thrown.is_some() {
                    "}, true);".to_string()
                } else {
                    "}, false);".to_string()
                }
            }
            _ => "});".to_string(),
        };
        out.push_str(&format!("{}{close}\n", pad(indent)));
    }
    if checker.main_closed {
        out.push_str("}\n");
    }
    let mut node_args = Vec::new();
    if checker.no_force_checks {
        node_args.push("--no-force-async-hooks-checks".to_string());
    }
    Ok(Program {
        source: out,
        node_args,
        group_starts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::vocab::{AsyncContext, NativeResource, ResourceId};

    fn scope(kind: ScopeKind) -> Op {
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

    #[test]
    fn markers_and_fused_groups() {
        let ops = vec![
            scope(ScopeKind::MakeCallback),
            Op::UncaughtException { handled: true },
            Op::CloseScope { threw: true },
            Op::ExecutionAsyncId,
            Op::CloseScope { threw: false },
        ];
        let p = match translate(
            &ops,
            &[],
            Path::new("/x/addon.node"),
            Capabilities::default(),
        ) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        // The make-callback's close right after the exception has no marker.
        assert_eq!(p.group_starts, vec![0, 1, 3, 4]);
        assert!(p.source.contains("}, true); // close threw"));
        assert!(p.source.contains("require(\"/x/addon.node\")"));
        assert!(p.source.contains("function afterMainScript() {"));
    }

    #[test]
    fn global_scopes_and_resets_on_a_binary_that_has_them() {
        let global = |id: u32| Op::OpenScope {
            kind: ScopeKind::CallbackScope,
            context: AsyncContext {
                async_id: 5,
                trigger_async_id: 1,
            },
            resource: NativeResource {
                id: ResourceId(id),
                holder: Holder::Global,
            },
            flags: ScopeFlags::default(),
        };
        let ops = vec![
            global(3),
            Op::ResetGlobal(ResourceId(3)),
            Op::CloseScope { threw: false },
            Op::CloseScope { threw: false },
            Op::ResetGlobal(ResourceId(4)),
        ];
        let caps = Capabilities {
            global_callback_scope: true,
        };
        let p = match translate(&ops, &[], Path::new("/x/addon.node"), caps) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        assert!(p
            .source
            .contains("addon.globalCallbackScope(I(5), I(1), R(3), function () {"));
        assert!(p.source.contains("addon.resetGlobal(3);"));
        // The close passes the Global's key after the marker index.
        assert!(p.source.contains("}, 2, 3); // close"));
        // After the main script, from the event loop.
        assert!(p.source.contains("addon.resetGlobal(4);"));
        assert_eq!(p.group_starts, vec![0, 1, 2, 3, 4]);
        // Without the capability (v20): both refused, with the reason.
        let err = |ops: &[Op]| check(ops).err().map(|u| u.reason);
        assert!(err(&ops[..1]).is_some_and(|r| r.contains("Local<Object> only")));
        assert!(err(&[Op::ResetGlobal(ResourceId(1))]).is_some_and(|r| r.contains("reset-global")));
        // A make-callback never takes a Global.
        let mut mc = global(1);
        if let Op::OpenScope { kind, .. } = &mut mc {
            *kind = ScopeKind::MakeCallback;
        }
        assert!(check_with(&[mc], caps)
            .err()
            .is_some_and(|u| u.reason.contains("make-callback")));
    }

    #[test]
    fn refusals() {
        let refused = |ops: &[Op]| check(ops).err().map(|u| u.index);
        assert_eq!(refused(&[Op::Stop]), Some(0));
        assert_eq!(
            refused(&[Op::ExecutionAsyncId, Op::NoForceAsyncHooksChecks]),
            Some(1)
        );
        assert_eq!(
            refused(&[
                scope(ScopeKind::CallbackScope),
                Op::CloseScope { threw: true }
            ]),
            Some(1)
        );
        assert_eq!(
            refused(&[
                scope(ScopeKind::CallbackScope),
                Op::UncaughtException { handled: true },
                Op::CloseScope { threw: true },
            ]),
            None
        );
        assert_eq!(
            refused(&[Op::UncaughtException { handled: true }, Op::NewAsyncId,]),
            Some(1)
        );
        assert_eq!(refused(&[Op::EmitAfter { async_id: 1 << 60 }]), Some(0));
        assert_eq!(
            refused(&[
                Op::CloseScope { threw: false },
                scope(ScopeKind::CallbackScope)
            ]),
            None
        );
        // The main script's scope is never failed: not even after an
        // exception in it.
        assert_eq!(
            refused(&[
                Op::UncaughtException { handled: true },
                Op::CloseScope { threw: true },
            ]),
            Some(1)
        );
        assert_eq!(
            refused(&[Op::CloseScope { threw: false }, Op::TickCallback]),
            Some(1)
        );
    }
}
