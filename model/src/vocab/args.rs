//! The arguments of ops: ids, the trace's objects (resources `R<n>`, hooks
//! `H<n>`, storages `A<n>`), how a native scope holds its resource and its
//! flags, and the node version; each with its `Display` in the trace
//! syntax (`super::tokens` reads them back).

use serde::{Deserialize, Serialize};
use std::fmt;

/// An async id. Node stores ids as doubles (`async_id_fields_`, `node::async_id`);
/// the model restricts them to integers, which is all Node ever assigns, and
/// keeps 0 and -1 meaningful as they are in Node.
pub type AsyncId = i64;

/// `node::async_context` (`src/node.h`): the pair a scope runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AsyncContext {
    /// `async_context::async_id`: becomes `executionAsyncId()`.
    pub async_id: AsyncId,
    /// `async_context::trigger_async_id`: becomes `triggerAsyncId()`.
    pub trigger_async_id: AsyncId,
}

/// A JavaScript object chosen by the trace, by identity (`R1`, `R2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ResourceId(pub u32);

/// How a native scope holds its resource (`InternalCallbackScope`'s
/// `std::variant<Local<Object>*, Global<Object>*>` on Node's main branch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Holder {
    /// A `Local<Object>` that lives as long as the scope.
    Local,
    /// A `Global<Object>*` (an fs callback's request object); `reset-global`
    /// can empty it while the scope is open.
    Global,
}

/// The resource argument of a native scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NativeResource {
    /// Which object.
    pub id: ResourceId,
    /// How the scope holds it.
    pub holder: Holder,
}

/// How a native scope is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScopeKind {
    /// `node::CallbackScope` / `InternalCallbackScope` opened directly.
    CallbackScope,
    /// `InternalMakeCallback` (`src/api/callback.cc`): the scope plus, while
    /// hooks are enabled, the JS `callbackTrampoline`. The addon that calls
    /// `node::MakeCallback` holds a `v8::TryCatch` of its own around it.
    MakeCallback,
    /// The same `node::MakeCallback`, called from JavaScript by an addon
    /// that holds no `v8::TryCatch` (`make-callback ... bare`): what the
    /// callback throws goes on to that JavaScript, or, on Node 26 through
    /// the trampoline, is lost (docs/node-findings.md F8).
    BareMakeCallback,
}

impl ScopeKind {
    /// `InternalMakeCallback`, whoever calls it.
    pub fn makes_callback(self) -> bool {
        matches!(self, ScopeKind::MakeCallback | ScopeKind::BareMakeCallback)
    }
}

/// `InternalCallbackScope` flags (`src/node_internals.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScopeFlags {
    /// `kSkipAsyncHooks`: no `before` / `after`.
    pub skip_async_hooks: bool,
    /// `kSkipTaskQueues`: no microtasks or ticks at the outermost close.
    pub skip_task_queues: bool,
}

/// An `AsyncLocalStorage` instance chosen by the trace, by identity (`A1`,
/// `A2`, ...): `new AsyncLocalStorage()` (`lib/async_hooks.js`), made when
/// the trace first names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AlsId(pub u32);

/// A store value a trace gives `AsyncLocalStorage` (`run`, `enterWith`): a
/// number, so that `getStore()` answers compare as text. `undefined` is
/// written as the absence of a value.
pub type StoreValue = u32;

/// Which Node.js release line the model describes: the node version.
/// Where the two differ observably in the modelled code, `docs/spec.md`
/// ("Node versions") names the difference with its source and what each
/// binary printed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum NodeVersion {
    /// node v20 (the oracle: v20.20.2): no `Global<Object>*` callback scopes,
    /// `AsyncLocalStorage` built on async hooks.
    V20,
    /// Node 26 (the oracle: v26.12.1), the release line of main, where the
    /// pull request lands: `Global<Object>*` scopes, `AsyncContextFrame`.
    #[default]
    V26,
}

impl NodeVersion {
    /// Every node version, the default last.
    pub const ALL: [NodeVersion; 2] = [NodeVersion::V20, NodeVersion::V26];

    /// The major version number.
    pub fn major(self) -> u32 {
        match self {
            NodeVersion::V20 => 20,
            NodeVersion::V26 => 26,
        }
    }

    /// The node version the model takes for a binary with this major
    /// version: 20 and below are v20's, 21 and above 26's (the differences
    /// modelled landed before 26: `AsyncContextFrame` became the default in
    /// 24).
    pub fn of_major(major: u32) -> NodeVersion {
        if major <= 20 {
            NodeVersion::V20
        } else {
            NodeVersion::V26
        }
    }
}

impl fmt::Display for NodeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.major())
    }
}

impl std::str::FromStr for NodeVersion {
    type Err = String;

    /// `20` or `26`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "20" => Ok(NodeVersion::V20),
            "26" => Ok(NodeVersion::V26),
            other => Err(format!(
                "node version `{other}`: the model has the node versions 20 and 26"
            )),
        }
    }
}

/// `--unhandled-rejections=MODE` (`getUnhandledRejectionsMode`,
/// `lib/internal/process/promises.js`): what `processPromiseRejections`
/// does with each rejection still unhandled.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum RejectionsMode {
    /// `throw` (the default): `unhandledRejection`; if no listener took
    /// it, `triggerUncaughtException(err, true)`.
    #[default]
    Throw,
    /// `strict`: `triggerUncaughtException(err, true)` first; if that
    /// returns, `unhandledRejection`, and a warning if no listener took it.
    Strict,
    /// `warn`: `unhandledRejection`, then a warning.
    Warn,
    /// `none`: `unhandledRejection` only.
    None,
    /// `warn-with-error-code`: `unhandledRejection`; if no listener took
    /// it, a warning and `process.exitCode = 1`.
    WarnWithErrorCode,
}

impl RejectionsMode {
    /// Every mode, as `--unhandled-rejections` spells them.
    pub const ALL: [RejectionsMode; 5] = [
        RejectionsMode::Throw,
        RejectionsMode::Strict,
        RejectionsMode::Warn,
        RejectionsMode::None,
        RejectionsMode::WarnWithErrorCode,
    ];

    /// The flag's value.
    pub fn name(self) -> &'static str {
        match self {
            RejectionsMode::Throw => "throw",
            RejectionsMode::Strict => "strict",
            RejectionsMode::Warn => "warn",
            RejectionsMode::None => "none",
            RejectionsMode::WarnWithErrorCode => "warn-with-error-code",
        }
    }
}

impl fmt::Display for RejectionsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for RejectionsMode {
    type Err = String;

    /// One of the flag's values.
    fn from_str(s: &str) -> Result<Self, String> {
        (RejectionsMode::ALL.iter().copied())
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                format!("unhandled-rejections mode `{s}`: one of throw, strict, warn, none, warn-with-error-code")
            })
    }
}

/// A hook created by `async_hooks.createHook` (`H1`, `H2`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HookId(pub u32);

/// Which callbacks a hook has (`AsyncHook` constructor, `lib/async_hooks.js`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HookCallbacks {
    /// `init`.
    pub init: bool,
    /// `before`.
    pub before: bool,
    /// `after`.
    pub after: bool,
    /// `destroy`.
    pub destroy: bool,
    /// `promiseResolve`.
    pub promise_resolve: bool,
}

impl HookCallbacks {
    /// A hook with all five callbacks, as `test/async-hooks/init-hooks.js` makes.
    pub const ALL: HookCallbacks = HookCallbacks {
        init: true,
        before: true,
        after: true,
        destroy: true,
        promise_resolve: true,
    };
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R{}", self.0)
    }
}

impl fmt::Display for AlsId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "A{}", self.0)
    }
}

impl fmt::Display for HookId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "H{}", self.0)
    }
}

impl fmt::Display for HookCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (self.init, "init"),
            (self.before, "before"),
            (self.after, "after"),
            (self.destroy, "destroy"),
            (self.promise_resolve, "promiseResolve"),
        ];
        let mut first = true;
        for (on, name) in names {
            if on {
                if !first {
                    f.write_str(" ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}
