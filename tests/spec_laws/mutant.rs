//! Broken runtimes: the eager model with one [`Defect`]; each law must
//! catch one.

use model::vocab::{AsyncId, Cost, Observation, Op, OpError, Runtime};
use model::Eager;

/// How a [`Mutant`] departs from the eager model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Defect {
    /// Every native close also leaves a JS context (999) on the stack.
    LeakyClose,
    /// `clearAsyncIdStack()` does nothing.
    NoClear,
    /// `nextTick` is called from inside a JS context 77.
    TickInJsContext,
    /// A default-trigger scope installs its id plus one.
    OffByOneDefaultTrigger,
    /// Every third `newAsyncId()` reports the previous id again.
    RepeatingIds,
    /// The process runs with `--no-force-async-hooks-checks`.
    NoForcedChecks,
}

/// The eager model with one [`Defect`].
pub(super) struct Mutant {
    inner: Eager,
    defect: Defect,
    started: bool,
    new_ids: u32,
    last_id: AsyncId,
}

impl Mutant {
    pub(super) fn new(defect: Defect) -> Self {
        Mutant {
            inner: Eager::new(),
            defect,
            started: false,
            new_ids: 0,
            last_id: 0,
        }
    }
}

impl Runtime for Mutant {
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        if !self.started {
            self.started = true;
            if self.defect == Defect::NoForcedChecks && *op != Op::NoForceAsyncHooksChecks {
                self.inner.apply(&Op::NoForceAsyncHooksChecks)?;
            }
        }
        match (self.defect, op) {
            (Defect::LeakyClose, Op::CloseScope { .. }) => {
                let mut obs = self.inner.apply(op)?;
                if !obs.iter().any(Observation::is_terminal) && self.inner.js_running() {
                    obs.extend(self.inner.apply(&Op::EmitBefore {
                        async_id: 999,
                        trigger_async_id: 0,
                        resource: None,
                    })?);
                }
                Ok(obs)
            }
            (Defect::NoClear, Op::ClearAsyncIdStack) => Ok(Vec::new()),
            (Defect::TickInJsContext, Op::NextTick { .. }) => {
                let mut obs = self.inner.apply(&Op::EmitBefore {
                    async_id: 77,
                    trigger_async_id: 0,
                    resource: None,
                })?;
                obs.extend(self.inner.apply(op)?);
                obs.extend(self.inner.apply(&Op::EmitAfter { async_id: 77 })?);
                Ok(obs)
            }
            (Defect::OffByOneDefaultTrigger, Op::EnterDefaultTriggerScope { trigger_async_id }) => {
                self.inner.apply(&Op::EnterDefaultTriggerScope {
                    trigger_async_id: trigger_async_id + 1,
                })
            }
            (Defect::RepeatingIds, Op::NewAsyncId) => {
                let obs = self.inner.apply(op)?;
                self.new_ids += 1;
                let Some(Observation::NewAsyncId(id)) = obs.first().cloned() else {
                    return Ok(obs);
                };
                let shown = if self.new_ids == 3 {
                    self.new_ids = 0;
                    self.last_id
                } else {
                    id
                };
                self.last_id = id;
                Ok(vec![Observation::NewAsyncId(shown)])
            }
            _ => self.inner.apply(op),
        }
    }

    fn cost(&self) -> Cost {
        self.inner.cost()
    }
}
