//! The two sides the explorer runs ([`Explorable`]), the reference one
//! among them ([`Reference`]: which ops are possible, what the letters
//! read off it), and what is normalised in each after every op.

use crate::canonical::RenameIds;
use crate::coverage::LazySide;
use lazy::mutant::Mutated;
use lazy::Lazy;
use model::env::AsyncIdStack;
use model::vocab::{AsyncId, Cost, Op, Runtime};
use model::Eager;
use std::fmt;
use std::hash::Hash;

/// A side the explorer can run: a [`Runtime`] whose states can be cloned,
/// compared and hashed, and whose behaviour-free counters can be reset.
pub trait Explorable: Runtime + Clone + Eq + Hash + fmt::Debug + Send + Sync + 'static {
    /// Reset what never changes behaviour (the cost account, op counters
    /// beyond "some op ran", which numbers the open scopes and the frame
    /// objects held carry), so that states equal in behaviour hash equal.
    fn normalise(&mut self);

    /// The part of [`Explorable::normalise`] that an op which only reads
    /// may change: the counters (the cost account, `ops_applied`). A state
    /// normalised, read, and its counters forgotten equals the state when
    /// the read changed nothing else (the fixpoint explorer checks such reads
    /// in place, `Explorer::read`). The default
    /// normalises all.
    fn forget_counters(&mut self) {
        self.normalise();
    }

    /// The lazy implementation's state when this side is (or wraps) one: the
    /// named situations are read off it. `None` (the default): no situations.
    fn lazy_view(&self) -> Option<&dyn LazySide> {
        None
    }

    /// This side's async ids, for the fixpoint explorer's canonical states
    /// ([`crate::canonical`]). `None` (the default): the side cannot be
    /// renamed, and no state of the pair is.
    fn renamable(&mut self) -> Option<&mut dyn RenameIds> {
        None
    }
}

impl Explorable for Eager {
    fn normalise(&mut self) {
        normalise_environment(self);
    }

    fn forget_counters(&mut self) {
        forget_counters(self);
    }

    fn renamable(&mut self) -> Option<&mut dyn RenameIds> {
        Some(self)
    }
}

/// The [`Explorable`] impl of a side over the lazy store: the pull
/// request's side ([`Lazy`]) and a lazy side with a mutant planted
/// (`model::Environment<Mutated>`: `scopecheck mutants`, `explore
/// --mutant`). One impl over every `Environment<S: LazyStore>` is refused
/// (E0119: it would overlap [`Eager`]'s for all the compiler knows), so the
/// body is written once here.
macro_rules! lazy_explorable {
    ($($side:ty),+) => {$(
        impl Explorable for $side {
            fn normalise(&mut self) {
                normalise_environment(self);
            }

            fn forget_counters(&mut self) {
                forget_counters(self);
            }

            fn lazy_view(&self) -> Option<&dyn LazySide> {
                Some(self)
            }

            fn renamable(&mut self) -> Option<&mut dyn RenameIds> {
                Some(self)
            }
        }
    )+};
}

lazy_explorable!(Lazy, model::Environment<Mutated>);

/// [`Explorable::normalise`] of an environment over either store.
fn normalise_environment<S: AsyncIdStack>(env: &mut model::Environment<S>) {
    forget_counters(env);
    env.canonicalise_scope_serials();
    env.canonicalise_frame_serials();
}

/// [`Explorable::forget_counters`] of an environment over either store.
fn forget_counters<S: AsyncIdStack>(env: &mut model::Environment<S>) {
    env.async_hooks.cost = Cost::default();
    // Only `ops_applied == 0` is ever read (the generators' first op).
    env.ops_applied = env.ops_applied.min(1);
}

/// The reference side: it decides which ops are possible, and the explorer
/// reads two things off it to choose the ops of a state.
pub trait Reference: Explorable {
    /// Whether `op` can happen now.
    fn enabled(&self, op: &Op) -> bool;
    /// `executionAsyncId()` now: the id a matching `emit-after` names.
    fn execution_async_id(&self) -> AsyncId;
    /// How deeply the program is nested above the main script: open frames
    /// or id-stack entries, whichever is more, minus the main script's one.
    fn nesting(&self) -> usize;
    /// Ticks queued (`process.nextTick`), for [`Bounds::max_ticks`].
    fn queued_ticks(&self) -> usize {
        0
    }
    /// Microtasks queued and unhandled rejections pending, for
    /// [`Bounds::max_microtasks`].
    fn queued_microtasks(&self) -> usize {
        0
    }
    /// Id-stack entries JS pushed (`emitBefore`, `runInAsyncScope`): the
    /// stack's length less the native scopes' pushes, for [`Bounds::max_js`].
    fn js_entries(&self) -> usize {
        0
    }
}

impl Reference for Eager {
    fn enabled(&self, op: &Op) -> bool {
        model::Environment::enabled(self, op).is_ok()
    }

    fn execution_async_id(&self) -> AsyncId {
        self.async_hooks.async_id_fields.k_execution_async_id
    }

    fn nesting(&self) -> usize {
        let entries = self.async_hooks.fields.k_stack_length as usize;
        self.frames.len().max(entries).saturating_sub(1)
    }

    fn queued_ticks(&self) -> usize {
        self.ticks.queue.len()
    }

    fn queued_microtasks(&self) -> usize {
        self.microtasks.queue.len() + self.rejections.pending.len()
    }

    fn js_entries(&self) -> usize {
        let entries = self.async_hooks.fields.k_stack_length as usize;
        let native = (self.frames.iter())
            .filter_map(|f| f.held_scope())
            .filter(|s| s.pushed_ids)
            .count();
        entries.saturating_sub(native)
    }
}
