//! The fast refinement check (`refinement::holds_full`, field by field on
//! the states) decides exactly what the abstraction does (`abstract_lazy`
//! equal to `abstract_eager`): on generated cases with the real lazy side,
//! where it holds, and with every mutant, where it breaks. The check the
//! lockstep runner uses (`refinement::holds`, which skips the fields no
//! mutable access reached since they were last found equal) decides as
//! `holds_full` does after every op, so it catches every mutant at the
//! same op.

use lazy::mutant::Mutant;
use lazy::LazyStore;
use model::vocab::Runtime;
use scopecheck::generate::CaseGen;
use scopecheck::lockstep::{self, catch_panic, Pair};
use scopecheck::refinement::{
    abstract_eager, abstract_lazy, first_difference, holds, holds_full, verify_full,
};

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
        let fast = holds_full(&pair.eager, &pair.lazy);
        assert_eq!(
            fast,
            slow.is_none(),
            "case {case} with {mutant:?}: fast {fast}, abstraction {slow:?}"
        );
        let skipping = holds(&mut pair.eager, &mut pair.lazy);
        assert_eq!(
            skipping, fast,
            "case {case} with {mutant:?}: holds {skipping}, holds_full {fast}"
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

/// The index of the first op after which `holds_full` fails on `ops` (the
/// answers agreeing up to it), or `None`: the lockstep runner's loop with
/// every field compared after every op.
fn first_break_with_full_comparison(ops: &[model::vocab::Op], mutant: Mutant) -> Option<usize> {
    let mut pair = Pair::mutated(mutant);
    for (index, op) in ops.iter().enumerate() {
        if pair.step(op).is_err() {
            return None;
        }
        if verify_full(&pair.eager, &pair.lazy).is_err() {
            return Some(index);
        }
    }
    None
}

#[test]
fn skipping_unchanged_fields_catches_every_mutant_at_the_same_op_as_comparing_all() {
    // Each mutant's generated cases through the lockstep runner (whose
    // refinement check skips what did not change), against the same ops
    // with every field compared after every op.
    let mut caught = 0;
    for &m in Mutant::ALL {
        for case in 0..300 {
            let mut gen = CaseGen::new(66511, case, 120);
            let mut probe = Pair::mutated(m);
            let mut ops = Vec::new();
            while let Some(op) = gen.next_op(&probe.eager) {
                let answers_agree = probe.step(&op).is_ok();
                ops.push(op);
                if !answers_agree {
                    break;
                }
            }
            let full = first_break_with_full_comparison(&ops, m);
            let skipping = match lockstep::run_with(&ops, Some(m), true) {
                Err(d) if d.refinement.is_some() => Some(d.index),
                _ => None,
            };
            assert_eq!(
                skipping, full,
                "{m:?} case {case}: the skipping check broke at {skipping:?}, the full one at {full:?}"
            );
            caught += u64::from(full.is_some());
        }
    }
    eprintln!("the relation broke in {caught} cases");
    assert!(caught >= 10, "the relation broke only {caught} times");
}

#[test]
fn a_change_after_a_successful_check_is_seen() {
    // After a check that compared (and unmarked) everything, a mutable
    // access to a deep field of one side marks it: the next check compares
    // it, and fails.
    let mut pair = Pair::new();
    let trace = model::vocab::trace::parse("callback-scope 6 1 R1\n  callback-scope 7 6 R2\n")
        .expect("a trace");
    for op in trace.ops() {
        let _ = pair.step(&op).expect("the sides agree");
        assert!(holds(&mut pair.eager, &mut pair.lazy));
    }
    assert!(holds(&mut pair.eager, &mut pair.lazy), "nothing changed");
    if let Some(model::env::Frame::Native(main)) = pair.lazy.frames.first_mut() {
        main.main_script = false;
    }
    assert!(!holds_full(&pair.eager, &pair.lazy));
    assert!(
        !holds(&mut pair.eager, &mut pair.lazy),
        "the outermost frame changed under the innermost ones"
    );
    // Below the top of the stack, on either side: an eager entry, an eager
    // native resource, a link of the lazy chain (no hook is on: the two
    // scopes are lazy).
    let nested = || {
        let mut pair = Pair::new();
        for op in trace.ops() {
            let _ = pair.step(&op).expect("the sides agree");
        }
        assert!(holds(&mut pair.eager, &mut pair.lazy));
        assert!(pair.lazy.async_hooks.store.lazy_scopes.len() >= 2);
        assert!(holds(&mut pair.eager, &mut pair.lazy), "nothing changed");
        pair
    };
    let mut pair = nested();
    pair.eager.async_hooks.async_ids_stack[0].1 += 1;
    assert!(
        !holds(&mut pair.eager, &mut pair.lazy),
        "an eager entry changed"
    );
    let mut pair = nested();
    pair.eager.async_hooks.native_execution_async_resources[1] = None;
    assert!(
        !holds(&mut pair.eager, &mut pair.lazy),
        "an eager resource changed"
    );
    let mut pair = nested();
    pair.lazy.async_hooks.store.lazy_scopes[0].saved.0 += 1;
    assert!(
        !holds(&mut pair.eager, &mut pair.lazy),
        "the first link changed"
    );
    let mut pair = nested();
    let top = pair
        .lazy
        .async_hooks
        .store
        .lazy_scopes
        .pop()
        .expect("a link");
    pair.lazy.async_hooks.store.lazy_scopes.pop();
    pair.lazy.async_hooks.store.lazy_scopes.push(top);
    pair.lazy.async_hooks.fields.k_stack_length += 1;
    assert!(!holds_full(&pair.eager, &pair.lazy));
    assert!(
        !holds(&mut pair.eager, &mut pair.lazy),
        "a link replaced below the top"
    );
    let mut pair = Pair::new();
    assert!(holds(&mut pair.eager, &mut pair.lazy));
    pair.lazy
        .heap
        .reset_globals
        .insert(model::vocab::ResourceId(7));
    assert!(!holds(&mut pair.eager, &mut pair.lazy), "the heap changed");
    let mut pair = Pair::new();
    assert!(holds(&mut pair.eager, &mut pair.lazy));
    pair.eager.async_hooks.async_ids_stack[0] = (42, 42);
    assert!(
        !holds(&mut pair.eager, &mut pair.lazy),
        "the eager stack changed"
    );
}
