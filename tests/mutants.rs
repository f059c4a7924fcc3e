//! Every mutant of the lazy design is killed by the random lockstep check
//! within the CI budget, with a short counterexample.

use lazy::mutant::Mutant;
use scopecheck::mutants::run_mutant;

#[test]
fn every_mutant_is_killed() {
    let mut survivors = Vec::new();
    for &m in Mutant::ALL {
        let r = run_mutant(m, 20_000, 66511, false);
        match &r.counterexample {
            None => survivors.push(m.name()),
            Some(cx) => {
                assert!(
                    cx.divergence.is_observable(),
                    "{}: {}",
                    m.name(),
                    cx.divergence
                );
                assert!(
                    cx.ops.len() <= 24,
                    "{}: counterexample not minimal: {}",
                    m.name(),
                    cx.trace_text()
                );
            }
        }
    }
    assert!(survivors.is_empty(), "mutants survived: {survivors:?}");
    assert!(Mutant::ALL.len() >= 15);
}
