//! Fuzz target `trace_parser`: `model::vocab::trace::parse` never panics on
//! any text (bytes that are not UTF-8 are read lossily), and a trace that
//! parses prints back to text that parses to the same ops.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(why) = scopecheck::fuzzing::check_trace_parser(&text) {
        panic!("{why}");
    }
});
