//! The interface both implementations offer: apply an op, see what it shows.

use super::observation::Observation;
use super::op::Op;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why an op was not applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpError {
    /// The op cannot happen in Node in this state (closing with no scope
    /// open, JS running after the environment stopped, ...). The text says
    /// what was expected.
    Impossible(String),
    /// The process already ended (a terminal observation was seen).
    Exited,
    /// The implementation itself failed (a panic the harness caught): always
    /// a bug in the implementation, never Node behaviour.
    Internal(String),
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Impossible(why) => write!(f, "impossible op: {why}"),
            OpError::Exited => f.write_str("impossible op: the process has already exited"),
            OpError::Internal(why) => write!(f, "internal failure: {why}"),
        }
    }
}

impl std::error::Error for OpError {}

/// Work done, in units both implementations count the same way, so that
/// "the readers pay nothing" can be put in numbers. Counting never changes
/// behaviour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cost {
    /// Doubles written to `async_ids_stack_` (two per pushed pair).
    pub stack_writes: u64,
    /// Writes to the native or JS resource arrays (sets, pops, resizes,
    /// length changes).
    pub resource_writes: u64,
    /// Links and unlinks of lazy scopes in the chain (always 0 on the eager side).
    pub chain_writes: u64,
    /// Calls from JS into C++ bindings (`pushAsyncContext_`,
    /// `popAsyncContext_`, `executionAsyncResource_`, `clearAsyncIdStack`)
    /// and from C++ into JS (hook emits, the trampoline, the tick callback).
    pub crossings: u64,
    /// Growths of the id stack or the native resource vector.
    pub allocations: u64,
}

impl std::ops::Sub for Cost {
    type Output = Cost;
    fn sub(self, o: Cost) -> Cost {
        Cost {
            stack_writes: self.stack_writes - o.stack_writes,
            resource_writes: self.resource_writes - o.resource_writes,
            chain_writes: self.chain_writes - o.chain_writes,
            crossings: self.crossings - o.crossings,
            allocations: self.allocations - o.allocations,
        }
    }
}

/// A Node.js environment that executes ops: the eager model and the lazy
/// implementation both implement it, and the lockstep harness drives both.
pub trait Runtime {
    /// Apply one op; return what the program saw, in order. After a
    /// terminal observation every further op is `Err(OpError::Exited)`.
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError>;
    /// The work done so far.
    fn cost(&self) -> Cost;
}
