//! The fast refinement check (`refinement::holds`, field by field on the
//! states) decides exactly what the abstraction does (`abstract_lazy` equal
//! to `abstract_eager`): on generated cases with the real lazy side, where
//! it holds, and with every mutant, where it breaks.

use lazy::mutant::Mutant;
use lazy::LazyStore;
use model::vocab::Runtime;
use scopecheck::generate::CaseGen;
use scopecheck::lockstep::{catch_panic, Pair};
use scopecheck::refinement::{abstract_eager, abstract_lazy, first_difference, holds};

/// Steps where the two checks were compared: (relation held, broken).
fn compare(mutant: Option<Mutant>, cases: u64) -> (u64, u64) {
    let (mut held, mut broken) = (0, 0);
    for case in 0..cases {
        let (h, b) = match mutant {
            None => compare_case(Pair::new(), case, mutant),
            Some(m) => compare_case(Pair::mutated(m), case, mutant),
        };
        held += h;
        broken += b;
    }
    (held, broken)
}

/// [`compare`] on one case, on `pair`.
fn compare_case<S: LazyStore>(mut pair: Pair<S>, case: u64, mutant: Option<Mutant>) -> (u64, u64) {
    let (mut held, mut broken) = (0, 0);
    let mut gen = CaseGen::new(66511, case, 120);
    while let Some(op) = gen.next_op(&pair.eager) {
        let e = pair.eager.apply(&op);
        let lazy = &mut pair.lazy;
        let l = catch_panic(|| lazy.apply(&op));
        let slow = first_difference(&abstract_eager(&pair.eager), &abstract_lazy(&pair.lazy));
        let fast = holds(&pair.eager, &pair.lazy);
        assert_eq!(
            fast,
            slow.is_none(),
            "case {case} with {mutant:?}: fast {fast}, abstraction {slow:?}"
        );
        if fast {
            held += 1;
        } else {
            broken += 1;
        }
        if e != l || !fast {
            break;
        }
    }
    (held, broken)
}

#[test]
fn the_fast_check_agrees_with_the_abstraction_when_the_relation_holds() {
    let (held, broken) = compare(None, 2_000);
    assert!(held > 50_000, "only {held} steps compared");
    assert_eq!(broken, 0);
}

#[test]
fn the_fast_check_agrees_with_the_abstraction_when_the_relation_breaks() {
    let mut broken_total = 0;
    for &m in Mutant::ALL {
        let (_, broken) = compare(Some(m), 400);
        broken_total += broken;
    }
    assert!(
        broken_total >= 10,
        "the mutants broke the relation only {broken_total} times"
    );
}
