//! Fuzz target `lockstep_mutant`: `lockstep` with the deliberate mistake
//! named by the environment variable `SCOPECHECK_MUTANT` (a name from
//! `scopecheck mutants`) switched on in the lazy side, and without the
//! refinement check, so that only observable divergences count: shows
//! how fast the fuzzer finds a mutant. `SCOPECHECK_NODE_VERSION` chooses the
//! node version as for `lockstep`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scopecheck::fuzzing::{
    check_lockstep_on, mutant_from_env, node_version_from_env, setting_or_exit, Mutant, NodeVersion,
};
use std::sync::OnceLock;

static MUTANT: OnceLock<Mutant> = OnceLock::new();
static VERSION: OnceLock<NodeVersion> = OnceLock::new();

fuzz_target!(
    init: {
        VERSION.get_or_init(|| setting_or_exit("lockstep_mutant", node_version_from_env()));
        MUTANT.get_or_init(|| setting_or_exit("lockstep_mutant", mutant_from_env()));
    },
    |data: &[u8]| {
        let mutant = MUTANT.get().copied();
        let version = VERSION.get().copied().unwrap_or_default();
        if let Err(report) = check_lockstep_on(data, version, mutant, false) {
            panic!("the mutant is observable:\n{report}");
        }
    }
);
