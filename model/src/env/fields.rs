//! `AsyncHooks::fields_` and `AsyncHooks::async_id_fields_` (`src/env.h`).

use crate::vocab::AsyncId;

/// `AsyncHooks::Fields`: the uint32 counters shared with JS as `async_hook_fields`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fields {
    /// `kInit`: enabled hooks with an `init` callback.
    pub k_init: u32,
    /// `kBefore`.
    pub k_before: u32,
    /// `kAfter`.
    pub k_after: u32,
    /// `kDestroy`.
    pub k_destroy: u32,
    /// `kPromiseResolve`.
    pub k_promise_resolve: u32,
    /// `kTotals`: the sum of the five counts above.
    pub k_totals: u32,
    /// `kCheck`: the corrupted-stack checks run while it is > 0.
    pub k_check: u32,
    /// `kStackLength`: entries on `async_ids_stack_`.
    pub k_stack_length: u32,
    /// `kUsesExecutionAsyncResource`: set by the first `executionAsyncResource()`.
    pub k_uses_execution_async_resource: u32,
}

/// `AsyncHooks::UidFields`: the doubles shared with JS as `async_id_fields`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AsyncIdFields {
    /// `kExecutionAsyncId`.
    pub k_execution_async_id: AsyncId,
    /// `kTriggerAsyncId`.
    pub k_trigger_async_id: AsyncId,
    /// `kAsyncIdCounter`: the last id handed out.
    pub k_async_id_counter: AsyncId,
    /// `kDefaultTriggerAsyncId`: -1 when unset.
    pub k_default_trigger_async_id: AsyncId,
}

impl Fields {
    /// The fields at `AsyncHooks::AsyncHooks` (`src/env.cc`): `kCheck` starts
    /// at 1 ("force checks"), every other field at 0.
    pub fn new() -> Self {
        Fields {
            k_check: 1,
            ..Fields::default()
        }
    }
}

impl AsyncIdFields {
    /// The id fields at `AsyncHooks::AsyncHooks`: context (0, 0), counter 1,
    /// default trigger -1.
    pub fn new() -> Self {
        AsyncIdFields {
            k_execution_async_id: 0,
            k_trigger_async_id: 0,
            k_async_id_counter: 1,
            k_default_trigger_async_id: -1,
        }
    }
}

impl Default for AsyncIdFields {
    fn default() -> Self {
        Self::new()
    }
}
