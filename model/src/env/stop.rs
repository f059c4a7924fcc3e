//! cfg(loom) only: `Environment::is_stopping()` read through a probe, so
//! that a loom test can set the stop flag from another thread
//! (`Environment::ExitEnv`) and have every read point see it or not
//! (`impl/tests/loom_stop.rs`). A normal build has neither this module nor
//! the field; [`Environment::stopping`](super::Environment) is then `is_stopping`.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Where [`super::Environment::stopping`] asks whether another thread stopped the
/// environment. Not part of the model's state: every probe is equal to
/// every other and hashes as nothing.
#[derive(Clone, Default)]
pub struct StopProbe(pub Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl StopProbe {
    /// Whether the probe says the environment is stopping (`false` without one).
    pub fn fires(&self) -> bool {
        self.0.as_ref().is_some_and(|probe| probe())
    }
}

impl fmt::Debug for StopProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "StopProbe(set)"
        } else {
            "StopProbe(none)"
        })
    }
}

impl PartialEq for StopProbe {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for StopProbe {}

impl Hash for StopProbe {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}
