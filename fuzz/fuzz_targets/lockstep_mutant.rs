//! Fuzz target `lockstep_mutant`: `lockstep` with the deliberate mistake
//! named by the environment variable `SCOPECHECK_MUTANT` (a name from
//! `scopecheck mutants`) switched on in the lazy side, and without the
//! refinement check, so that only observable divergences count: shows
//! how fast the fuzzer finds a mutant.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scopecheck::fuzzing::{check_lockstep, mutant_from_env, Mutant};
use std::sync::OnceLock;

static MUTANT: OnceLock<Mutant> = OnceLock::new();

fuzz_target!(
    init: {
        match mutant_from_env() {
            Ok(m) => {
                MUTANT.get_or_init(|| m);
            }
            Err(why) => {
                eprintln!("lockstep_mutant: {why}");
                std::process::exit(2);
            }
        }
    },
    |data: &[u8]| {
        let mutant = MUTANT.get().copied();
        if let Err(report) = check_lockstep(data, mutant, false) {
            panic!("the mutant is observable:\n{report}");
        }
    }
);
