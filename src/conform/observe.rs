//! Reading a node run back: the JSON lines, the markers, and how the process
//! ended, as [`Observation`]s in the model's numbering.

use super::harness::NodeRun;
use model::vocab::{
    AlsId, AsyncId, FailedCheck, HookEvent, HookId, Observation, ResourceId, ResourceView,
    StoreValue,
};
use serde_json::Value;
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
    /// Observations after `{"k":"start"}` and before the first marker
    /// (there should be none).
    pub before_first: Vec<NodeObservation>,
    /// The runtime prologue finished (`{"k":"start"}` was seen).
    pub started: bool,
    /// What happened after the main script's scope closed (the event loop),
    /// as text: not compared.
    pub epilogue: Vec<String>,
    /// Node's id for each id the model handed out, from the `assign` lines.
    pub renamed: Vec<(AsyncId, AsyncId)>,
    /// How the process ended, in words.
    pub end: String,
}

fn as_id(v: Option<&Value>) -> Option<AsyncId> {
    let f = v?.as_f64()?;
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Some(f as AsyncId)
    } else {
        None
    }
}

/// `A<n>`, an `AsyncLocalStorage` of the trace.
fn als_name(v: Option<&Value>) -> Result<AlsId, String> {
    let a = v.and_then(Value::as_str).unwrap_or("");
    a.strip_prefix('A')
        .and_then(|n| n.parse::<u32>().ok())
        .map(AlsId)
        .ok_or_else(|| format!("AsyncLocalStorage name {a:?}"))
}

/// A store the trace gave (a `u32`); anything else is named as it is.
fn store_value(v: &Value) -> Result<StoreValue, String> {
    v.as_u64()
        .and_then(|n| StoreValue::try_from(n).ok())
        .ok_or_else(|| format!("a store that no op of the trace gave: {v}"))
}

struct Renamer {
    node_to_model: HashMap<AsyncId, AsyncId>,
}

impl Renamer {
    fn id(&self, v: Option<&Value>) -> Result<AsyncId, String> {
        let id = as_id(v).ok_or_else(|| format!("not an integer id: {v:?}"))?;
        Ok(self.map(id))
    }

    fn map(&self, id: AsyncId) -> AsyncId {
        self.node_to_model.get(&id).copied().unwrap_or(id)
    }

    fn resource(&self, v: Option<&Value>) -> Result<ResourceView, String> {
        let s = v.and_then(Value::as_str).ok_or("missing resource")?;
        match s {
            "undefined" => Ok(ResourceView::Undefined),
            "top" => Ok(ResourceView::TopLevel),
            "main" => Ok(ResourceView::Main),
            "process" => Ok(ResourceView::Process),
            _ => {
                if let Some(n) = s.strip_prefix('R').and_then(|n| n.parse::<u32>().ok()) {
                    return Ok(ResourceView::Resource(ResourceId(n)));
                }
                if let Some(id) = s.strip_prefix("tick:").and_then(|n| n.parse::<f64>().ok()) {
                    if id.fract() == 0.0 {
                        return Ok(ResourceView::TickObject(self.map(id as AsyncId)));
                    }
                }
                for (prefix, view) in [
                    (
                        "microtask:",
                        ResourceView::Microtask as fn(AsyncId) -> ResourceView,
                    ),
                    ("promise:", ResourceView::Promise),
                ] {
                    if let Some(id) = s.strip_prefix(prefix).and_then(|n| n.parse::<f64>().ok()) {
                        if id.fract() == 0.0 {
                            return Ok(view(self.map(id as AsyncId)));
                        }
                    }
                }
                if let Some(id) = s
                    .strip_prefix("immediate:")
                    .and_then(|n| n.parse::<f64>().ok())
                {
                    if id.fract() == 0.0 {
                        return Ok(ResourceView::Immediate(self.map(id as AsyncId)));
                    }
                }
                Err(format!("resource {s}"))
            }
        }
    }

    fn line(&self, v: &Value) -> Result<Observation, String> {
        let k = v.get("k").and_then(Value::as_str).unwrap_or("");
        match k {
            "eid" => Ok(Observation::ExecutionAsyncId(self.id(v.get("v"))?)),
            "tid" => Ok(Observation::TriggerAsyncId(self.id(v.get("v"))?)),
            "dtid" => Ok(Observation::DefaultTriggerAsyncId(self.id(v.get("v"))?)),
            "new" => Ok(Observation::NewAsyncId(self.id(v.get("v"))?)),
            "ear" => Ok(Observation::ExecutionAsyncResource(
                self.resource(v.get("r"))?,
            )),
            "tick" => Ok(Observation::Tick {
                async_id: self.id(v.get("id"))?,
                execution_async_id: self.id(v.get("e"))?,
                trigger_async_id: self.id(v.get("t"))?,
                resource: match v.get("r") {
                    None => None,
                    Some(r) => Some(self.resource(Some(r))?),
                },
            }),
            "store" => Ok(Observation::Store {
                als: als_name(v.get("a"))?,
                value: match v.get("v") {
                    None | Some(Value::Null) => None,
                    Some(x) => Some(store_value(x)?),
                },
            }),
            "tickstore" => Ok(Observation::TickStore {
                async_id: self.id(v.get("id"))?,
                als: als_name(v.get("a"))?,
                value: store_value(v.get("v").unwrap_or(&Value::Null))?,
            }),
            "rej" => Ok(Observation::UnhandledRejection {
                execution_async_id: self.id(v.get("e"))?,
                trigger_async_id: self.id(v.get("t"))?,
            }),
            "micro" => Ok(Observation::Microtask {
                promise: v.get("p").and_then(Value::as_u64) == Some(1),
                execution_async_id: self.id(v.get("e"))?,
                trigger_async_id: self.id(v.get("t"))?,
            }),
            "hook" => {
                let h = v.get("h").and_then(Value::as_str).unwrap_or("");
                let hook = h
                    .strip_prefix('H')
                    .and_then(|n| n.parse::<u32>().ok())
                    .map(HookId)
                    .ok_or_else(|| format!("hook name {h}"))?;
                let async_id = self.id(v.get("id"))?;
                let ev = v.get("ev").and_then(Value::as_str).unwrap_or("");
                let event = match ev {
                    "init" => {
                        let type_name = v
                            .get("type")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let resource = self.resource(v.get("r")).map_err(|e| {
                            format!("{hook}.init({async_id}, {type_name}, ..) with {e} in the hook")
                        })?;
                        HookEvent::Init {
                            async_id,
                            type_name,
                            trigger_async_id: self.id(v.get("trig"))?,
                            resource,
                        }
                    }
                    "before" => HookEvent::Before(async_id),
                    "after" => HookEvent::After(async_id),
                    "destroy" => HookEvent::Destroy(async_id),
                    "promiseResolve" => HookEvent::PromiseResolve(async_id),
                    other => return Err(format!("{hook}.{other}({async_id})")),
                };
                Ok(Observation::Hook {
                    hook,
                    event,
                    execution_async_id: self.id(v.get("e"))?,
                    trigger_async_id: self.id(v.get("t"))?,
                })
            }
            _ => Err(format!("unreadable line {v}")),
        }
    }
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
const CHECKS: &[(&str, FailedCheck)] = &[
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
        if run.code == Some(1) {
            return Some(NodeObservation::Known(Observation::CorruptedStack {
                actual: renamer.map(actual),
                expected: renamer.map(expected),
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
    if let Some(sig) = run.signal {
        return Some(NodeObservation::Death(format!("killed by signal {sig}")));
    }
    match run.code {
        Some(0) | None => None,
        Some(code) => Some(NodeObservation::Known(Observation::Exit(code))),
    }
}

/// Read a run: stdout's JSON lines, split at the markers, with node's ids
/// renamed to the model's; the process's end appended to the last group (or
/// to the epilogue if the event loop had started).
pub fn read(run: &NodeRun) -> NodeOutput {
    let mut out = NodeOutput::default();
    let lines: Vec<Result<Value, String>> = run
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).map_err(|_| format!("unreadable line {l:?}")))
        .collect();
    let mut node_to_model = HashMap::new();
    for v in lines.iter().flatten() {
        if v.get("k").and_then(Value::as_str) == Some("assign") {
            if let (Some(m), Some(n)) = (as_id(v.get("m")), as_id(v.get("v"))) {
                node_to_model.insert(n, m);
                out.renamed.push((m, n));
            }
        }
    }
    let renamer = Renamer { node_to_model };
    let mut current: Option<usize> = None;
    let mut in_loop = false;
    for line in &lines {
        let v = match line {
            Ok(v) => v,
            Err(e) => {
                let o = NodeObservation::Other(e.clone());
                push(&mut out, current, in_loop, o);
                continue;
            }
        };
        if let Some(op) = as_id(v.get("op")) {
            let op = op.max(0) as usize;
            out.groups.entry(op).or_default();
            current = Some(op);
            continue;
        }
        match v.get("k").and_then(Value::as_str) {
            Some("start") => {
                out.started = true;
                continue;
            }
            Some("assign") => continue,
            Some("loop") => {
                in_loop = true;
                continue;
            }
            _ => {}
        }
        if in_loop {
            out.epilogue.push(v.to_string());
            continue;
        }
        let o = match renamer.line(v) {
            Ok(o) => NodeObservation::Known(o),
            Err(e) => NodeObservation::Other(e),
        };
        push(&mut out, current, in_loop, o);
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
            push(&mut out, current, false, t);
        }
    }
    out
}

fn push(out: &mut NodeOutput, current: Option<usize>, in_loop: bool, o: NodeObservation) {
    if in_loop {
        out.epilogue.push(o.to_string());
        return;
    }
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
    fn groups_renaming_and_the_corrupted_stack() {
        let out = read(&run(
            concat!(
                "{\"k\":\"start\"}\n{\"op\":0}\n{\"k\":\"new\",\"v\":7}\n{\"k\":\"assign\",\"m\":2,\"v\":7}\n",
                "{\"op\":1}\n{\"k\":\"hook\",\"h\":\"H1\",\"ev\":\"after\",\"id\":7,\"e\":1,\"t\":0}\n"
            ),
            "Error: async hook stack has become corrupted (actual: 1, expected: 7)\n",
            Some(1),
            None,
        ));
        assert!(out.started);
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
                    expected: 2
                }),
            ]
        );
        assert_eq!(out.renamed, vec![(2, 7)]);
    }

    #[test]
    fn checks_exits_and_the_epilogue() {
        let out = read(&run(
            "{\"k\":\"start\"}\n{\"op\":0}\n",
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
            "{\"k\":\"start\"}\n{\"op\":0}\n",
            "Error: boom\n",
            Some(1),
            None,
        ));
        assert_eq!(
            out.groups[&0],
            vec![NodeObservation::Known(Observation::Exit(1))]
        );
        let out = read(&run(
            "{\"k\":\"start\"}\n{\"op\":0}\n{\"k\":\"loop\"}\n{\"k\":\"eid\",\"v\":3}\n",
            "",
            Some(0),
            None,
        ));
        assert_eq!(out.groups[&0], vec![]);
        assert_eq!(out.epilogue.len(), 1);
    }

    #[test]
    fn deaths_outside_the_vocabulary_are_named() {
        let check = read(&run(
            "{\"k\":\"start\"}\n{\"op\":0}\n",
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
            "{\"k\":\"start\"}\n{\"op\":0}\n",
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
        let segv = read(&run("{\"k\":\"start\"}\n{\"op\":0}\n", "", None, Some(11)));
        assert!(segv.groups[&0][0].is_terminal());
        assert_eq!(segv.end, "<died: killed by signal 11>");
        assert!(!NodeObservation::Other("x".to_string()).is_terminal());
    }

    #[test]
    fn what_the_vocabulary_cannot_say_stays_visible() {
        let out = read(&run(
            "{\"k\":\"start\"}\n{\"op\":0}\n{\"k\":\"ear\",\"r\":\"other:object:Foo\"}\nnot json\n",
            "",
            Some(0),
            None,
        ));
        assert!(matches!(
            &out.groups[&0][..],
            [NodeObservation::Other(_), NodeObservation::Other(_)]
        ));
        let out = read(&run("", "SyntaxError\n", Some(1), None));
        assert!(!out.started);
        assert_eq!(
            out.before_first,
            vec![NodeObservation::Known(Observation::Exit(1))]
        );
    }
}
