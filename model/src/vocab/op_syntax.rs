//! The text of an op, both ways: the `Display` of [`Op`], one op per line
//! of trace syntax, and `Op::parse`, which reads it back (`super::trace`
//! handles lines, comments and `=>` expectations). An op's variant, kind
//! and facts are in `super::op`.

use super::args::{
    AsyncContext, Holder, HookCallbacks, NativeResource, NodeVersion, RejectionsMode, ResourceId,
    ScopeFlags, ScopeKind,
};
use super::op::{Op, OpKind};
use super::tokens::{quote, ParseError, Tokens};
use std::fmt;

fn opt_resource(r: &Option<ResourceId>) -> String {
    match r {
        Some(r) => format!(" {r}"),
        None => String::new(),
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = self.kind();
        match self {
            Op::OpenScope {
                kind,
                context,
                resource,
                flags,
            } => {
                write!(f, "{k} {} {}", context.async_id, context.trigger_async_id)?;
                match resource.holder {
                    Holder::Local => write!(f, " {}", resource.id)?,
                    Holder::Global => write!(f, " global {}", resource.id)?,
                }
                if flags.skip_async_hooks {
                    f.write_str(" skip-hooks")?;
                }
                if flags.skip_task_queues {
                    f.write_str(" skip-queues")?;
                }
                if *kind == ScopeKind::BareMakeCallback {
                    f.write_str(" bare")?;
                }
                Ok(())
            }
            Op::CloseScope { threw } => {
                if *threw {
                    write!(f, "{k} threw")
                } else {
                    write!(f, "{k}")
                }
            }
            Op::CloseOuter { outer } => write!(f, "{k} {outer}"),
            Op::ResetGlobal(r)
            | Op::AsyncResource(r)
            | Op::NapiAsyncInit(r)
            | Op::NapiMakeCallback(r) => write!(f, "{k} {r}"),
            Op::CreateHook { hook, callbacks } => write!(f, "{k} {hook} {callbacks}"),
            Op::EnableHook(h) | Op::DisableHook(h) => write!(f, "{k} {h}"),
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => write!(
                f,
                "{k} {async_id} {type_name} {trigger_async_id}{}",
                opt_resource(resource)
            ),
            Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            } => write!(
                f,
                "{k} {async_id} {trigger_async_id}{}",
                opt_resource(resource)
            ),
            Op::EmitAfter { async_id }
            | Op::EmitDestroy { async_id }
            | Op::ClearTimeout(async_id) => write!(f, "{k} {async_id}"),
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => write!(f, "{k} {async_id} {trigger_async_id} {resource}"),
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                write!(f, "{k} {trigger_async_id}")
            }
            Op::NextTick { query_resource } => {
                if *query_resource {
                    write!(f, "{k} resource")
                } else {
                    write!(f, "{k}")
                }
            }
            Op::UncaughtException { handled } => {
                write!(f, "{k} {}", if *handled { "handled" } else { "unhandled" })
            }
            Op::NodeVersion(v) => write!(f, "{k} {v}"),
            Op::EntryModule { tla } => {
                if *tla {
                    write!(f, "{k} tla")
                } else {
                    write!(f, "{k}")
                }
            }
            Op::AlsRun { als, store } | Op::AlsEnterWith { als, store } => {
                write!(f, "{k} {als} {store}")
            }
            Op::AlsExit(als) | Op::AlsGetStore(als) | Op::AlsDisable(als) => {
                write!(f, "{k} {als}")
            }
            Op::AlsDefault { als, value } => write!(f, "{k} {als} {value}"),
            Op::UnhandledRejections {
                mode,
                listener,
                uncaught_listener,
            } => {
                write!(f, "{k} {mode}")?;
                if *listener {
                    f.write_str(" on-unhandled-rejection")?;
                }
                if *uncaught_listener {
                    f.write_str(" on-uncaught-exception")?;
                }
                Ok(())
            }
            Op::NoForceAsyncHooksChecks
            | Op::AbortOnUncaughtException
            | Op::EndAlsRun
            | Op::TimersScope
            | Op::ExitRunInAsyncScope
            | Op::ExitDefaultTriggerScope
            | Op::TickCallback
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId
            | Op::ClearAsyncIdStack
            | Op::Catch
            | Op::Stop
            | Op::NextTickBody
            | Op::EndTick
            | Op::QueueMicrotask
            | Op::PromiseThen
            | Op::PromiseReject
            | Op::PromiseCatch
            | Op::QueueMicrotaskBody
            | Op::PromiseThenBody
            | Op::EndMicrotask
            | Op::UncaughtExceptionListener
            | Op::EndListener
            | Op::SetTimeout
            | Op::Timer
            | Op::EndTimer => f.write_str(k.name()),
        }
    }
}

const ASYNC_ID: &str = "an async id (an integer)";
const TRIGGER_ID: &str = "a trigger async id (an integer)";

fn is_type_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

impl Op {
    /// The op on one line of trace syntax, the inverse of its `Display`:
    /// its keyword, then its arguments; `t` holds the line's tokens (its
    /// comment cut off, its `=>` lines apart: `super::trace`).
    pub(super) fn parse(mut t: Tokens<'_>) -> Result<Op, ParseError> {
        let head = t.expect("an op")?;
        let Some(kind) = OpKind::from_name(head.text) else {
            return Err(t.error(
                head.column,
                format!(
                    "unknown op {}; expected one of {}",
                    quote(head.text),
                    OpKind::names()
                ),
            ));
        };
        let op = match kind {
            OpKind::NoForceAsyncHooksChecks => Op::NoForceAsyncHooksChecks,
            OpKind::EntryModule => Op::EntryModule {
                tla: t
                    .optional_word(&["tla"], "\"tla\" or end of line")?
                    .is_some(),
            },
            OpKind::TimersScope => Op::TimersScope,
            OpKind::CloseOuter => {
                const WHAT: &str = "how many native scopes are inside the one closed (1 or more)";
                let n = t.expect(WHAT)?;
                match n.text.parse::<u32>() {
                    Ok(outer) if outer >= 1 && n.text.bytes().all(|b| b.is_ascii_digit()) => {
                        Op::CloseOuter { outer }
                    }
                    _ => return Err(t.unexpected(n, WHAT)),
                }
            }
            OpKind::CallbackScope => parse_open_scope(&mut t, ScopeKind::CallbackScope)?,
            OpKind::MakeCallback => parse_open_scope(&mut t, ScopeKind::MakeCallback)?,
            OpKind::CloseScope => Op::CloseScope {
                threw: t
                    .optional_word(&["threw"], "\"threw\" or end of line")?
                    .is_some(),
            },
            OpKind::ResetGlobal => Op::ResetGlobal(t.resource("a resource (R<n>)")?),
            OpKind::CreateHook => parse_create_hook(&mut t)?,
            OpKind::EnableHook => Op::EnableHook(t.hook()?),
            OpKind::DisableHook => Op::DisableHook(t.hook()?),
            OpKind::EmitInit => {
                let async_id = t.async_id(ASYNC_ID)?;
                const TYPE: &str = "a type name (letters, digits, '_', '.', '-')";
                let ty = t.expect(TYPE)?;
                if !is_type_name(ty.text) {
                    return Err(t.unexpected(ty, TYPE));
                }
                let trigger_async_id = t.async_id(TRIGGER_ID)?;
                Op::EmitInit {
                    async_id,
                    type_name: ty.text.to_string(),
                    trigger_async_id,
                    resource: t.optional_resource()?,
                }
            }
            OpKind::EmitBefore => Op::EmitBefore {
                async_id: t.async_id(ASYNC_ID)?,
                trigger_async_id: t.async_id(TRIGGER_ID)?,
                resource: t.optional_resource()?,
            },
            OpKind::EmitAfter => Op::EmitAfter {
                async_id: t.async_id(ASYNC_ID)?,
            },
            OpKind::EmitDestroy => Op::EmitDestroy {
                async_id: t.async_id(ASYNC_ID)?,
            },
            OpKind::EnterRunInAsyncScope => Op::EnterRunInAsyncScope {
                async_id: t.async_id(ASYNC_ID)?,
                trigger_async_id: t.async_id(TRIGGER_ID)?,
                resource: t.resource("a resource (R<n>)")?,
            },
            OpKind::ExitRunInAsyncScope => Op::ExitRunInAsyncScope,
            OpKind::EnterDefaultTriggerScope => Op::EnterDefaultTriggerScope {
                trigger_async_id: t.async_id(TRIGGER_ID)?,
            },
            OpKind::ExitDefaultTriggerScope => Op::ExitDefaultTriggerScope,
            OpKind::NextTick => Op::NextTick {
                query_resource: t
                    .optional_word(&["resource"], "\"resource\" or end of line")?
                    .is_some(),
            },
            OpKind::TickCallback => Op::TickCallback,
            OpKind::NextTickBody => Op::NextTickBody,
            OpKind::EndTick => Op::EndTick,
            OpKind::UncaughtExceptionListener => Op::UncaughtExceptionListener,
            OpKind::EndListener => Op::EndListener,
            OpKind::SetTimeout => Op::SetTimeout,
            OpKind::Timer => Op::Timer,
            OpKind::EndTimer => Op::EndTimer,
            OpKind::ClearTimeout => Op::ClearTimeout(t.async_id(ASYNC_ID)?),
            OpKind::QueueMicrotask => Op::QueueMicrotask,
            OpKind::PromiseThen => Op::PromiseThen,
            OpKind::PromiseReject => Op::PromiseReject,
            OpKind::PromiseCatch => Op::PromiseCatch,
            OpKind::QueueMicrotaskBody => Op::QueueMicrotaskBody,
            OpKind::PromiseThenBody => Op::PromiseThenBody,
            OpKind::EndMicrotask => Op::EndMicrotask,
            OpKind::ExecutionAsyncId => Op::ExecutionAsyncId,
            OpKind::TriggerAsyncId => Op::TriggerAsyncId,
            OpKind::ExecutionAsyncResource => Op::ExecutionAsyncResource,
            OpKind::DefaultTriggerAsyncId => Op::DefaultTriggerAsyncId,
            OpKind::NewAsyncId => Op::NewAsyncId,
            OpKind::UncaughtException => {
                const WHAT: &str = "\"handled\" or \"unhandled\"";
                let w = t.expect(WHAT)?;
                let handled = match w.text {
                    "handled" => true,
                    "unhandled" => false,
                    _ => return Err(t.unexpected(w, WHAT)),
                };
                Op::UncaughtException { handled }
            }
            OpKind::ClearAsyncIdStack => Op::ClearAsyncIdStack,
            OpKind::Catch => Op::Catch,
            OpKind::Stop => Op::Stop,
            OpKind::NodeVersion => {
                const WHAT: &str = "a node version (20 or 26)";
                let v = t.expect(WHAT)?;
                match v.text {
                    "20" => Op::NodeVersion(NodeVersion::V20),
                    "26" => Op::NodeVersion(NodeVersion::V26),
                    _ => return Err(t.unexpected(v, WHAT)),
                }
            }
            OpKind::AlsRun => Op::AlsRun {
                als: t.als()?,
                store: t.store_value()?,
            },
            OpKind::AlsExit => Op::AlsExit(t.als()?),
            OpKind::EndAlsRun => Op::EndAlsRun,
            OpKind::AlsEnterWith => Op::AlsEnterWith {
                als: t.als()?,
                store: t.store_value()?,
            },
            OpKind::AlsGetStore => Op::AlsGetStore(t.als()?),
            OpKind::AlsDefault => Op::AlsDefault {
                als: t.als()?,
                value: t.store_value()?,
            },
            OpKind::AsyncResource => Op::AsyncResource(t.resource("a resource (R<n>)")?),
            OpKind::NapiAsyncInit => Op::NapiAsyncInit(t.resource("a resource (R<n>)")?),
            OpKind::NapiMakeCallback => Op::NapiMakeCallback(t.resource("a resource (R<n>)")?),
            OpKind::AlsDisable => Op::AlsDisable(t.als()?),
            OpKind::UnhandledRejections => parse_unhandled_rejections(&mut t)?,
            OpKind::AbortOnUncaughtException => Op::AbortOnUncaughtException,
        };
        t.end(kind.name())?;
        Ok(op)
    }
}

/// `callback-scope|make-callback ID TRIGGER [global] R<n> [skip-hooks] [skip-queues]`.
fn parse_open_scope(t: &mut Tokens<'_>, scope_kind: ScopeKind) -> Result<Op, ParseError> {
    let async_id = t.async_id(ASYNC_ID)?;
    let trigger_async_id = t.async_id(TRIGGER_ID)?;
    let holder = match t.peek() {
        Some(tok) if tok.text == "global" => {
            t.advance();
            Holder::Global
        }
        _ => Holder::Local,
    };
    let id = t.resource(match holder {
        Holder::Local => "a resource (R<n>) or \"global\"",
        Holder::Global => "a resource (R<n>)",
    })?;
    let mut flags = ScopeFlags::default();
    let mut kind = scope_kind;
    let mut bare = false;
    while let Some(tok) = t.advance() {
        let slot = match tok.text {
            "skip-hooks" => &mut flags.skip_async_hooks,
            "skip-queues" => &mut flags.skip_task_queues,
            "bare" if scope_kind == ScopeKind::MakeCallback => {
                kind = ScopeKind::BareMakeCallback;
                &mut bare
            }
            _ if scope_kind == ScopeKind::MakeCallback => {
                return Err(
                    t.unexpected(tok, "a flag (skip-hooks, skip-queues, bare) or end of line")
                )
            }
            _ => return Err(t.unexpected(tok, "a flag (skip-hooks, skip-queues) or end of line")),
        };
        if *slot {
            return Err(t.error(tok.column, format!("flag {} given twice", quote(tok.text))));
        }
        *slot = true;
    }
    Ok(Op::OpenScope {
        kind,
        context: AsyncContext {
            async_id,
            trigger_async_id,
        },
        resource: NativeResource { id, holder },
        flags,
    })
}

/// `unhandled-rejections MODE [on-unhandled-rejection] [on-uncaught-exception]`.
fn parse_unhandled_rejections(t: &mut Tokens<'_>) -> Result<Op, ParseError> {
    const MODES: &str = "a mode (throw, strict, warn, none, warn-with-error-code)";
    let m = t.expect(MODES)?;
    let mode = (m.text.parse::<RejectionsMode>()).map_err(|_| t.unexpected(m, MODES))?;
    let (mut listener, mut uncaught_listener) = (false, false);
    while let Some(tok) = t.advance() {
        let slot = match tok.text {
            "on-unhandled-rejection" if !uncaught_listener => &mut listener,
            "on-uncaught-exception" => &mut uncaught_listener,
            _ => {
                return Err(t.unexpected(
                    tok,
                    "on-unhandled-rejection, then on-uncaught-exception, or end of line",
                ))
            }
        };
        if *slot {
            return Err(t.error(tok.column, format!("{} given twice", quote(tok.text))));
        }
        *slot = true;
    }
    Ok(Op::UnhandledRejections {
        mode,
        listener,
        uncaught_listener,
    })
}

/// `create-hook H<n> none` or `create-hook H<n> CALLBACK...`.
fn parse_create_hook(t: &mut Tokens<'_>) -> Result<Op, ParseError> {
    const CALLBACKS: &str = "init, before, after, destroy, promiseResolve";
    let hook = t.hook()?;
    let first_what = format!("the hook's callbacks ({CALLBACKS}) or \"none\"");
    let first = t.expect(&first_what)?;
    let mut callbacks = HookCallbacks::default();
    if first.text == "none" {
        return Ok(Op::CreateHook { hook, callbacks });
    }
    let mut tok = Some(first);
    let mut is_first = true;
    while let Some(cb) = tok {
        let slot = match cb.text {
            "init" => &mut callbacks.init,
            "before" => &mut callbacks.before,
            "after" => &mut callbacks.after,
            "destroy" => &mut callbacks.destroy,
            "promiseResolve" => &mut callbacks.promise_resolve,
            "none" => {
                return Err(t.error(
                    cb.column,
                    "\"none\" stands alone; it cannot be combined with callbacks".to_string(),
                ))
            }
            _ if is_first => return Err(t.unexpected(cb, &first_what)),
            _ => return Err(t.unexpected(cb, &format!("a callback ({CALLBACKS}) or end of line"))),
        };
        if *slot {
            return Err(t.error(
                cb.column,
                format!("callback {} given twice", quote(cb.text)),
            ));
        }
        *slot = true;
        is_first = false;
        tok = t.advance();
    }
    Ok(Op::CreateHook { hook, callbacks })
}
