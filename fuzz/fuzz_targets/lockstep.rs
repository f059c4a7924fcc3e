//! Fuzz target `lockstep`: the input decoded to an op sequence Node could
//! run (`scopecheck::fuzzing::decode`), run on the eager model and the lazy
//! implementation in lockstep with the refinement check; a divergence
//! panics with the trace in the text format and the divergence.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(report) = scopecheck::fuzzing::check_lockstep(data, None, true) {
        panic!("the lazy implementation diverges from the eager model:\n{report}");
    }
});
