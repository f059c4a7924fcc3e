//! Deliberate mistakes: each [`Mutant`] is one plausible way to get the lazy
//! design wrong. A mutant is chosen at run time with [`crate::with_mutant`];
//! `Lazy::new()` has none. The lazy code reads each design decision through
//! one named switch of [`Decisions`] (numbered as in `docs/lazy-design.md`).

use model::env::fields::Fields;

/// One plausible mistake in the lazy design, named after the decision it
/// gets wrong (`docs/lazy-design.md`, `docs/findings.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutant {
    /// A pop whose innermost entry is a lazy scope skips the corrupted-stack check.
    LazyPopSkipsCheck,
    /// JS `popAsyncContext` ignores lazy scopes (sees only `kStackLength`).
    JsPopIgnoresLazy,
    /// `hasAsyncIdStack()` reads only `kStackLength`.
    HasAsyncIdStackIgnoresLazy,
    /// `clearAsyncIdStack()` leaves the chain and `kLazyScopes` as they are.
    ClearKeepsChain,
    /// `clearAsyncIdStack()` empties the chain but leaves `kLazyScopes`.
    ClearForgetsCount,
    /// `executionAsyncResource()` returns the innermost lazy scope's resource
    /// whenever `kLazyScopes != 0`, ignoring JS contexts above it.
    ResourceIgnoresJsAbove,
    /// JS indexes `execution_async_resources` by `kStackLength` instead of
    /// the eager depth `kStackLength + kLazyScopes`.
    ResourceIndexByStackLength,
    /// A lazy scope reads its Global when it opens, not when asked.
    GlobalReadAtOpen,
    /// Native resources left past the top are not dropped when a lazy scope
    /// is linked or popped (an eager push/pop resizes the vector).
    KeepsStaleNativeResources,
    /// A JS pop of a lazy scope does not leave its resource in the native
    /// array, where an eager push would have left it.
    JsPopLazyForgetsResource,
    /// Popping a lazy scope restores the execution id but not the trigger id.
    LazyPopKeepsTrigger,
    /// A lazy scope saves the ids after writing its own.
    LinkSavesOwnIds,
    /// A lazy scope's close restores its own saved pair and unlinks itself,
    /// whatever entry is innermost.
    LazyCloseRestoresOwn,
    /// The lazy path skips `push_async_context`'s CHECKs (`CHECK_GE(async_id,
    /// -1)`, the non-empty Global).
    LazySkipsIdCheck,
    /// The MakeCallback trampoline writes its resource at `kStackLength - 1`.
    TrampolineIndexByStackLength,
    /// C++ `executionAsyncResource_(index)` does not look at the chain.
    NativeReadIgnoresChain,
    /// The `kTotals` CHECK at the outermost close is skipped for a lazy scope.
    OutermostCheckSkippedWhenLazy,
    /// JS falls back to the native push when `kStackLength` (not the eager
    /// depth) reaches the room the id stack has.
    FallbackByStackLength,
    /// The id stack grows when `kStackLength` (not the eager depth) reaches
    /// its room, so it stays smaller than eager Node's.
    GrowsByStackLength,
    /// A lazy scope's close does not put the prior `AsyncContextFrame` back:
    /// `Close` restores it under `if (pushed_ids_)`, and the lazy path,
    /// which skips the push, leaves `pushed_ids_` false.
    LazyCloseSkipsFrameRestore,
    /// Variant, not a mistake: every scope takes the lazy path, hooks or not.
    AlwaysLazy,
    /// Variant, not a mistake: no scope takes the lazy path (Node today).
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
    ];

    /// Variants of the lazy condition that are not mistakes: the suite shows
    /// they are observably equivalent (`tests/mutants.rs`), so the condition
    /// decides cost only.
    pub const VARIANTS: &'static [Mutant] = &[Mutant::AlwaysLazy, Mutant::NeverLazy];

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
}

/// The design decisions of `docs/lazy-design.md`, each a switch that the
/// lazy code reads by name: `true` takes the decision as designed, `false`
/// the other path (the mutant that undoes it is on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Decisions {
    /// The deliberate mistake switched on, if any.
    pub mutant: Option<Mutant>,
}

macro_rules! decisions {
    ($($(#[$doc:meta])* $name:ident => $mutant:ident;)*) => {
        impl Decisions {
            $(
                $(#[$doc])*
                #[inline]
                pub fn $name(self) -> bool {
                    self.mutant != Some(Mutant::$mutant)
                }
            )*
        }
    };
}

decisions! {
    /// 1: a lazy scope saves the current pair before it writes its own.
    saves_pair_before_writing => LinkSavesOwnIds;
    /// 4: a scope's close pops the innermost entry, whatever it is.
    close_pops_innermost => LazyCloseRestoresOwn;
    /// 5: the corrupted-stack check runs when the innermost entry is lazy.
    pop_checks_lazy_entry => LazyPopSkipsCheck;
    /// 6: `push_async_context`'s CHECKs (`CHECK_GE(id, -1)`, a non-empty
    /// Global) run on the lazy path too.
    checks_ids_on_lazy_path => LazySkipsIdCheck;
    /// 7: JS `popAsyncContext` sees the chain while `kLazyScopes != 0`.
    js_pop_sees_chain => JsPopIgnoresLazy;
    /// 8: a JS pop of a lazy scope leaves its resource in the native array.
    js_pop_keeps_lazy_resource => JsPopLazyForgetsResource;
    /// 9: `hasAsyncIdStack()` counts the chain.
    has_stack_counts_chain => HasAsyncIdStackIgnoresLazy;
    /// 10: `clearAsyncIdStack()` empties the chain ...
    clear_empties_chain => ClearKeepsChain;
    /// 10: ... and zeroes `kLazyScopes`.
    clear_zeroes_count => ClearForgetsCount;
    /// 11: JS indexes `execution_async_resources` by the eager depth.
    resources_indexed_by_eager_depth => ResourceIndexByStackLength;
    /// 11: the MakeCallback trampoline writes its resource at the eager depth.
    trampoline_indexed_by_eager_depth => TrampolineIndexByStackLength;
    /// 12: `executionAsyncResource()` reads a JS entry above a lazy scope.
    resource_reads_js_above_lazy => ResourceIgnoresJsAbove;
    /// 12: C++ `executionAsyncResource_(index)` looks at the chain.
    native_read_sees_chain => NativeReadIgnoresChain;
    /// 13: a lazy scope dereferences its Global when asked, not at open.
    reads_global_when_asked => GlobalReadAtOpen;
    /// 14: linking or popping a lazy scope drops native resources past it.
    drops_stale_native_resources => KeepsStaleNativeResources;
    /// 15: popping a lazy scope restores the trigger id too.
    pop_restores_trigger => LazyPopKeepsTrigger;
    /// 16: the `kTotals` CHECK at the outermost close runs for lazy scopes.
    outermost_close_checks_lazy => OutermostCheckSkippedWhenLazy;
    /// 17: JS falls back to the native push at the eager depth.
    js_falls_back_by_eager_depth => FallbackByStackLength;
    /// 17: the id stack grows at the eager depth.
    grows_by_eager_depth => GrowsByStackLength;
    /// 19: a lazy scope's close puts the prior `AsyncContextFrame` back, as a
    /// pushed one's does (`pushed_ids_` is set on the lazy path too).
    lazy_close_restores_frame => LazyCloseSkipsFrameRestore;
}

impl Decisions {
    /// 2: whether a scope opened now takes the lazy path: the pull request's
    /// condition ([`crate::callback_scope::can_be_lazy`]), or every scope
    /// or none under the variants `always-lazy` and `never-lazy`.
    pub fn takes_lazy_path(self, fields: &Fields) -> bool {
        match self.mutant {
            Some(Mutant::AlwaysLazy) => true,
            Some(Mutant::NeverLazy) => false,
            _ => crate::callback_scope::can_be_lazy(fields),
        }
    }
}
