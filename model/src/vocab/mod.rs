//! The shared vocabulary: operations, observations and the `Runtime` trait.
//! The lazy implementation uses this module and nothing else of the model.

pub mod observation;
pub mod op;
pub mod runtime;
pub mod trace;

pub use observation::{FailedCheck, HookEvent, Observation, ResourceView};
pub use op::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, NodeVersion, Op,
    OpKind, ResourceId, ScopeFlags, ScopeKind, StoreValue,
};
pub use runtime::{Cost, OpError, Runtime};
