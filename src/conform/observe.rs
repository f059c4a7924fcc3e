//! Reading a node run back: node's output is a trace (each op's line, then
//! what it showed as `=>` lines in the model's own syntax), read with the
//! trace parser and an [`Observation`] reader, Node's ids renamed to the
//! model's in one place (`Renamer`); and how the process ended.

use super::harness::{NodeRun, START_LINE};
use model::vocab::{
    AlsId, AsyncId, FailedCheck, HookEvent, HookId, Observation, Op, ResourceId, ResourceView,
    StoreValue, SIGABRT, SIGTRAP,
};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// Something node showed: an [`Observation`] the model can also make, or a
/// description of one it cannot (a resource the vocabulary has no name for,
/// a `promiseResolve` hook, a death the harness does not recognise, a line
/// it cannot read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeObservation {
    /// In the shared vocabulary, ids renamed to the model's.
    Known(Observation),
    /// Outside it.
    Other(String),
    /// The process died in a way the vocabulary has no name for (a CHECK
    /// the model does not know, a V8 fatal error, a signal, a timeout).
    Death(String),
}

impl NodeObservation {
    /// Whether the process ended with this observation.
    pub fn is_terminal(&self) -> bool {
        match self {
            NodeObservation::Known(o) => o.is_terminal(),
            NodeObservation::Death(_) => true,
            NodeObservation::Other(_) => false,
        }
    }
}

impl fmt::Display for NodeObservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeObservation::Known(o) => write!(f, "{o}"),
            NodeObservation::Other(s) => write!(f, "<{s}>"),
            NodeObservation::Death(s) => write!(f, "<died: {s}>"),
        }
    }
}

/// A node run, read: the observations after each marker, and the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeOutput {
    /// By the index of the op whose marker they follow.
    pub groups: BTreeMap<usize, Vec<NodeObservation>>,
    /// The op each marker names, by its index, as node ran it (parsed back
    /// with the trace parser).
    pub ops: BTreeMap<usize, Op>,
    /// Observations after `# start` and before the first marker (there
    /// should be none).
    pub before_first: Vec<NodeObservation>,
    /// The runtime prologue finished (`# start` was seen).
    pub started: bool,
    /// What happened after the main script's scope closed (the event loop),
    /// as text: not compared.
    pub epilogue: Vec<String>,
    /// Node's id for each id the model handed out, from the `# assign` lines.
    pub renamed: Vec<(AsyncId, AsyncId)>,
    /// How the process ended, in words.
    pub end: String,
}

/// Node's ids, renamed to the model's: the `# assign MODEL NODE` lines of
/// the run. The one place ids are renamed.
struct Renamer {
    node_to_model: HashMap<AsyncId, AsyncId>,
}

impl Renamer {
    fn map(&self, id: AsyncId) -> AsyncId {
        self.node_to_model.get(&id).copied().unwrap_or(id)
    }

    fn id(&self, s: &str) -> Result<AsyncId, String> {
        s.trim()
            .parse::<AsyncId>()
            .map(|id| self.map(id))
            .map_err(|_| format!("not an integer id: {s:?}"))
    }

    /// `[E, T]`.
    fn pair(&self, s: &str) -> Result<(AsyncId, AsyncId), String> {
        let inner = (s.strip_prefix('[').and_then(|s| s.strip_suffix(']')))
            .ok_or_else(|| format!("not an id pair: {s:?}"))?;
        let (e, t) = (inner.split_once(", ")).ok_or_else(|| format!("not an id pair: {s:?}"))?;
        Ok((self.id(e)?, self.id(t)?))
    }

    /// A resource as `ResourceView`'s Display writes it.
    fn resource(&self, s: &str) -> Result<ResourceView, String> {
        let numbered = |prefix: &str| s.strip_prefix(prefix).map(|n| self.id(n));
        Ok(match s {
            "undefined" => ResourceView::Undefined,
            "topLevelResource" => ResourceView::TopLevel,
            "main" => ResourceView::Main,
            "process" => ResourceView::Process,
            _ => {
                if let Some(n) = s.strip_prefix('R').and_then(|n| n.parse::<u32>().ok()) {
                    ResourceView::Resource(ResourceId(n))
                } else if let Some(id) = numbered("tick:") {
                    ResourceView::TickObject(id?)
                } else if let Some(id) = numbered("immediate:") {
                    ResourceView::Immediate(id?)
                } else if let Some(id) = numbered("microtask:") {
                    ResourceView::Microtask(id?)
                } else if let Some(id) = numbered("promise:") {
                    ResourceView::Promise(id?)
                } else if let Some(id) = numbered("timeout:") {
                    ResourceView::Timeout(id?)
                } else {
                    return Err(format!("a resource the vocabulary has no name for: {s}"));
                }
            }
        })
    }

    /// An observation as the model writes it (`Observation`'s Display, the
    /// trace format's `=>` lines), Node's ids renamed.
    fn observation(&self, text: &str) -> Result<Observation, String> {
        if text == "exception lost" {
            return Ok(Observation::ExceptionLost);
        }
        if let Some(rest) = text.strip_prefix("tick ") {
            let (id, rest) = rest.split_once(' ').ok_or("a tick without ids")?;
            let async_id = self.id(id)?;
            if let Some(store) = rest.strip_prefix("store ") {
                let (als, value) = store_of(store)?;
                let value = value.ok_or("a tick's store that is undefined")?;
                return Ok(Observation::TickStore {
                    async_id,
                    als,
                    value,
                });
            }
            let rest = rest
                .strip_prefix("sees ")
                .ok_or("a tick that sees nothing")?;
            let (pair, resource) = match rest.split_once(" resource ") {
                Some((pair, r)) => (pair, Some(self.resource(r)?)),
                None => (rest, None),
            };
            let (execution_async_id, trigger_async_id) = self.pair(pair)?;
            return Ok(Observation::Tick {
                async_id,
                execution_async_id,
                trigger_async_id,
                resource,
            });
        }
        if let Some(rest) = text.strip_prefix("timeout ") {
            let (id, rest) = rest.split_once(' ').ok_or("a Timeout without ids")?;
            let async_id = self.id(id)?;
            if let Some(store) = rest.strip_prefix("store ") {
                let (als, value) = store_of(store)?;
                let value = value.ok_or("a Timeout's store that is undefined")?;
                return Ok(Observation::TimeoutStore {
                    async_id,
                    als,
                    value,
                });
            }
            let pair = rest
                .strip_prefix("sees ")
                .ok_or("a Timeout that sees nothing")?;
            let (execution_async_id, trigger_async_id) = self.pair(pair)?;
            return Ok(Observation::Timeout {
                async_id,
                execution_async_id,
                trigger_async_id,
            });
        }
        if let Some(pair) = text.strip_prefix("rejection handled sees ") {
            let (execution_async_id, trigger_async_id) = self.pair(pair)?;
            return Ok(Observation::RejectionHandled {
                execution_async_id,
                trigger_async_id,
            });
        }
        for (prefix, promise) in [
            ("promise reaction sees ", Some(true)),
            ("microtask sees ", Some(false)),
            ("unhandled rejection sees ", None),
        ] {
            if let Some(pair) = text.strip_prefix(prefix) {
                let (execution_async_id, trigger_async_id) = self.pair(pair)?;
                return Ok(match promise {
                    Some(promise) => Observation::Microtask {
                        promise,
                        execution_async_id,
                        trigger_async_id,
                    },
                    None => Observation::UnhandledRejection {
                        execution_async_id,
                        trigger_async_id,
                    },
                });
            }
        }
        if let Some((call, pair)) = text.split_once(") in ") {
            return self.hook(call, pair);
        }
        let (name, value) = text.split_once(" = ").ok_or("no ` = `")?;
        Ok(match name {
            "executionAsyncId" => Observation::ExecutionAsyncId(self.id(value)?),
            "triggerAsyncId" => Observation::TriggerAsyncId(self.id(value)?),
            "getDefaultTriggerAsyncId" => Observation::DefaultTriggerAsyncId(self.id(value)?),
            "newAsyncId" => Observation::NewAsyncId(self.id(value)?),
            "executionAsyncResource" => Observation::ExecutionAsyncResource(self.resource(value)?),
            _ => {
                let (als, value) = store_of(text)?;
                Observation::Store { als, value }
            }
        })
    }

    /// `H<n>.EVENT(ARGS` and `[E, T]` of a hook callback.
    fn hook(&self, call: &str, pair: &str) -> Result<Observation, String> {
        let (hook, call) = call.split_once('.').ok_or("a hook without a callback")?;
        let hook = (hook.strip_prefix('H').and_then(|n| n.parse::<u32>().ok()))
            .map(HookId)
            .ok_or_else(|| format!("hook name {hook}"))?;
        let (event, args) = call
            .split_once('(')
            .ok_or("a hook callback without arguments")?;
        let event = match event {
            "init" => {
                // `ID, TYPE, TRIGGER, RESOURCE`: the type in the middle.
                let (id, rest) = args.split_once(", ").ok_or("init's arguments")?;
                let (rest, resource) = rest.rsplit_once(", ").ok_or("init's arguments")?;
                let (type_name, trigger) = rest.rsplit_once(", ").ok_or("init's arguments")?;
                HookEvent::Init {
                    async_id: self.id(id)?,
                    type_name: type_name.to_string(),
                    trigger_async_id: self.id(trigger)?,
                    resource: self.resource(resource)?,
                }
            }
            "before" => HookEvent::Before(self.id(args)?),
            "after" => HookEvent::After(self.id(args)?),
            "destroy" => HookEvent::Destroy(self.id(args)?),
            "promiseResolve" => HookEvent::PromiseResolve(self.id(args)?),
            other => return Err(format!("{hook}.{other}")),
        };
        let (execution_async_id, trigger_async_id) = self.pair(pair)?;
        Ok(Observation::Hook {
            hook,
            event,
            execution_async_id,
            trigger_async_id,
        })
    }
}

/// `A<n>.getStore() = V`: the storage and its store (`undefined`: none).
fn store_of(text: &str) -> Result<(AlsId, Option<StoreValue>), String> {
    let (als, value) = (text.split_once(".getStore() = ")).ok_or("not a getStore()")?;
    let als = (als.strip_prefix('A').and_then(|n| n.parse::<u32>().ok()))
        .map(AlsId)
        .ok_or_else(|| format!("AsyncLocalStorage name {als:?}"))?;
    let value = match value {
        "undefined" => None,
        v => Some(
            v.parse::<StoreValue>()
                .map_err(|_| format!("a store that no op of the trace gave: {v}"))?,
        ),
    };
    Ok((als, value))
}

/// `(actual: A, expected: E)` from `AsyncHooks::FailWithCorruptedAsyncStack`.
fn corrupted(stderr: &str) -> Option<(AsyncId, AsyncId)> {
    let start = stderr.find("async hook stack has become corrupted (actual: ")?;
    let rest = &stderr[start + "async hook stack has become corrupted (actual: ".len()..];
    let (actual, rest) = rest.split_once(", expected: ")?;
    let (expected, _) = rest.split_once(')')?;
    Some((actual.trim().parse().ok()?, expected.trim().parse().ok()?))
}

/// The `CHECK`s of the vocabulary, by the assertion text node prints.
pub(crate) const CHECKS: &[(&str, FailedCheck)] = &[
    (
        "!(ptr != nullptr) || (!ptr->IsEmpty())",
        FailedCheck::GlobalResourceNotEmpty,
    ),
    ("(async_id) >= (-1)", FailedCheck::AsyncIdAtLeastMinusOne),
    (
        "(trigger_async_id) >= (-1)",
        FailedCheck::TriggerAsyncIdAtLeastMinusOne,
    ),
    (
        "(env_->execution_async_id()) == (0)",
        FailedCheck::ExecutionAsyncIdIsZero,
    ),
    (
        "(env_->trigger_async_id()) == (0)",
        FailedCheck::TriggerAsyncIdIsZero,
    ),
];

fn terminal(run: &NodeRun, renamer: &Renamer) -> Option<NodeObservation> {
    if run.timed_out {
        return Some(NodeObservation::Death("timed out and killed".to_string()));
    }
    if let Some((actual, expected)) = corrupted(&run.stderr) {
        // Exit(1), or ABORT_NO_BACKTRACE() with --abort-on-uncaught-exception.
        let abort = match (run.code, run.signal) {
            (Some(1), _) => Some(false),
            (None, Some(SIGABRT)) => Some(true),
            _ => None,
        };
        if let Some(abort) = abort {
            return Some(NodeObservation::Known(Observation::CorruptedStack {
                actual: renamer.map(actual),
                expected: renamer.map(expected),
                abort,
            }));
        }
        return Some(NodeObservation::Death(format!(
            "corrupted stack (actual: {actual}, expected: {expected}) but exit {:?} signal {:?}",
            run.code, run.signal
        )));
    }
    if let Some(pos) = run.stderr.find("Assertion failed: ") {
        let line = run.stderr[pos + "Assertion failed: ".len()..]
            .lines()
            .next()
            .unwrap_or("")
            .trim();
        for (text, check) in CHECKS {
            if line == *text {
                return Some(NodeObservation::Known(Observation::CheckFailed(*check)));
            }
        }
        return Some(NodeObservation::Death(format!("CHECK failed: {line}")));
    }
    // V8's own fatal checks ("# Fatal error in ..., line ...", then
    // "# Check failed: ...", then a SIGTRAP): name the check.
    if let Some(pos) = run.stderr.find("# Check failed: ") {
        let line = run.stderr[pos + "# Check failed: ".len()..]
            .lines()
            .next()
            .unwrap_or("")
            .trim();
        return Some(NodeObservation::Death(format!(
            "V8 fatal error: Check failed: {line} (exit {:?}, signal {:?})",
            run.code, run.signal
        )));
    }
    // --abort-on-uncaught-exception: V8's abort (SIGTRAP) prints the
    // uncaught exception, then "FROM" and the stack; node's (SIGABRT, from
    // triggerUncaughtException) the fatal exception's report, whose stack
    // names the rejection mode's handler; async_hooks' fatalError (SIGABRT,
    // process.abort()) the stack of an init hook's exception (v20's
    // AsyncLocalStorage storageHook).
    let aborted = match run.signal {
        Some(SIGTRAP) => run.stderr.contains("\nFROM\n"),
        Some(SIGABRT) => {
            run.stderr
                .contains("UnhandledRejectionsMode (node:internal/process/promises")
                || run
                    .stderr
                    .contains("at emitInitNative (node:internal/async_hooks")
        }
        _ => false,
    };
    if let (true, Some(sig)) = (aborted, run.signal) {
        return Some(NodeObservation::Known(Observation::Aborted(sig)));
    }
    if let Some(sig) = run.signal {
        return Some(NodeObservation::Death(format!("killed by signal {sig}")));
    }
    match run.code {
        Some(0) | None => None,
        Some(code) => Some(NodeObservation::Known(Observation::Exit(code))),
    }
}

/// Read a run: node's output, a trace ([`super::emit`]): each op's line
/// (`OP # INDEX`) and the `=>` lines after it, Node's ids renamed to the
/// model's; the process's end appended to the last group (or to the
/// epilogue if the event loop had started).
pub fn read(run: &NodeRun) -> NodeOutput {
    let mut out = NodeOutput::default();
    let lines: Vec<&str> = (run.stdout.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut node_to_model = HashMap::new();
    for line in &lines {
        let assigned = line
            .strip_prefix("# assign ")
            .and_then(|r| r.split_once(' '));
        if let Some((m, n)) = assigned {
            if let (Ok(m), Ok(n)) = (m.parse::<AsyncId>(), n.parse::<AsyncId>()) {
                node_to_model.insert(n, m);
                out.renamed.push((m, n));
            }
        }
    }
    let renamer = Renamer { node_to_model };
    let mut current: Option<usize> = None;
    let mut in_loop = false;
    for &line in &lines {
        match line {
            l if l == START_LINE => {
                out.started = true;
                continue;
            }
            "# loop" => {
                in_loop = true;
                continue;
            }
            _ if line.starts_with("# assign ") => continue,
            _ => {}
        }
        if in_loop {
            out.epilogue.push(line.to_string());
            continue;
        }
        if let Some(text) = line.strip_prefix("=> ") {
            let o = match renamer.observation(text) {
                Ok(o) => NodeObservation::Known(o),
                Err(e) => NodeObservation::Other(format!("{text} ({e})")),
            };
            push(&mut out, current, o);
            continue;
        }
        let marker =
            (line.rsplit_once(" # ")).and_then(|(op, i)| Some((op, i.parse::<usize>().ok()?)));
        match marker {
            Some((op, index)) => {
                out.groups.entry(index).or_default();
                match op.parse::<Op>() {
                    Ok(op) => {
                        out.ops.insert(index, op);
                    }
                    Err(e) => push(
                        &mut out,
                        Some(index),
                        NodeObservation::Other(format!("op line {op:?}: {e}")),
                    ),
                }
                current = Some(index);
            }
            None => push(
                &mut out,
                current,
                NodeObservation::Other(format!("unreadable line {line:?}")),
            ),
        }
    }
    let end = terminal(run, &renamer);
    out.end = match (&end, run.code, run.signal) {
        (Some(t), _, _) => format!("{t}"),
        (None, Some(code), _) => format!("exit {code}"),
        (None, None, Some(sig)) => format!("signal {sig}"),
        (None, None, None) => "ended".to_string(),
    };
    if let Some(t) = end {
        if in_loop {
            out.epilogue.push(format!("{t}"));
        } else {
            push(&mut out, current, t);
        }
    }
    out
}

fn push(out: &mut NodeOutput, current: Option<usize>, o: NodeObservation) {
    match current {
        Some(op) => out.groups.entry(op).or_default().push(o),
        None => out.before_first.push(o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stdout: &str, stderr: &str, code: Option<i32>, signal: Option<i32>) -> NodeRun {
        NodeRun {
            stdout: stdout.to_string(),
            stderr: stderr.to_string(),
            code,
            signal,
            timed_out: false,
        }
    }

    #[test]
    fn every_observation_reads_back_as_the_model_writes_it() {
        let resources = [
            ResourceView::Resource(ResourceId(3)),
            ResourceView::Main,
            ResourceView::TickObject(7),
            ResourceView::Immediate(8),
            ResourceView::TopLevel,
            ResourceView::Process,
            ResourceView::Undefined,
            ResourceView::Microtask(9),
            ResourceView::Promise(10),
        ];
        let mut all = vec![
            Observation::ExecutionAsyncId(-1),
            Observation::TriggerAsyncId(0),
            Observation::DefaultTriggerAsyncId(12),
            Observation::NewAsyncId(2),
            Observation::Store {
                als: AlsId(2),
                value: Some(4),
            },
            Observation::Store {
                als: AlsId(1),
                value: None,
            },
            Observation::TickStore {
                async_id: 5,
                als: AlsId(1),
                value: 3,
            },
            Observation::Timeout {
                async_id: 7,
                execution_async_id: 7,
                trigger_async_id: 1,
            },
            Observation::TimeoutStore {
                async_id: 7,
                als: AlsId(2),
                value: 5,
            },
            Observation::UnhandledRejection {
                execution_async_id: 1,
                trigger_async_id: 0,
            },
            Observation::Microtask {
                promise: true,
                execution_async_id: 6,
                trigger_async_id: 2,
            },
            Observation::Microtask {
                promise: false,
                execution_async_id: 0,
                trigger_async_id: 0,
            },
            Observation::Tick {
                async_id: 4,
                execution_async_id: 4,
                trigger_async_id: 1,
                resource: None,
            },
        ];
        for (i, r) in resources.into_iter().enumerate() {
            all.push(Observation::ExecutionAsyncResource(r));
            all.push(Observation::Tick {
                async_id: 4,
                execution_async_id: 4,
                trigger_async_id: 1,
                resource: Some(r),
            });
            all.push(Observation::Hook {
                hook: HookId(1 + i as u32),
                event: HookEvent::Init {
                    async_id: 7,
                    type_name: "Tick, Object".to_string(),
                    trigger_async_id: -1,
                    resource: r,
                },
                execution_async_id: 5,
                trigger_async_id: 1,
            });
        }
        for event in [
            HookEvent::Before(5),
            HookEvent::After(5),
            HookEvent::Destroy(5),
            HookEvent::PromiseResolve(5),
        ] {
            all.push(Observation::Hook {
                hook: HookId(2),
                event,
                execution_async_id: 0,
                trigger_async_id: 0,
            });
        }
        let renamer = Renamer {
            node_to_model: HashMap::new(),
        };
        for o in all {
            assert_eq!(renamer.observation(&o.to_string()), Ok(o.clone()), "{o}");
        }
    }

    #[test]
    fn groups_renaming_and_the_corrupted_stack() {
        let out = read(&run(
            concat!(
                "# start\nnew-async-id # 0\n=> newAsyncId = 7\n# assign 2 7\n",
                "emit-after 2 # 1\n=> H1.after(7) in [1, 0]\n"
            ),
            "Error: async hook stack has become corrupted (actual: 1, expected: 7)\n",
            Some(1),
            None,
        ));
        assert!(out.started);
        assert_eq!(out.ops.get(&0), Some(&Op::NewAsyncId));
        // The op's own line is what node ran; ids in it are the model's.
        assert_eq!(out.ops.get(&1), Some(&Op::EmitAfter { async_id: 2 }));
        assert_eq!(
            out.groups[&0],
            vec![NodeObservation::Known(Observation::NewAsyncId(2))]
        );
        assert_eq!(
            out.groups[&1],
            vec![
                NodeObservation::Known(Observation::Hook {
                    hook: HookId(1),
                    event: HookEvent::After(2),
                    execution_async_id: 1,
                    trigger_async_id: 0,
                }),
                NodeObservation::Known(Observation::CorruptedStack {
                    actual: 1,
                    expected: 2,
                    abort: false,
                }),
            ]
        );
        assert_eq!(out.renamed, vec![(2, 7)]);
    }

    #[test]
    fn checks_exits_and_the_epilogue() {
        let out = read(&run(
            "# start\nclose # 0\n",
            "  #  Assertion failed: (env_->trigger_async_id()) == (0)\n",
            None,
            Some(6),
        ));
        assert_eq!(
            out.groups[&0],
            vec![NodeObservation::Known(Observation::CheckFailed(
                FailedCheck::TriggerAsyncIdIsZero
            ))]
        );
        let out = read(&run(
            "# start\nuncaught-exception unhandled # 0\n",
            "Error: boom\n",
            Some(1),
            None,
        ));
        assert_eq!(
            out.groups[&0],
            vec![NodeObservation::Known(Observation::Exit(1))]
        );
        let out = read(&run(
            "# start\nclose # 0\n# loop\n=> H1.destroy(3) in [0, 0]\n",
            "",
            Some(0),
            None,
        ));
        assert_eq!(out.groups[&0], vec![]);
        assert_eq!(out.epilogue, vec!["=> H1.destroy(3) in [0, 0]".to_string()]);
    }

    #[test]
    fn deaths_outside_the_vocabulary_are_named() {
        let check = read(&run(
            "# start\nclose # 0\n",
            "  #  Assertion failed: (env->context_frame()) != (nullptr)\n",
            None,
            Some(6),
        ));
        assert_eq!(
            check.groups[&0],
            vec![NodeObservation::Death(
                "CHECK failed: (env->context_frame()) != (nullptr)".to_string()
            )]
        );
        let v8 = read(&run(
            "# start\nexecution-async-resource # 0\n",
            "#\n# Fatal error in , line 0\n# Check failed: IsJSReceiver(obj).\n#\n",
            None,
            Some(5),
        ));
        assert_eq!(
            v8.groups[&0],
            vec![NodeObservation::Death(
                "V8 fatal error: Check failed: IsJSReceiver(obj). (exit None, signal Some(5))"
                    .to_string()
            )]
        );
        let segv = read(&run("# start\nclose # 0\n", "", None, Some(11)));
        assert!(segv.groups[&0][0].is_terminal());
        assert_eq!(segv.end, "<died: killed by signal 11>");
        assert!(!NodeObservation::Other("x".to_string()).is_terminal());
    }

    #[test]
    fn what_the_vocabulary_cannot_say_stays_visible() {
        let out = read(&run(
            "# start\nexecution-async-resource # 0\n=> executionAsyncResource = other:object:Foo\nnot a line of the trace\nno-such-op # 1\n",
            "",
            Some(0),
            None,
        ));
        assert!(matches!(
            &out.groups[&0][..],
            [NodeObservation::Other(_), NodeObservation::Other(_)]
        ));
        // An op line the trace parser does not read is kept, by its index.
        assert!(matches!(&out.groups[&1][..], [NodeObservation::Other(_)]));
        assert!(!out.ops.contains_key(&1));
        let out = read(&run("", "SyntaxError\n", Some(1), None));
        assert!(!out.started);
        assert_eq!(
            out.before_first,
            vec![NodeObservation::Known(Observation::Exit(1))]
        );
    }
}
