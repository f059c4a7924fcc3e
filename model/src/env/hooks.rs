//! `AsyncHook` (`lib/async_hooks.js`) and the hook emitters
//! (`lib/internal/async_hooks.js` `emitHook`, `emitInitNative`; `AsyncWrap::EmitBefore`
//! / `EmitAfter` in `src/async_wrap.cc`).

use super::{not_in_family, AsyncIdStack, Died, Environment, Refusal};
use crate::vocab::{AsyncId, HookCallbacks, HookEvent, HookId, Observation, Op, ResourceView};
use std::collections::BTreeMap;

/// The hooks a program created, and `active_hooks.array` in enable order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hooks {
    /// Every `createHook` result, by name.
    pub created: BTreeMap<HookId, HookCallbacks>,
    /// `active_hooks.array`.
    pub active: Vec<HookId>,
    /// `env->async_hooks_callback_trampoline()` is set: between
    /// `enableHooks()` and `disableHooks()` (`setCallbackTrampoline`).
    pub trampoline_installed: bool,
}

impl Hooks {
    /// The callbacks of an active hook: one the program created, or v20's
    /// `storageHook` ([`STORAGE_HOOK`]).
    pub fn callbacks(&self, hook: HookId) -> HookCallbacks {
        if hook == STORAGE_HOOK {
            return STORAGE_HOOK_CALLBACKS;
        }
        self.created[&hook]
    }
}

/// v20's `storageHook` (`lib/async_hooks.js`), the init hook of
/// `AsyncLocalStorage` (`super::async_local_storage`), in `active_hooks.array`
/// while a storage is enabled; no trace names it.
pub const STORAGE_HOOK: HookId = HookId(u32::MAX);

/// `storageHook`'s callbacks: `createHook({ init })`.
pub const STORAGE_HOOK_CALLBACKS: HookCallbacks = HookCallbacks {
    init: true,
    before: false,
    after: false,
    destroy: false,
    promise_resolve: false,
};

/// The callback a hook emitter calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookKind {
    /// `before_symbol`.
    Before,
    /// `after_symbol`.
    After,
    /// `destroy_symbol`.
    Destroy,
}

impl<S: AsyncIdStack> Environment<S> {
    /// When a hook op can happen, beyond what [`Environment::enabled`] asks
    /// of every op (it is JavaScript): a hook is created once, and enabled
    /// or disabled once created.
    #[inline]
    pub(super) fn hooks_enabled<'op>(&self, op: &'op Op) -> Result<(), Refusal<'op>> {
        match op {
            Op::CreateHook { hook, .. } if *hook == STORAGE_HOOK => {
                Err(Refusal::HookReserved(*hook))
            }
            Op::CreateHook { hook, .. } if self.hooks.created.contains_key(hook) => {
                Err(Refusal::HookExists(*hook))
            }
            Op::EnableHook(hook) | Op::DisableHook(hook)
                if !self.hooks.created.contains_key(hook) =>
            {
                Err(Refusal::HookMissing(*hook))
            }
            Op::CreateHook { .. } | Op::EnableHook(_) | Op::DisableHook(_) => Ok(()),
            _ => not_in_family(op),
        }
    }

    /// What a hook op does.
    #[inline]
    pub(super) fn hooks_effect(&mut self, op: &Op) -> Result<(), Died> {
        match op {
            Op::CreateHook { hook, callbacks } => self.create_hook(*hook, *callbacks),
            Op::EnableHook(h) => self.enable_hook(*h),
            Op::DisableHook(h) => self.disable_hook(*h),
            _ => not_in_family(op),
        }
        Ok(())
    }
}

impl<S: AsyncIdStack> Environment<S> {
    /// `createHook(callbacks)`: `new AsyncHook`; not enabled.
    pub(crate) fn create_hook(&mut self, hook: HookId, callbacks: HookCallbacks) {
        self.hooks.created.insert(hook, callbacks);
    }

    /// The callbacks of `hook`, which `enabled` checked was created.
    fn hook_callbacks(&self, hook: HookId) -> HookCallbacks {
        self.hooks.callbacks(hook)
    }

    /// `AsyncHook.prototype.enable`: add the hook's callbacks to the counts
    /// ([`Self::add_hook_callbacks`]) and the hook to `active_hooks.array`.
    pub(crate) fn enable_hook(&mut self, hook: HookId) {
        let cb = self.hook_callbacks(hook);
        if self.hooks.active.contains(&hook) {
            return;
        }
        self.hooks.active.push(hook);
        self.add_hook_callbacks(cb);
    }

    /// The counts part of `AsyncHook.prototype.enable`, for a hook with the
    /// callbacks `cb` (one of the program's, or v20's `storageHook`): add
    /// them to the counts; `enableHooks()` on the `kTotals` 0 → non-zero
    /// edge (`kCheck += 1`, the trampoline is installed); then
    /// `updatePromiseHookMode()`.
    pub(crate) fn add_hook_callbacks(&mut self, cb: HookCallbacks) {
        let f = &mut self.async_hooks.fields;
        let prev_totals = f.k_totals;
        f.k_init += cb.init as u32;
        f.k_before += cb.before as u32;
        f.k_after += cb.after as u32;
        f.k_destroy += cb.destroy as u32;
        f.k_promise_resolve += cb.promise_resolve as u32;
        f.k_totals = f.k_init + f.k_before + f.k_after + f.k_destroy + f.k_promise_resolve;
        if prev_totals == 0 && f.k_totals > 0 {
            f.k_check += 1;
            self.hooks.trampoline_installed = true;
        }
        self.update_promise_hook_mode();
    }

    /// `AsyncHook.prototype.disable`: the reverse
    /// ([`Self::remove_hook_callbacks`]).
    pub(crate) fn disable_hook(&mut self, hook: HookId) {
        let cb = self.hook_callbacks(hook);
        let Some(index) = self.hooks.active.iter().position(|h| *h == hook) else {
            return;
        };
        self.hooks.active.remove(index);
        self.remove_hook_callbacks(cb);
    }

    /// The counts part of `AsyncHook.prototype.disable`: subtract `cb`;
    /// `disableHooks()` on the non-zero → 0 edge (`kCheck -= 1`, the
    /// trampoline is removed, the promise hook disabled later).
    pub(crate) fn remove_hook_callbacks(&mut self, cb: HookCallbacks) {
        let f = &mut self.async_hooks.fields;
        let prev_totals = f.k_totals;
        f.k_init -= cb.init as u32;
        f.k_before -= cb.before as u32;
        f.k_after -= cb.after as u32;
        f.k_destroy -= cb.destroy as u32;
        f.k_promise_resolve -= cb.promise_resolve as u32;
        f.k_totals = f.k_init + f.k_before + f.k_after + f.k_destroy + f.k_promise_resolve;
        if prev_totals > 0 && f.k_totals == 0 {
            f.k_check -= 1;
            self.hooks.trampoline_installed = false;
            self.disable_promise_hook_later();
        }
    }

    pub(crate) fn observe_hook(&mut self, hook: HookId, event: HookEvent) {
        let ids = &self.async_hooks.async_id_fields;
        self.out.push(Observation::Hook {
            hook,
            event,
            execution_async_id: ids.k_execution_async_id,
            trigger_async_id: ids.k_trigger_async_id,
        });
    }

    /// `emitHook(symbol, asyncId)` (`emitBeforeNative`, `emitAfterNative`,
    /// `emitDestroyNative`): every active hook with that callback, in order.
    pub(crate) fn emit_hook(&mut self, kind: HookKind, async_id: AsyncId) {
        for hook in self.hooks.active.clone() {
            let cb = self.hooks.callbacks(hook);
            let (has, event) = match kind {
                HookKind::Before => (cb.before, HookEvent::Before(async_id)),
                HookKind::After => (cb.after, HookEvent::After(async_id)),
                HookKind::Destroy => (cb.destroy, HookEvent::Destroy(async_id)),
            };
            if has {
                self.observe_hook(hook, event);
            }
        }
    }

    /// `emitInitNative(asyncId, type, triggerAsyncId, resource)`: the init
    /// of every active hook in order, v20's `storageHook` among them
    /// ([`Self::storage_hook_init`]), which observes nothing. An init that
    /// throws is `fatalError` ([`Self::fatal_error`]): the hooks after it
    /// do not run.
    pub(crate) fn emit_init_native(
        &mut self,
        async_id: AsyncId,
        type_name: &str,
        trigger_async_id: AsyncId,
        resource: ResourceView,
    ) {
        for hook in self.hooks.active.clone() {
            if hook == STORAGE_HOOK {
                if self.storage_hook_init(resource).is_err() {
                    self.fatal_error();
                    return;
                }
            } else if self.hooks.created[&hook].init {
                let event = HookEvent::Init {
                    async_id,
                    type_name: type_name.to_string(),
                    trigger_async_id,
                    resource,
                };
                self.observe_hook(hook, event);
            }
        }
    }

    /// `AsyncWrap::EmitBefore` (`src/async_wrap.cc`): C++ calls into JS only
    /// while `kBefore` is non-zero.
    pub(crate) fn async_wrap_emit_before(&mut self, async_id: AsyncId) {
        if self.async_hooks.fields.k_before == 0 {
            return;
        }
        self.async_hooks.cost.crossings += 1;
        self.emit_hook(HookKind::Before, async_id);
    }

    /// `AsyncWrap::EmitAfter` (`src/async_wrap.cc`).
    pub(crate) fn async_wrap_emit_after(&mut self, async_id: AsyncId) {
        if self.async_hooks.fields.k_after == 0 {
            return;
        }
        self.async_hooks.cost.crossings += 1;
        self.emit_hook(HookKind::After, async_id);
    }
}

#[cfg(test)]
mod tests {
    use super::STORAGE_HOOK;
    use crate::vocab::{HookCallbacks, NodeVersion, Op, OpError, Runtime};
    use crate::Eager;

    /// The id the model keeps for v20's `storageHook` is not a trace's
    /// hook: `create-hook` of it is refused (before issue 51 it was
    /// created, its `init` shown nowhere, and its `disable-hook` dropped
    /// the storage hook), and so are `enable-hook` / `disable-hook` of it.
    #[test]
    fn the_storage_hooks_id_is_not_a_traces_hook() {
        for version in [NodeVersion::V20, NodeVersion::V26] {
            let mut env = Eager::for_version(version);
            let callbacks = HookCallbacks {
                init: true,
                ..HookCallbacks::default()
            };
            let create = Op::CreateHook {
                hook: STORAGE_HOOK,
                callbacks,
            };
            match env.apply(&create) {
                Err(OpError::Impossible(why)) => assert!(why.contains("Node's own hook"), "{why}"),
                other => panic!("{version}: create-hook {STORAGE_HOOK} gave {other:?}"),
            }
            for op in [Op::EnableHook(STORAGE_HOOK), Op::DisableHook(STORAGE_HOOK)] {
                assert!(
                    matches!(env.apply(&op), Err(OpError::Impossible(_))),
                    "{version}: {op}"
                );
            }
        }
    }
}
