//! The lockstep runner: every op applied to the eager model and to the lazy
//! implementation, all observations compared after every op.

use lazy::Lazy;
use model::vocab::{Observation, Op, OpError, Runtime};
use model::Eager;
use serde::Serialize;
use std::fmt;

/// What one side answered to one op.
pub type Answer = Result<Vec<Observation>, OpError>;

/// The first op where the two sides differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// Index of the op in the trace (0-based).
    pub index: usize,
    /// The op.
    pub op: Op,
    /// What the eager model answered.
    pub eager: Answer,
    /// What the lazy implementation answered.
    pub lazy: Answer,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "first divergence at op {} `{}`:",
            self.index + 1,
            self.op
        )?;
        for (side, answer) in [("eager", &self.eager), ("lazy ", &self.lazy)] {
            match answer {
                Ok(obs) if obs.is_empty() => writeln!(f, "  {side}: (nothing)")?,
                Ok(obs) => {
                    let text: Vec<String> = obs.iter().map(|o| o.to_string()).collect();
                    writeln!(f, "  {side}: {}", text.join("; "))?
                }
                Err(e) => writeln!(f, "  {side}: {e}")?,
            }
        }
        Ok(())
    }
}

/// One op run on both sides with equal answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The op.
    pub op: Op,
    /// The answer both sides gave.
    pub answer: Answer,
}

/// Both implementations, side by side.
#[derive(Clone, Debug, Default)]
pub struct Pair {
    /// The eager reference model.
    pub eager: Eager,
    /// The lazy implementation under test.
    pub lazy: Lazy,
}

impl Pair {
    /// Both sides at the start of the main script.
    pub fn new() -> Self {
        Pair {
            eager: Eager::new(),
            lazy: Lazy::new(),
        }
    }

    /// Apply `op` to both; `Err` with both answers when they differ.
    pub fn step(&mut self, op: &Op) -> Result<Answer, (Answer, Answer)> {
        let e = self.eager.apply(op);
        let l = self.lazy.apply(op);
        if e == l {
            Ok(e)
        } else {
            Err((e, l))
        }
    }
}

/// Run `ops` in lockstep from the start, up to the first divergence or the
/// end of the trace. Ops both sides reject are kept (with their error) so the
/// caller can report them.
pub fn run(ops: &[Op]) -> Result<Vec<Step>, Divergence> {
    let mut pair = Pair::new();
    let mut steps = Vec::with_capacity(ops.len());
    for (index, op) in ops.iter().enumerate() {
        match pair.step(op) {
            Ok(answer) => steps.push(Step {
                op: op.clone(),
                answer,
            }),
            Err((eager, lazy)) => {
                return Err(Divergence {
                    index,
                    op: op.clone(),
                    eager,
                    lazy,
                })
            }
        }
    }
    Ok(steps)
}
