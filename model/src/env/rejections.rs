//! Unhandled promise rejections (`lib/internal/process/promises.js`): V8's
//! promise reject callback (`promiseRejectHandler`, then
//! `unhandledRejection`), `tickInfo[kHasRejectionToWarn]`, and
//! `processPromiseRejections`, which `processTicksAndRejections` calls
//! after its microtasks. The program has an `unhandledRejection` listener,
//! so a rejection is reported to it and nothing throws.

use super::microtasks::PromiseIds;
use super::resources::{NativeSlot, ScopeSerial};
use super::{not_in_family, AsyncIdStack, Died, Environment, Refusal};
use crate::vocab::{Observation, Op, ResourceView};

/// The rejections not reported yet, and the flag that makes an outermost
/// `Close` call the tick callback with no tick queued.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rejections {
    /// `pendingUnhandledRejections`: each rejected promise's ids, if
    /// `trackPromise` gave it some.
    pub pending: Vec<PromiseIds>,
    /// `tickInfo[kHasRejectionToWarn]`.
    pub has_rejection_to_warn: bool,
}

impl<S: AsyncIdStack> Environment<S> {
    /// When `promise-reject` can happen: whenever JavaScript can run
    /// ([`Environment::enabled`] asks that).
    #[inline]
    pub(super) fn rejections_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::PromiseReject => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What `promise-reject` does.
    #[inline]
    pub(super) fn rejections_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::PromiseReject => self.promise_reject(),
            _ => not_in_family(op),
        }
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `Promise.reject(reason)` with no handler: the promise's `init` and
    /// `settled` hooks (as for `Promise.resolve()`), then V8's reject
    /// callback (`kPromiseRejectWithNoHandler`), `PromiseRejectCallback`
    /// (`src/node_task_queue.cc`): for a promise with ids, a native
    /// `push_async_context(id, trigger, &promise_as_obj)` (with its CHECKs),
    /// the JS `unhandledRejection`, which records it in
    /// `pendingUnhandledRejections` and calls `setHasRejectionToWarn(true)`,
    /// and `pop_async_context(id)` when the id is still the current one.
    pub(crate) fn promise_reject(&mut self) -> Result<(), Died> {
        let ids = self.promise_init(None);
        let ids = self.promise_settled(ids);
        self.reject_callback_no_handler(ids)
    }

    /// V8's reject callback for a promise rejected with no handler
    /// (`kPromiseRejectWithNoHandler`), as [`Self::promise_reject`] describes
    /// it: `ids` are the promise's, if it was tracked.
    pub(crate) fn reject_callback_no_handler(&mut self, ids: PromiseIds) -> Result<(), Died> {
        if let Some((async_id, trigger_async_id)) = ids {
            // `&promise_as_obj`: a local of PromiseRejectCallback, gone (like
            // a returned scope's storage) once it returns; popped before.
            let slot = NativeSlot::Local(ResourceView::Promise(async_id), ScopeSerial::MAX);
            self.async_hooks
                .push_async_context(async_id, trigger_async_id, Some(slot))?;
        }
        self.rejections.pending.push(ids);
        self.rejections.has_rejection_to_warn = true;
        if let Some((async_id, _)) = ids {
            if self.async_hooks.async_id_fields.k_execution_async_id == async_id {
                S::pop_async_context(&mut self.async_hooks, async_id)?;
            }
        }
        Ok(())
    }

    /// `processPromiseRejections()`: for each pending rejection, in order,
    /// `pushAsyncContext(promiseAsyncId, promiseTriggerAsyncId, promise)`
    /// when the promise has ids, the `unhandledRejection` listener (which
    /// records what it sees), and `popAsyncContext(promiseAsyncId)` in the
    /// `finally`. Whether it reported any (`maybeScheduledTicksOrMicrotasks`).
    pub(crate) fn process_promise_rejections(&mut self) -> Result<bool, Died> {
        let pending = std::mem::take(&mut self.rejections.pending);
        for ids in &pending {
            if let Some((async_id, trigger_async_id)) = *ids {
                self.push_async_context_js(
                    async_id,
                    trigger_async_id,
                    Some(ResourceView::Promise(async_id)),
                )?;
            }
            let fields = &self.async_hooks.async_id_fields;
            self.out.push(Observation::UnhandledRejection {
                execution_async_id: fields.k_execution_async_id,
                trigger_async_id: fields.k_trigger_async_id,
            });
            if let Some((async_id, _)) = *ids {
                self.pop_async_context_js(async_id)?;
            }
        }
        Ok(!pending.is_empty())
    }
}
