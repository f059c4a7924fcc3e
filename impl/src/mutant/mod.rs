//! The catalogue of deliberate mistakes. Each [`Mutant`] undoes one design
//! decision of `docs/lazy-design.md` (numbered as there) and is a type of its
//! own that implements [`Mistake`]: it overrides the seam method where the
//! decision is taken, with Node's code, the other answer, or a wrong
//! function written in the module named after the right one's
//! ([`async_hooks`], [`callback_scope`], [`js`]): built from the right one's
//! pieces, or the right one with the step it gets wrong undone. [`Mutated`]
//! is the lazy store with one mistake planted; the pull request's modules
//! read no mutant.

pub mod async_hooks;
pub mod callback_scope;
pub mod js;

use crate::async_hooks::{LazyStack, LazyStore, Path};
use model::env::async_id_stack::{FrameExchange, FrameRestore};
use model::env::context_frame::ContextFrame;
use model::env::resources::{Heap, NativeSlot, ScopeSerial};
use model::env::{AsyncHooks, AsyncIdStack, Died, Environment};
use model::vocab::{AsyncContext, AsyncId, ResourceView};
use std::fmt;
use std::hash::{Hash, Hasher};

/// One plausible mistake in the lazy design, by the name the CLI takes
/// (kebab case); its type and the decision it undoes are linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutant {
    /// Decision 5: [`async_hooks::LazyPopSkipsCheck`].
    LazyPopSkipsCheck,
    /// Decision 7: [`js::JsPopIgnoresLazy`].
    JsPopIgnoresLazy,
    /// Decision 7: [`js::JsPopIgnoresJsAbove`].
    JsPopIgnoresJsAbove,
    /// Decision 9: [`js::HasAsyncIdStackIgnoresLazy`].
    HasAsyncIdStackIgnoresLazy,
    /// Decision 10: [`async_hooks::ClearKeepsChain`].
    ClearKeepsChain,
    /// Decision 10: [`async_hooks::ClearForgetsCount`].
    ClearForgetsCount,
    /// Decision 12: [`js::ResourceIgnoresJsAbove`].
    ResourceIgnoresJsAbove,
    /// Decision 11: [`js::ResourceIndexByStackLength`].
    ResourceIndexByStackLength,
    /// Decision 13: [`callback_scope::GlobalReadAtOpen`].
    GlobalReadAtOpen,
    /// Decision 14: [`async_hooks::KeepsStaleNativeResources`].
    KeepsStaleNativeResources,
    /// Decision 8: [`js::JsPopLazyForgetsResource`].
    JsPopLazyForgetsResource,
    /// Decision 15: [`async_hooks::LazyPopKeepsTrigger`].
    LazyPopKeepsTrigger,
    /// Decision 1: [`async_hooks::LinkSavesOwnIds`].
    LinkSavesOwnIds,
    /// Decision 4: [`callback_scope::LazyCloseRestoresOwn`].
    LazyCloseRestoresOwn,
    /// Decision 6: [`callback_scope::LazySkipsIdCheck`].
    LazySkipsIdCheck,
    /// Decision 11: [`js::TrampolineIndexByStackLength`].
    TrampolineIndexByStackLength,
    /// Decision 12: [`async_hooks::NativeReadIgnoresChain`].
    NativeReadIgnoresChain,
    /// Decision 16: [`callback_scope::OutermostCheckSkippedWhenLazy`].
    OutermostCheckSkippedWhenLazy,
    /// Decision 17: [`js::FallbackByStackLength`].
    FallbackByStackLength,
    /// Decision 17: [`async_hooks::GrowsByStackLength`].
    GrowsByStackLength,
    /// Decision 19: [`callback_scope::LazyCloseSkipsFrameRestore`].
    LazyCloseSkipsFrameRestore,
    // Issue 24: the frame a native scope enters.
    /// Decision 20: [`callback_scope::LazySkipsFrameExchange`].
    LazySkipsFrameExchange,
    /// Decision 21: [`callback_scope::LazyCloseRestoresPoppedFrame`].
    LazyCloseRestoresPoppedFrame,
    /// Decision 20, a variant and not a mistake: [`callback_scope::LazyExchangesAfterLink`].
    LazyExchangesAfterLink,
    /// Decision 2, a variant and not a mistake: [`callback_scope::AlwaysLazy`].
    AlwaysLazy,
    /// Decision 2, a variant and not a mistake: [`callback_scope::NeverLazy`].
    NeverLazy,
}

impl Mutant {
    /// Every mutant.
    pub const ALL: &'static [Mutant] = &[
        Mutant::LazyPopSkipsCheck,
        Mutant::JsPopIgnoresLazy,
        Mutant::HasAsyncIdStackIgnoresLazy,
        Mutant::ClearKeepsChain,
        Mutant::ClearForgetsCount,
        Mutant::ResourceIgnoresJsAbove,
        Mutant::ResourceIndexByStackLength,
        Mutant::GlobalReadAtOpen,
        Mutant::KeepsStaleNativeResources,
        Mutant::JsPopLazyForgetsResource,
        Mutant::LazyPopKeepsTrigger,
        Mutant::LinkSavesOwnIds,
        Mutant::LazyCloseRestoresOwn,
        Mutant::LazySkipsIdCheck,
        Mutant::TrampolineIndexByStackLength,
        Mutant::NativeReadIgnoresChain,
        Mutant::OutermostCheckSkippedWhenLazy,
        Mutant::FallbackByStackLength,
        Mutant::GrowsByStackLength,
        Mutant::LazyCloseSkipsFrameRestore,
        // Issue 24: the frame a native scope enters.
        Mutant::LazySkipsFrameExchange,
        Mutant::LazyCloseRestoresPoppedFrame,
        // Issue 53: a Timeout's callback above RunTimers' lazy scope.
        Mutant::JsPopIgnoresJsAbove,
    ];

    /// Variants of the lazy condition that are not mistakes: the suite shows
    /// they are observably equivalent (`tests/mutants.rs`), so the condition
    /// decides cost only.
    pub const VARIANTS: &'static [Mutant] = &[
        Mutant::AlwaysLazy,
        Mutant::NeverLazy,
        Mutant::LazyExchangesAfterLink,
    ];

    /// The mutant's name in kebab case (as the CLI takes it).
    pub fn name(self) -> String {
        let debug = format!("{self:?}");
        let mut out = String::new();
        for (i, c) in debug.chars().enumerate() {
            if c.is_uppercase() {
                if i > 0 {
                    out.push('-');
                }
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The mutant with this kebab-case name.
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL
            .iter()
            .chain(Mutant::VARIANTS)
            .copied()
            .find(|m| m.name() == name)
    }

    /// The mutant's type.
    fn mistake(self) -> &'static dyn Mistake {
        use self::{async_hooks as a, callback_scope as c, js as j};
        match self {
            Mutant::LazyPopSkipsCheck => &a::LazyPopSkipsCheck,
            Mutant::JsPopIgnoresLazy => &j::JsPopIgnoresLazy,
            Mutant::JsPopIgnoresJsAbove => &j::JsPopIgnoresJsAbove,
            Mutant::HasAsyncIdStackIgnoresLazy => &j::HasAsyncIdStackIgnoresLazy,
            Mutant::ClearKeepsChain => &a::ClearKeepsChain,
            Mutant::ClearForgetsCount => &a::ClearForgetsCount,
            Mutant::ResourceIgnoresJsAbove => &j::ResourceIgnoresJsAbove,
            Mutant::ResourceIndexByStackLength => &j::ResourceIndexByStackLength,
            Mutant::GlobalReadAtOpen => &c::GlobalReadAtOpen,
            Mutant::KeepsStaleNativeResources => &a::KeepsStaleNativeResources,
            Mutant::JsPopLazyForgetsResource => &j::JsPopLazyForgetsResource,
            Mutant::LazyPopKeepsTrigger => &a::LazyPopKeepsTrigger,
            Mutant::LinkSavesOwnIds => &a::LinkSavesOwnIds,
            Mutant::LazyCloseRestoresOwn => &c::LazyCloseRestoresOwn,
            Mutant::LazySkipsIdCheck => &c::LazySkipsIdCheck,
            Mutant::TrampolineIndexByStackLength => &j::TrampolineIndexByStackLength,
            Mutant::NativeReadIgnoresChain => &a::NativeReadIgnoresChain,
            Mutant::OutermostCheckSkippedWhenLazy => &c::OutermostCheckSkippedWhenLazy,
            Mutant::FallbackByStackLength => &j::FallbackByStackLength,
            Mutant::GrowsByStackLength => &a::GrowsByStackLength,
            Mutant::LazyCloseSkipsFrameRestore => &c::LazyCloseSkipsFrameRestore,
            Mutant::LazySkipsFrameExchange => &c::LazySkipsFrameExchange,
            Mutant::LazyCloseRestoresPoppedFrame => &c::LazyCloseRestoresPoppedFrame,
            Mutant::LazyExchangesAfterLink => &c::LazyExchangesAfterLink,
            Mutant::AlwaysLazy => &c::AlwaysLazy,
            Mutant::NeverLazy => &c::NeverLazy,
        }
    }
}

/// A planted mistake: the seam methods a mutant can override, each by
/// default what [`LazyStack`] does (the pull request's function, or Node's
/// code at the eager depth where the pull request leaves the method alone).
/// A mutant overrides the one method where its decision is taken (two, where
/// the step it gets wrong runs in two).
pub trait Mistake: Sync {
    /// [`AsyncIdStack::grows_at`].
    fn grows_at(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.depth()
    }

    /// [`AsyncIdStack::js_push_falls_back_at`].
    fn js_push_falls_back_at(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.depth()
    }

    /// [`AsyncIdStack::resource_index`].
    fn resource_index(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.depth()
    }

    /// [`AsyncIdStack::trampoline_index`].
    fn trampoline_index(&self, ah: &AsyncHooks<Mutated>) -> usize {
        ah.depth() - 1
    }

    /// [`AsyncIdStack::enter_scope`].
    fn enter_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        crate::callback_scope::enter_scope(ah, context, resource, serial, heap, frame)
    }

    /// [`AsyncIdStack::leave_scope`]: Node's, with the mistake's pop and
    /// restore.
    fn leave_scope(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
        entered: Path,
        serial: ScopeSerial,
        frame: FrameRestore<'_, Mutated>,
    ) -> Result<(), Died> {
        let _ = serial;
        Mutated::pop_async_context(ah, async_id)?;
        if Mutated::restores_context_frame(ah, entered) {
            frame.restore();
        }
        Ok(())
    }

    /// [`AsyncIdStack::restores_context_frame`].
    fn restores_context_frame(&self, entered: Path) -> bool {
        let _ = entered;
        true
    }

    /// [`AsyncIdStack::checks_outermost_close`].
    fn checks_outermost_close(&self, entered: Path) -> bool {
        let _ = entered;
        true
    }

    /// [`AsyncIdStack::pop_async_context`].
    fn pop_async_context(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        crate::async_hooks::pop_async_context(ah, async_id)
    }

    /// [`AsyncIdStack::clear_async_id_stack`].
    fn clear_async_id_stack(&self, ah: &mut AsyncHooks<Mutated>, can_call_into_js: bool) {
        crate::async_hooks::clear_async_id_stack(ah, can_call_into_js);
    }

    /// [`AsyncIdStack::pop_async_context_js`].
    fn pop_async_context_js(
        &self,
        ah: &mut AsyncHooks<Mutated>,
        async_id: AsyncId,
    ) -> Result<bool, Died> {
        crate::js::pop_async_context_js(ah, async_id)
    }

    /// [`AsyncIdStack::has_async_id_stack`].
    fn has_async_id_stack(&self, ah: &AsyncHooks<Mutated>) -> bool {
        ah.depth() > 0
    }

    /// [`AsyncIdStack::execution_async_resource`].
    fn execution_async_resource(&self, ah: &mut AsyncHooks<Mutated>, heap: &Heap) -> ResourceView {
        ah.execution_async_resource_at(Mutated::resource_index(ah), heap)
    }

    /// [`AsyncIdStack::native_execution_async_resource`].
    fn native_execution_async_resource(
        &self,
        ah: &AsyncHooks<Mutated>,
        index: usize,
        heap: &Heap,
    ) -> ResourceView {
        crate::async_hooks::native_execution_async_resource(ah, index, heap)
    }
}

/// Nothing planted: [`Mutated`]'s default, the lazy store through the wrapper.
struct Nothing;

impl Mistake for Nothing {}

/// The lazy store with one mistake planted: each seam method is the
/// mistake's, which is [`LazyStack`]'s unless the mistake overrides it. The
/// mistake is chosen once, when the store is made.
#[derive(Clone)]
pub struct Mutated {
    lazy: LazyStack,
    planted: Option<Mutant>,
    mistake: &'static dyn Mistake,
}

impl Mutated {
    /// The lazy store with `mutant` planted.
    pub fn new(mutant: Mutant) -> Self {
        Mutated {
            lazy: LazyStack::default(),
            planted: Some(mutant),
            mistake: mutant.mistake(),
        }
    }
}

/// A lazy environment with `mutant` planted.
pub fn environment(mutant: Mutant) -> Environment<Mutated> {
    Environment::with_store(Mutated::new(mutant))
}

impl Default for Mutated {
    fn default() -> Self {
        Mutated {
            lazy: LazyStack::default(),
            planted: None,
            mistake: &Nothing,
        }
    }
}

impl fmt::Debug for Mutated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutated")
            .field("lazy", &self.lazy)
            .field("planted", &self.planted)
            .finish()
    }
}

impl PartialEq for Mutated {
    fn eq(&self, other: &Self) -> bool {
        (&self.lazy, self.planted) == (&other.lazy, other.planted)
    }
}

impl Eq for Mutated {}

impl Hash for Mutated {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.lazy.hash(state);
        self.planted.hash(state);
    }
}

impl LazyStore for Mutated {
    fn lazy(&self) -> &LazyStack {
        &self.lazy
    }

    fn lazy_mut(&mut self) -> &mut LazyStack {
        &mut self.lazy
    }
}

/// Every method through the mistake, but `depth` and `rename_scopes`, which
/// no mutant overrides (and `push_async_context_js`, Node's on both stores).
impl AsyncIdStack for Mutated {
    type Entered = Path;

    fn depth(ah: &AsyncHooks<Self>) -> usize {
        crate::async_hooks::depth(ah)
    }

    fn grows_at(ah: &AsyncHooks<Self>) -> usize {
        ah.store.mistake.grows_at(ah)
    }

    fn js_push_falls_back_at(ah: &AsyncHooks<Self>) -> usize {
        ah.store.mistake.js_push_falls_back_at(ah)
    }

    fn resource_index(ah: &AsyncHooks<Self>) -> usize {
        ah.store.mistake.resource_index(ah)
    }

    fn trampoline_index(ah: &AsyncHooks<Self>) -> usize {
        ah.store.mistake.trampoline_index(ah)
    }

    fn enter_scope(
        ah: &mut AsyncHooks<Self>,
        context: AsyncContext,
        resource: NativeSlot,
        serial: ScopeSerial,
        heap: &Heap,
        frame: FrameExchange<'_>,
    ) -> Result<(Path, ContextFrame), Died> {
        let mistake = ah.store.mistake;
        mistake.enter_scope(ah, context, resource, serial, heap, frame)
    }

    fn leave_scope(
        ah: &mut AsyncHooks<Self>,
        async_id: AsyncId,
        entered: Path,
        serial: ScopeSerial,
        frame: FrameRestore<'_, Self>,
    ) -> Result<(), Died> {
        let mistake = ah.store.mistake;
        mistake.leave_scope(ah, async_id, entered, serial, frame)
    }

    fn restores_context_frame(ah: &AsyncHooks<Self>, entered: Path) -> bool {
        ah.store.mistake.restores_context_frame(entered)
    }

    fn checks_outermost_close(ah: &AsyncHooks<Self>, entered: Path) -> bool {
        ah.store.mistake.checks_outermost_close(entered)
    }

    fn pop_async_context(ah: &mut AsyncHooks<Self>, async_id: AsyncId) -> Result<bool, Died> {
        let mistake = ah.store.mistake;
        mistake.pop_async_context(ah, async_id)
    }

    fn clear_async_id_stack(ah: &mut AsyncHooks<Self>, can_call_into_js: bool) {
        let mistake = ah.store.mistake;
        mistake.clear_async_id_stack(ah, can_call_into_js);
    }

    fn pop_async_context_js(ah: &mut AsyncHooks<Self>, async_id: AsyncId) -> Result<bool, Died> {
        let mistake = ah.store.mistake;
        mistake.pop_async_context_js(ah, async_id)
    }

    fn has_async_id_stack(ah: &AsyncHooks<Self>) -> bool {
        ah.store.mistake.has_async_id_stack(ah)
    }

    fn execution_async_resource(ah: &mut AsyncHooks<Self>, heap: &Heap) -> ResourceView {
        let mistake = ah.store.mistake;
        mistake.execution_async_resource(ah, heap)
    }

    fn native_execution_async_resource(
        ah: &AsyncHooks<Self>,
        index: usize,
        heap: &Heap,
    ) -> ResourceView {
        ah.store
            .mistake
            .native_execution_async_resource(ah, index, heap)
    }

    fn rename_scopes(store: &mut Self, rename: &dyn Fn(ScopeSerial) -> ScopeSerial) {
        LazyStack::rename_scopes(&mut store.lazy, rename);
    }
}
