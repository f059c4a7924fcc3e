//! The shared vocabulary: operations ([`op`], with their arguments,
//! [`args`]), observations, the `Runtime` trait, and the text trace format
//! ([`trace`]).
//! The lazy implementation uses this module and nothing else of the model.

pub mod args;
pub mod observation;
pub mod op;
mod op_syntax;
pub mod runtime;
mod tokens;
pub mod trace;

pub use args::{
    AlsId, AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, NodeVersion,
    RejectionsMode, ResourceId, ScopeFlags, ScopeKind, StoreValue,
};
pub use observation::{FailedCheck, HookEvent, Observation, ResourceView, SIGABRT, SIGTRAP};
pub use op::{Facts, Family, Nesting, Op, OpKind};
pub use runtime::{Cost, OpError, Runtime};
