//! The cost account: what a scope costs on each side, in the shared units.
//! The expected counts follow from the code paths (an eager push writes the
//! saved pair, two doubles, and the resource slot; its pop truncates the
//! slot; a lazy scope links and unlinks itself and writes neither array).

use model::vocab::{trace, Cost, Runtime};

fn cost_of(rt: &mut dyn Runtime, warm_up: &str, measured: &str) -> Cost {
    for op in trace::parse(warm_up).expect("warm-up parses").ops() {
        rt.apply(&op).expect("warm-up applies");
    }
    let before = rt.cost();
    for op in trace::parse(measured).expect("measured parses").ops() {
        rt.apply(&op).expect("measured applies");
    }
    rt.cost() - before
}

const SCOPE: &str = "callback-scope 5 1 R1\nclose\n";
const MAKE_CALLBACK: &str = "make-callback 5 1 R1\nclose\n";

#[test]
fn a_scope_without_hooks_writes_nothing_on_the_lazy_side() {
    for measured in [SCOPE, MAKE_CALLBACK] {
        // The warm-up leaves the native vector grown, so no allocation is counted.
        let eager = cost_of(&mut model::Eager::new(), SCOPE, measured);
        let lazy = cost_of(&mut lazy::Lazy::new(), SCOPE, measured);
        assert_eq!(
            eager,
            Cost {
                stack_writes: 2,
                resource_writes: 2,
                chain_writes: 0,
                crossings: 0,
                allocations: 0
            },
            "eager, {measured:?}"
        );
        assert_eq!(
            lazy,
            Cost {
                stack_writes: 0,
                resource_writes: 0,
                chain_writes: 2,
                crossings: 0,
                allocations: 0
            },
            "lazy, {measured:?}"
        );
        assert!(
            lazy.stack_writes + lazy.resource_writes < eager.stack_writes + eager.resource_writes
        );
    }
}

#[test]
fn readers_pay_nothing_on_either_side() {
    let readers = "execution-async-id\ntrigger-async-id\nnext-tick\n";
    let eager = cost_of(&mut model::Eager::new(), "callback-scope 5 1 R1\n", readers);
    let lazy = cost_of(&mut lazy::Lazy::new(), "callback-scope 5 1 R1\n", readers);
    assert_eq!(eager, Cost::default());
    assert_eq!(lazy, Cost::default());
}

#[test]
fn with_a_hook_both_sides_push() {
    let hooks = "create-hook H1 before after\nenable-hook H1\n";
    let eager = cost_of(&mut model::Eager::new(), &format!("{hooks}{SCOPE}"), SCOPE);
    let lazy = cost_of(&mut lazy::Lazy::new(), &format!("{hooks}{SCOPE}"), SCOPE);
    assert_eq!(
        lazy.chain_writes, 0,
        "a scope opened with hooks enabled is eager"
    );
    assert_eq!(eager, lazy);
    assert_eq!(eager.crossings, 2, "before and after");
}
