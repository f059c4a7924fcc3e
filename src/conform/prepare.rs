//! A trace made ready for node: run on the eager model, decided op by op
//! ([`super::decide`]) for the binary, cut after the model's death, with a
//! close appended for every frame left open, and noted for the program
//! ([`super::emit::Plan`]).

use super::{emit, stack, Capabilities, ConformError, Decider, Unsupported};
use model::env::Frame;
use model::vocab::{Observation, Op, OpError};
use model::Eager;

/// A trace made ready for node: the model's run of it (cut after its
/// terminal observation, then a close for every frame it left open),
/// decided op by op ([`super::decide`]) and noted for the program ([`emit::Plan`]).
pub(super) struct Prepared {
    /// The ops node runs: the trace's (cut), then the closes appended.
    pub(super) ops: Vec<Op>,
    /// How many of `ops` are the trace's own.
    pub(super) given: usize,
    /// How many of the trace's ops were cut after the model's death.
    pub(super) cut: usize,
    /// The model's observations, op by op.
    pub(super) observations: Vec<Vec<Observation>>,
    /// What the program needs beyond the trace's text.
    pub(super) plan: emit::Plan,
    /// The deepest `kStackLength` the model reached.
    pub(super) max_stack_length: u32,
    /// An op ran with no frame open (after the main script's close).
    pub(super) after_main: bool,
    /// An op other than its close ran in a native scope whose callback's
    /// exception was handled.
    pub(super) js_after_handled_exception: bool,
    /// An uncaught exception was thrown in the ES module's body.
    pub(super) module_body_threw: bool,
    /// The first op node cannot express.
    refusal: Option<Unsupported>,
}

/// Run `input` on the model, on the binary's own node version, deciding each op
/// for the binary as it goes. The model's rejection of an op comes first
/// (the trace is not a Node program), but for an op only Node 26 has, which
/// on a v20 binary is the binary's refusal; then the first op node cannot
/// express. A trace nested deeper than node's stack holds is refused at the
/// op that gets there, before the model runs further.
pub(super) fn prepare(input: &[Op], capabilities: Capabilities) -> Result<Prepared, ConformError> {
    let max_nesting = stack::NodeStack::get().max_nesting();
    let mut env = Eager::for_version(capabilities.node_version);
    let mut decider = Decider::new(capabilities);
    let mut p = Prepared {
        ops: Vec::new(),
        given: 0,
        cut: 0,
        observations: Vec::new(),
        plan: emit::Plan::default(),
        max_stack_length: env.async_hooks.fields.k_stack_length,
        after_main: false,
        js_after_handled_exception: false,
        module_body_threw: false,
        refusal: None,
    };
    let fed = run_until_exit(&mut env, input, |env, op| {
        p.step(env, &mut decider, op.clone(), max_nesting)
    })?;
    p.cut = input.len() - fed;
    p.given = p.ops.len();
    close_open_frames(&mut env, |env, op| {
        p.step(env, &mut decider, op, max_nesting)
    })?;
    match p.refusal.take() {
        Some(u) => Err(ConformError::Unsupported(u)),
        None => Ok(p),
    }
}

/// Run `input`'s ops one by one on `env` with `step` until the model's
/// process exits (what follows its death never runs): how many ran.
pub fn run_until_exit<E>(
    env: &mut Eager,
    input: &[Op],
    mut step: impl FnMut(&mut Eager, &Op) -> Result<(), E>,
) -> Result<usize, E> {
    for (i, op) in input.iter().enumerate() {
        step(env, op)?;
        if env.exited {
            return Ok(i + 1);
        }
    }
    Ok(input.len())
}

/// Then end each frame the trace left open, innermost first (an exception
/// in flight first caught: `catch`), with `step`
/// (in Node, the functions return: the scopes close, the main script's
/// last), unless the process exited.
pub fn close_open_frames<E>(
    env: &mut Eager,
    mut step: impl FnMut(&mut Eager, Op) -> Result<(), E>,
) -> Result<(), E> {
    while let Some(op) = env.unwinding_op().filter(|_| !env.exited) {
        step(env, op)?;
    }
    Ok(())
}

impl Prepared {
    fn step(
        &mut self,
        env: &mut Eager,
        decider: &mut Decider,
        op: Op,
        max_nesting: usize,
    ) -> Result<(), ConformError> {
        let index = self.ops.len();
        if self.refusal.is_none() {
            self.refusal = decider.decide(env, &op).err();
        }
        self.plan.before(index, env, &op);
        self.after_main |= env.frames.is_empty();
        if matches!(op, Op::UncaughtException { .. }) {
            let job = env.catching_microtask().map(|i| &env.frames[i]);
            self.module_body_threw |= job.is_some_and(Frame::is_module_body);
        }
        if let Some(Frame::Native(scope)) = env.frames.last() {
            self.js_after_handled_exception |= scope.handled_exception && !op.closes_frame();
        }
        let observations = match decider.run(env, &op) {
            Ok(obs) => obs,
            Err(_) if op.needs_node26() && self.refusal.is_some() => {
                return Err(ConformError::Unsupported(
                    self.refusal.take().expect("is_some"),
                ));
            }
            Err(e) => {
                return Err(ConformError::ModelRejected {
                    index,
                    op: op.to_string(),
                    error: match e {
                        OpError::Impossible(why) => why,
                        other => other.to_string(),
                    },
                })
            }
        };
        self.plan.after(index, &op, env, &observations);
        let depth = decider.depth(env);
        if depth > max_nesting {
            let refusal = self
                .refusal
                .take()
                .unwrap_or_else(|| too_deep(index, &op, depth));
            return Err(ConformError::Unsupported(refusal));
        }
        self.max_stack_length = (self.max_stack_length).max(env.async_hooks.fields.k_stack_length);
        self.ops.push(op);
        self.observations.push(observations);
        Ok(())
    }
}

/// The refusal of op `index`, after which node's stack would hold `depth`
/// frames, more than it can.
fn too_deep(index: usize, op: &Op, depth: usize) -> Unsupported {
    let stack = stack::NodeStack::get();
    Unsupported {
        index,
        op: op.to_string(),
        reason: format!(
            "it opens frame {depth} (the main script's scope is the first); node runs with a {} MiB stack ({}), which holds {} nested frames at the {} KiB a frame may take",
            stack.bytes >> 20,
            if stack.bytes < stack::WANTED_STACK_BYTES {
                "the hard limit of this process's stack, `ulimit -Hs`"
            } else {
                "what the harness gives it"
            },
            stack.max_nesting(),
            stack::BYTES_PER_LEVEL >> 10
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_side_completes_and_cuts() {
        let v20 = Capabilities::default();
        let ops = vec![Op::OpenScope {
            kind: model::vocab::ScopeKind::CallbackScope,
            context: model::vocab::AsyncContext {
                async_id: 5,
                trigger_async_id: 1,
            },
            resource: model::vocab::NativeResource {
                id: model::vocab::ResourceId(1),
                holder: model::vocab::Holder::Local,
            },
            flags: model::vocab::ScopeFlags::default(),
        }];
        let run = prepare(&ops, v20).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(run.given, 1);
        assert_eq!(run.ops.len(), 3, "the scope's close and the main script's");
        let dies = vec![Op::EmitAfter { async_id: 9 }, Op::ExecutionAsyncId];
        let run = prepare(&dies, v20).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((run.given, run.cut, run.ops.len()), (1, 1, 1));
        assert!(matches!(
            prepare(&[Op::ExitRunInAsyncScope], v20),
            Err(ConformError::ModelRejected { index: 0, .. })
        ));
    }

    #[test]
    fn the_model_rejects_before_node_refuses_but_for_node_26_ops() {
        let v20 = Capabilities::default();
        // `stop` (op 0) cannot run on node; the model rejects op 1.
        let rejected = [Op::Stop, Op::ExitRunInAsyncScope];
        assert!(matches!(
            prepare(&rejected, v20),
            Err(ConformError::ModelRejected { index: 1, .. })
        ));
        // An op that node version 20 rejects: the binary's refusal.
        let als = [Op::AsyncResource(model::vocab::ResourceId(1))];
        match prepare(&als, v20) {
            Err(ConformError::Unsupported(u)) => {
                assert!(u.reason.contains("built on async hooks"), "{u}")
            }
            other => panic!("expected the binary's refusal, got {:?}", other.err()),
        }
    }
}
