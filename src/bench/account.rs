//! The model's account of one benchmark call (issue 56): what one
//! `node::MakeCallback` of `benchmark/napi/make_callback` (`{0, 0}`, from a
//! libuv timer with no JavaScript below) costs on the eager side (Node
//! today) and on the lazy side (the pull request), in the units of
//! [`Cost`], after the set-up of a [`Variant`], on a node version. Where
//! the lazy path cannot apply (a hook enabled, `executionAsyncResource()`
//! called) both sides take the same path and the account shows no saving,
//! with the reason. The bench prints it beside the measured rows.

use super::runner::Variant;
use model::env::Environment;
use model::vocab::{trace, Cost, NodeVersion, Runtime};
use model::Eager;

/// The ops that set a variant up, as a trace (after them the main
/// script's scope closes: the calls come from the event loop).
fn set_up(variant: Variant) -> &'static str {
    match variant {
        Variant::None => "",
        Variant::HookInit => "create-hook H1 init\nenable-hook H1\n",
        Variant::HookBeforeAfter => "create-hook H1 before after\nenable-hook H1\n",
        Variant::Ear => "execution-async-resource\n",
        Variant::Als => "als-enter-with A1 1\n",
    }
}

/// One call of the benchmark: `node::MakeCallback` with `{0, 0}`.
const CALL: &str = "make-callback 0 0 R1\nclose\n";

/// The account of one call on each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Account {
    /// Node today.
    pub eager: Cost,
    /// The pull request.
    pub lazy: Cost,
    /// Why the lazy path cannot apply here, if it cannot.
    pub no_lazy_path: Option<&'static str>,
}

impl Account {
    /// The units the lazy side does not spend: the id stack's and the
    /// resource arrays' writes the eager side makes and the lazy one does
    /// not (0 where the lazy path cannot apply).
    pub fn saved_writes(&self) -> u64 {
        (self.eager.stack_writes + self.eager.resource_writes)
            .saturating_sub(self.lazy.stack_writes + self.lazy.resource_writes)
    }

    /// The lazy side's writes (the stacks and the chain) over the eager
    /// side's: the predicted ratio of the work the pull request changes.
    pub fn predicted_ratio(&self) -> f64 {
        let writes = |c: &Cost| (c.stack_writes + c.resource_writes + c.chain_writes) as f64;
        writes(&self.lazy) / writes(&self.eager).max(1.0)
    }

    /// A short line for the table: what each side writes per call.
    pub fn describe(&self) -> String {
        let side = |c: &Cost| {
            format!(
                "{} stack + {} resource + {} chain writes, {} crossings",
                c.stack_writes, c.resource_writes, c.chain_writes, c.crossings
            )
        };
        let saving = match self.no_lazy_path {
            Some(why) => format!("no saving: {why}"),
            None => format!(
                "saves {} writes a call (lazy/eager {:.2})",
                self.saved_writes(),
                self.predicted_ratio()
            ),
        };
        format!(
            "eager {}; lazy {}; {saving}",
            side(&self.eager),
            side(&self.lazy)
        )
    }
}

/// The account of one call after `variant` on `version`: the set-up, the
/// main script's close, one call to warm up (the arrays grown), then the
/// call measured, on each side.
pub fn account(variant: Variant, version: NodeVersion) -> Result<Account, String> {
    let text = format!("{}close\n{CALL}", set_up(variant));
    let mut eager = Eager::for_version(version);
    let mut lazy = Environment::<lazy::LazyStack>::for_version(version);
    let eager_cost = measure(&mut eager, &text)?;
    let lazy_cost = measure(&mut lazy, &text)?;
    let f = &eager.async_hooks.fields;
    let no_lazy_path = if f.k_uses_execution_async_resource > 0 {
        Some("executionAsyncResource() was called")
    } else if f.k_totals > 0 {
        Some("an async hook is enabled")
    } else {
        None
    };
    Ok(Account {
        eager: eager_cost,
        lazy: lazy_cost,
        no_lazy_path,
    })
}

/// Apply `warm_up`, then [`CALL`], and return what the call cost.
fn measure(rt: &mut dyn Runtime, warm_up: &str) -> Result<Cost, String> {
    let apply = |rt: &mut dyn Runtime, text: &str| -> Result<(), String> {
        let ops = trace::parse(text).map_err(|e| e.to_string())?.ops();
        for op in ops {
            rt.apply(&op).map_err(|e| format!("{op}: {e}"))?;
        }
        Ok(())
    };
    apply(rt, warm_up)?;
    let before = rt.cost();
    apply(rt, CALL)?;
    Ok(rt.cost() - before)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With nothing set up the lazy side saves the eager push and pop (two
    /// doubles and a resource slot each way) for two chain writes; with a
    /// hook enabled or `executionAsyncResource()` called both sides push,
    /// and the account says there is no saving and why; on Node 26 an
    /// `AsyncLocalStorage` leaves the lazy path open, on v20 it closes it.
    #[test]
    fn the_account_saves_only_where_the_lazy_path_applies() {
        for version in [NodeVersion::V20, NodeVersion::V26] {
            let plain = account(Variant::None, version).expect("the trace runs");
            assert_eq!(plain.no_lazy_path, None);
            assert_eq!(
                (plain.eager.stack_writes, plain.eager.resource_writes),
                (2, 2)
            );
            assert_eq!(
                (plain.lazy.stack_writes, plain.lazy.resource_writes),
                (0, 0)
            );
            assert_eq!(plain.lazy.chain_writes, 2);
            assert_eq!(plain.saved_writes(), 4);
            assert!(plain.predicted_ratio() < 1.0, "{plain:?}");
            for variant in [Variant::HookInit, Variant::HookBeforeAfter, Variant::Ear] {
                let a = account(variant, version).expect("the trace runs");
                assert!(a.no_lazy_path.is_some(), "{variant:?} {a:?}");
                assert_eq!(a.eager, a.lazy, "{variant:?}");
                assert_eq!(a.saved_writes(), 0, "{variant:?}");
                assert!(a.describe().contains("no saving"), "{}", a.describe());
            }
            let als = account(Variant::Als, version).expect("the trace runs");
            assert_eq!(
                als.no_lazy_path.is_none(),
                version == NodeVersion::V26,
                "{als:?}"
            );
        }
    }
}
