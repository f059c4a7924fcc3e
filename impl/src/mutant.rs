//! Deliberate mistakes: each [`Mutant`] is one plausible way to get the lazy
//! design wrong. A mutant is chosen at run time with [`crate::Lazy::with_mutant`];
//! `Lazy::new()` has none, and each site pays one comparison for the switch.

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
    /// The lazy path skips `CHECK_GE(async_id, -1)`.
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
