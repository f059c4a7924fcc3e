//! `setTimeout` and `processTimers` / `listOnTimeout`
//! (`lib/internal/timers.js`, `getTimerCallbacks`), run by
//! `Environment::RunTimers` (`src/env.cc`) in its bare scope
//! (`timers-scope`).
//!
//! Every `set-timeout` has a duration of its own, so a `TimersList` of its
//! own: the lists run oldest first, and `processTimers` calls `runNextTicks()`
//! before every list but the first it runs (a list whose Timeout threw
//! counts: it stays queued, empty, and the next `processTimers` takes it
//! first). Timeouts of one duration share a list, whose `listOnTimeout`
//! does the same between its timers; not written (one list per Timeout).
//! `enqueueRemoveStoresIfNotReinserted` (a throwing callback) queues a V8
//! microtask that no hook sees and that records nothing: not modelled.

use super::context_frame::ContextFrame;
use super::{not_in_family, AsyncIdStack, Died, Environment, Frame, Refusal};
use crate::vocab::{AsyncId, Observation, Op, OpKind, ResourceView};
use std::collections::VecDeque;

/// A waiting `Timeout` (`lib/internal/timers.js`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Timeout {
    /// `timer[async_id_symbol]`.
    pub async_id: AsyncId,
    /// `timer[trigger_async_id_symbol]`.
    pub trigger_async_id: AsyncId,
    /// `timer[async_context_frame] = AsyncContextFrame.current()`
    /// (`initAsyncResource`, Node 26).
    pub context_frame: ContextFrame,
    /// `timer._destroyed`: `clearTimeout` was called in its own callback
    /// (`unenroll`, `lib/timers.js`), which emitted its destroy.
    pub destroyed: bool,
}

/// The timer lists, as far as the ops reach them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Timers {
    /// The waiting Timeouts, in the order their lists expire (oldest first).
    pub waiting: VecDeque<Timeout>,
    /// A `processTimers` call is going on after a Timeout's callback
    /// returned (`end-timer` was the last op): how many of the Timeouts it
    /// found due are left. A `timer` op now is its next list, after
    /// `runNextTicks()`; any other op means it returned.
    pub call: Option<u32>,
    /// The list of a Timeout whose callback threw is still queued, empty
    /// (`listOnTimeout` never reached `timerListQueue.shift()`).
    pub stale_list: bool,
}

impl<S: AsyncIdStack> Environment<S> {
    /// When a timers op can happen, beyond what [`Environment::enabled`]
    /// asks of every op: `timer` in `RunTimers`' scope with a Timeout due
    /// (one that was waiting when this `processTimers` began) and, where
    /// `runNextTicks()` runs first, no tick or microtask with a body queued
    /// (the model does not stop `timer` half way); `end-timer` ends the
    /// innermost frame, a Timeout's callback.
    #[inline]
    pub(super) fn timers_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::SetTimeout => Ok(()),
            Op::ClearTimeout(id) => match self.timeout_running(*id) {
                Some(t) if t.destroyed => Err(Refusal::NoSuchTimeout(*id)),
                Some(_) => Ok(()),
                None if self.timers.waiting.iter().any(|t| t.async_id == *id) => Ok(()),
                None => Err(Refusal::NoSuchTimeout(*id)),
            },
            Op::Timer => {
                match self.frames.last() {
                    Some(Frame::Native(s)) if s.run_timers => {}
                    _ => return Err(Refusal::TimerOutsideRunTimers),
                }
                if self.timers.waiting.is_empty() {
                    return Err(Refusal::NoTimeoutWaiting);
                }
                if self.timer_runs_next_ticks() && self.body_queued() {
                    return Err(Refusal::TimerAfterBodyQueued);
                }
                Ok(())
            }
            Op::EndTimer => {
                self.innermost_is(OpKind::EndTimer, |f| matches!(f, Frame::Timer { .. }))
            }
            _ => not_in_family(op),
        }
    }

    /// What a timers op does.
    #[inline]
    pub(super) fn timers_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::SetTimeout => {
                self.set_timeout();
                Ok(())
            }
            Op::ClearTimeout(id) => {
                self.clear_timeout(*id);
                Ok(())
            }
            Op::Timer => self.run_timer(),
            Op::EndTimer => self.end_timer(),
            _ => not_in_family(op),
        }
    }

    /// The Timeout whose callback is running, if its id is `id`.
    fn timeout_running(&self, id: AsyncId) -> Option<&Timeout> {
        self.frames.iter().rev().find_map(|f| match f {
            Frame::Timer { timeout, .. } if timeout.async_id == id => Some(timeout),
            _ => None,
        })
    }

    /// `processTimers` calls `runNextTicks()` before the next list: it ran
    /// one already in this call, or the first it takes is a stale one.
    fn timer_runs_next_ticks(&self) -> bool {
        self.timers.call.is_some() || self.timers.stale_list
    }

    /// A tick or a microtask with a body is queued.
    fn body_queued(&self) -> bool {
        self.ticks.queue.iter().any(|t| t.body) || self.microtasks.has_body_queued()
    }

    /// `setTimeout(cb, ms)`: `new Timeout` runs `initAsyncResource(this,
    /// 'Timeout')` (`newAsyncId()`, `getDefaultTriggerAsyncId()`, the current
    /// frame on Node 26, `emitInit` when init hooks exist), then `insert`
    /// queues it.
    fn set_timeout(&mut self) {
        let (async_id, trigger_async_id, context_frame) =
            self.init_core_resource("Timeout", ResourceView::Timeout);
        self.timers.waiting.push_back(Timeout {
            async_id,
            trigger_async_id,
            context_frame,
            destroyed: false,
        });
    }

    /// `clearTimeout(timeout)` (`lib/timers.js`): `unenroll` marks it
    /// `_destroyed`, `emitDestroy`s its id when destroy hooks exist, and
    /// removes it and, as it is refed, its list, now empty (a due Timeout
    /// cleared by an earlier callback of this `processTimers` never runs).
    /// In its own callback: the `finally` then emits no second destroy.
    fn clear_timeout(&mut self, id: AsyncId) {
        if self.async_hooks.fields.k_destroy > 0 {
            self.emit_destroy_script(id);
        }
        let running = self.frames.iter_mut().rev().find_map(|f| match f {
            Frame::Timer {
                timeout, due_after, ..
            } => Some((timeout, due_after)),
            _ => None,
        });
        match running {
            Some((timeout, _)) if timeout.async_id == id => timeout.destroyed = true,
            running => {
                let waiting = &mut self.timers.waiting;
                let Some(at) = waiting.iter().position(|t| t.async_id == id) else {
                    unreachable!("enabled checked that Timeout {id} is waiting")
                };
                waiting.remove(at);
                if let Some((_, due_after)) = running.filter(|(_, due)| at < **due as usize) {
                    *due_after -= 1;
                }
            }
        }
    }

    /// `timer`: `processTimers(now)` takes the next list (after
    /// `runNextTicks()` when [`Self::timer_runs_next_ticks`]; a stale list
    /// is dropped on the way), and `listOnTimeout` its Timeout: exchange in
    /// its frame (Node 26), `emitBefore(asyncId, trigger, timer)`, call the
    /// callback (a [`Frame::Timer`]).
    fn run_timer(&mut self) -> Result<(), Died> {
        let due = match self.timers.call {
            Some(due) => due,
            None => self.timers.waiting.len() as u32,
        };
        if self.timer_runs_next_ticks() {
            self.run_next_ticks()?;
        }
        let timers = &mut *self.timers;
        timers.call = None;
        timers.stale_list = false;
        let Some(timeout) = timers.waiting.pop_front() else {
            unreachable!("enabled checked that a Timeout is waiting")
        };
        let prior_context_frame =
            std::mem::replace(&mut *self.context_frame, timeout.context_frame.clone());
        self.emit_before_script(
            timeout.async_id,
            timeout.trigger_async_id,
            Some(ResourceView::Timeout(timeout.async_id)),
        )?;
        let async_id = timeout.async_id;
        self.frames.push(Frame::Timer {
            timeout,
            due_after: due - 1,
            prior_context_frame,
        });
        self.timeout_sees(async_id);
        Ok(())
    }

    /// What the callback of a trace's Timeout records when it begins: the
    /// ids, then every storage's store (as a tick's does).
    fn timeout_sees(&mut self, async_id: AsyncId) {
        let ids = &self.async_hooks.async_id_fields;
        self.out.push(Observation::Timeout {
            async_id,
            execution_async_id: ids.k_execution_async_id,
            trigger_async_id: ids.k_trigger_async_id,
        });
        for (als, value) in self.stores_seen() {
            self.out.push(Observation::TimeoutStore {
                async_id,
                als,
                value,
            });
        }
    }

    /// `end-timer`: the callback returned. Its `finally` (`emitDestroy`, as
    /// the Timeout is not re-inserted), `emitAfter(asyncId)`,
    /// `AsyncContextFrame.set(priorContextFrame)`; `processTimers` goes on
    /// if a Timeout it found due is left. While the environment is
    /// stopping the callback was terminated instead: nothing of that runs,
    /// and `RunTimers` stops calling (`can_call_into_js()`).
    fn end_timer(&mut self) -> Result<(), Died> {
        let Some(Frame::Timer {
            timeout,
            due_after,
            prior_context_frame,
        }) = self.frames.pop()
        else {
            unreachable!("enabled checked that the innermost frame is a Timeout's callback")
        };
        if self.is_stopping {
            return Ok(());
        }
        self.timer_finally(&timeout);
        self.emit_after_script(timeout.async_id)?;
        *self.context_frame = prior_context_frame;
        self.timers.call = (due_after > 0).then_some(due_after);
        Ok(())
    }

    /// The `finally` of a Timeout's callback: unless `clearTimeout` marked
    /// it `_destroyed`, `emitDestroy(asyncId)`, which queues the id when
    /// destroy hooks exist (v20 asks `destroyHooksExist()` first; the same
    /// count).
    fn timer_finally(&mut self, timeout: &Timeout) {
        if !timeout.destroyed && self.async_hooks.fields.k_destroy > 0 {
            self.emit_destroy_script(timeout.async_id);
        }
    }

    /// The innermost frame, a Timeout's callback, threw: its `finally` runs
    /// (`emitDestroy`), not its `emitAfter` nor the frame's restore (they are
    /// not in a `finally`: the Timeout's frame stays current); the exception
    /// leaves `processTimers`, whose list stays queued, empty; it reaches
    /// `RunTimers`' `TryCatch` (the caller reports it).
    pub(crate) fn timer_threw(&mut self) {
        let Some(Frame::Timer { timeout, .. }) = self.frames.pop() else {
            unreachable!("the innermost frame is a Timeout's callback")
        };
        self.timer_finally(&timeout);
        let timers = &mut *self.timers;
        timers.stale_list = true;
        timers.call = None;
    }
}
