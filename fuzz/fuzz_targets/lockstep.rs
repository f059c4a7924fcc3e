//! Fuzz target `lockstep`: the input decoded to an op sequence Node could
//! run (`scopecheck::fuzzing::decode_on`), run on the eager model and the
//! lazy implementation in lockstep with the refinement check; a divergence
//! panics with the trace in the text format and the divergence. The node
//! version is `SCOPECHECK_NODE_VERSION` (`20` or `26`; unset: 26), as
//! `scopecheck check --node-version`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scopecheck::fuzzing::{check_lockstep_on, node_version_from_env, setting_or_exit, NodeVersion};
use std::sync::OnceLock;

static VERSION: OnceLock<NodeVersion> = OnceLock::new();

fuzz_target!(
    init: {
        VERSION.get_or_init(|| setting_or_exit("lockstep", node_version_from_env()));
    },
    |data: &[u8]| {
        let version = VERSION.get().copied().unwrap_or_default();
        if let Err(report) = check_lockstep_on(data, version, None, true) {
            panic!("the lazy implementation diverges from the eager model:\n{report}");
        }
    }
);
