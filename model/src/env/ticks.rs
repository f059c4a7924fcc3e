//! `process.nextTick` and `processTicksAndRejections`
//! (`lib/internal/process/task_queues.js`).

use super::context_frame::ContextFrame;
use super::{AsyncIdStack, Died, Environment};
use crate::vocab::{AsyncId, Observation, ResourceView};
use std::collections::VecDeque;

/// A queued tick object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TickObject {
    /// `tickObject[async_id_symbol]`.
    pub async_id: AsyncId,
    /// `tickObject[trigger_async_id_symbol]`.
    pub trigger_async_id: AsyncId,
    /// The callback also calls `executionAsyncResource()`.
    pub query_resource: bool,
    /// `this[async_context_frame] = AsyncContextFrame.current()` (Node 26).
    pub context_frame: ContextFrame,
}

/// The tick `queue` and `tickInfo[kHasTickScheduled]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TickQueue {
    /// `queue` (a `FixedQueue`).
    pub queue: VecDeque<TickObject>,
    /// `tickInfo[kHasTickScheduled]`.
    pub has_tick_scheduled: bool,
}

impl<S: AsyncIdStack> Environment<S> {
    /// `nextTick(callback)`: capture `newAsyncId()` and
    /// `getDefaultTriggerAsyncId()`, emit init (`TickObject`), queue it.
    pub(crate) fn next_tick(&mut self, query_resource: bool) {
        if self.ticks.queue.is_empty() {
            self.ticks.has_tick_scheduled = true;
        }
        let async_id = self.new_async_id();
        let trigger_async_id = self.get_default_trigger_async_id();
        if self.async_hooks.fields.k_init > 0 {
            self.emit_init_native(
                async_id,
                "TickObject",
                trigger_async_id,
                ResourceView::TickObject(async_id),
            );
        }
        self.ticks.queue.push_back(TickObject {
            async_id,
            trigger_async_id,
            query_resource,
            context_frame: self.context_frame.clone(),
        });
    }

    /// `processTicksAndRejections()`: each tick between `emitBefore` and
    /// `emitAfter`, with `emitDestroy` in the `finally` when destroy hooks
    /// exist; on Node 26 in its own frame, exchanged in before `emitBefore`
    /// and the prior one set back after `emitAfter`.
    pub(crate) fn process_ticks_and_rejections(&mut self) -> Result<(), Died> {
        while let Some(tock) = self.ticks.queue.pop_front() {
            let async_id = tock.async_id;
            let prior_context_frame =
                std::mem::replace(&mut self.context_frame, tock.context_frame);
            self.emit_before_script(
                async_id,
                tock.trigger_async_id,
                Some(ResourceView::TickObject(async_id)),
            )?;
            let ids = &self.async_hooks.async_id_fields;
            let (execution_async_id, trigger_async_id) =
                (ids.k_execution_async_id, ids.k_trigger_async_id);
            let resource = tock.query_resource.then(|| self.execution_async_resource());
            self.out.push(Observation::Tick {
                async_id,
                execution_async_id,
                trigger_async_id,
                resource,
            });
            for (als, value) in self.context_frame.iter() {
                self.out.push(Observation::TickStore {
                    async_id,
                    als,
                    value,
                });
            }
            if self.async_hooks.fields.k_destroy > 0 {
                self.emit_destroy_script(async_id);
            }
            self.emit_after_script(async_id)?;
            self.context_frame = prior_context_frame;
        }
        self.ticks.has_tick_scheduled = false;
        Ok(())
    }
}
