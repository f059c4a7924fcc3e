//! Op to statement: the JavaScript each op of the trace becomes, in the
//! block of the frame it runs in.

use super::*;

/// What a make-callback's callback throws (`close threw`).
const THROWS: &str = "throw new Error('the callback throws');";

impl<S: AsyncIdStack> Writer<S> {
    /// A scheduled callback (tick or microtask) block, opened here.
    pub(super) fn schedule(&mut self, head: &str) -> usize {
        self.schedule_with(head, "}));")
    }

    /// A scheduled callback block whose call ends in `tail` (a Timeout's:
    /// its duration and `unref()`).
    pub(super) fn schedule_with(&mut self, head: &str, tail: &str) -> usize {
        let body = self.new_block();
        let block = self.current();
        self.blocks[block].items.push(Item::Call {
            parts: vec![(head.to_string(), body)],
            tail: tail.to_string(),
        });
        body
    }

    /// An emit's optional last argument, the resource: `, rN`, or nothing.
    fn resource_arg(&mut self, resource: &Option<model::vocab::ResourceId>) -> String {
        match resource {
            Some(id) => {
                self.resources.insert(id.0);
                format!(", {}", r(id.0))
            }
            None => String::new(),
        }
    }

    /// Open a frame's callback: the op's statement is a call with one
    /// callback, whose block the frame's ops go into.
    pub(super) fn open(&mut self, head: String, tail: &str) {
        let body = self.new_block();
        let block = self.current();
        self.blocks[block].items.push(Item::Call {
            parts: vec![(head, body)],
            tail: tail.to_string(),
        });
        let at = self.blocks[block].items.len() - 1;
        self.frames.push(CodeFrame {
            block: body,
            call: Some((block, at)),
            dead: false,
            scope_args: None,
        });
    }

    /// The bare make-callback's call whose callback threw last
    /// (`bare_call`), written as `{prefix}binding.bareMakeCallback(...` and
    /// closed by `tail`: `assert.throws(() => ` where the caller catches
    /// the exception, `assert.strictEqual(` where Node loses it.
    pub(super) fn rewrite_bare_call(
        &mut self,
        i: usize,
        prefix: &str,
        tail: &str,
    ) -> Result<(), NotWritten> {
        let Some((block, at)) = self.bare_call.take() else {
            return refuse(i, "no bare make-callback's call threw before it");
        };
        if let Item::Call { parts, tail: t } = &mut self.blocks[block].items[at] {
            if let Some((head, _)) = parts.first_mut() {
                *head = format!("{prefix}{head}");
            }
            *t = tail.to_string();
        }
        Ok(())
    }

    /// Where the last bare make-callback's callback threw (`bare_call`):
    /// its call (block, item index), the callback's block, and the index of
    /// the throw there.
    fn bare_throw_site(&self, i: usize) -> Result<(usize, usize, usize, usize), NotWritten> {
        let Some((block, at)) = self.bare_call else {
            return refuse(i, "no bare make-callback's call threw before it");
        };
        let Item::Call { parts, .. } = &self.blocks[block].items[at] else {
            return refuse(i, "the bare make-callback's call is not a call");
        };
        let body = parts[0].1;
        let Some(throw_at) = (self.blocks[body].items.iter())
            .rposition(|item| matches!(item, Item::Line(l) if l == THROWS))
        else {
            return refuse(i, "the bare make-callback's callback does not throw");
        };
        Ok((block, at, body, throw_at))
    }

    /// Node lost the exception of the bare make-callback's callback: its
    /// call returns `undefined`, and the callback counts its end just
    /// before its throw (`callbackEnds`), which the line after the call
    /// checks: an assertion failing in it would be lost with it.
    pub(super) fn lost_exception(&mut self, i: usize) -> Result<(), NotWritten> {
        let (block, at, body, throw_at) = self.bare_throw_site(i)?;
        self.lost += 1;
        let count = Item::Line("callbackEnds++;".to_string());
        self.blocks[body].items.insert(throw_at, count);
        let check = format!("assert.strictEqual(callbackEnds, {});", self.lost);
        self.blocks[block].items.insert(at + 1, Item::Line(check));
        self.rewrite_bare_call(i, "assert.strictEqual(", "})), undefined);")
    }

    /// After an op that reports the exception a bare make-callback handed
    /// back (`uncaught-exception` with it in flight): the lines the op wrote
    /// from `(block, from)` on, its ids' anchor first, go into that
    /// make-callback's callback, before its throw, where the exception
    /// starts (a listener installed after the call would come too late).
    pub(super) fn end_in_flight(
        &mut self,
        i: usize,
        (block, from): (usize, usize),
    ) -> Result<(), NotWritten> {
        let (_, _, body, throw_at) = self.bare_throw_site(i)?;
        self.bare_call = None;
        let lines: Vec<Item> = self.blocks[block].items.drain(from..).collect();
        self.blocks[body].items.splice(throw_at..throw_at, lines);
        Ok(())
    }

    /// `close-outer K`: the scope it deletes is opened on the heap
    /// (`binding.heapCallbackScope`, as `napi_open_callback_scope` opens
    /// one) and deleted from here; its code frame goes, and what the trace
    /// does after the inner scopes close runs after its callback returned,
    /// in the frame around it, as in the model.
    pub(super) fn close_outer(&mut self, i: usize, outer: u32) -> Result<(), NotWritten> {
        let target = self.a.outer_scope_index(outer).filter(|_| outer > 0);
        let frame = target.and_then(|t| self.frames.get(t).cloned().map(|f| (t, f)));
        let Some((
            t,
            CodeFrame {
                call: Some((block, at)),
                scope_args: Some(args),
                dead: false,
                ..
            },
        )) = frame
        else {
            return refuse(
                i,
                format!("close-outer {outer}: only a scope the test opened with binding.callbackScope (a Local resource, no exception in it) is deleted out of order"),
            );
        };
        let key = self.heap_scopes;
        self.heap_scopes += 1;
        if let Item::Call { parts, .. } = &mut self.blocks[block].items[at] {
            if let Some((head, _)) = parts.first_mut() {
                *head =
                    format!("binding.heapCallbackScope({args}, {key}, common.mustCall(() => {{");
            }
        }
        self.push(format!("binding.deleteCallbackScope({key});"));
        self.frames.remove(t);
        Ok(())
    }

    /// The module test's source has a top-level `await`: v20's waits for the
    /// loader with one (ESM_WAIT_V20), Node 26's only for `entry-module tla`
    /// (the model's `module_top_level_await`, read when the test is
    /// written: `node-version` may come after `entry-module`).
    pub(super) fn has_top_level_await(&self) -> bool {
        self.a.version == NodeVersion::V20 || self.a.microtasks.module_top_level_await
    }

    /// `stop`: the test runs in a Worker and calls `process.exit()` there,
    /// which stops the worker's environment as `worker.terminate()` does
    /// (`Worker::Exit` → `Stop` → `Environment::ExitEnv`). The worker's
    /// script body runs in a MessagePort's callback, not in a scope like the
    /// main script's, so everything before the stop runs from the event loop.
    pub(super) fn stop(&mut self, i: usize) -> Result<(), NotWritten> {
        if self.module {
            return refuse(i, "stop in an ES module entry: a Worker of an .mjs test");
        }
        let only_event_loop = self.event_loop.is_some()
            && self.blocks[0]
                .items
                .iter()
                .filter(|item| item.is_code())
                .count()
                == 1
            && self.frames.last().is_some_and(|f| !f.dead);
        if !only_event_loop {
            return refuse(
                i,
                "a test that stops runs in a Worker, whose script body runs in a MessagePort's callback: everything before the stop must run from the event loop, after the main script's close",
            );
        }
        self.push("// The worker's environment stops here (Environment::ExitEnv): no more");
        self.push("// JS runs in it, and its scopes close on the stopping path.");
        self.push("process.exit();");
        self.stopped = true;
        Ok(())
    }

    /// A callback-scope's JS goes on after a handled exception: in the next
    /// callback the addon calls in the same scope.
    pub(super) fn continue_after_exception(&mut self, i: usize, op: &Op) -> Result<(), NotWritten> {
        // A close-outer ends a frame other than the innermost, in which it
        // runs.
        let runs_in_top = !op.ends_frame() || matches!(op, Op::CloseOuter { .. });
        if self.frames.last().is_some_and(|f| f.dead) && runs_in_top {
            let Some(CodeFrame {
                call: Some((block, at)),
                ..
            }) = self.frames.last().cloned()
            else {
                return refuse(
                    i,
                    "JS after an exception in a frame the test cannot go on in",
                );
            };
            let body = self.new_block();
            if let Item::Call { parts, .. } = &mut self.blocks[block].items[at] {
                parts.push(("}), common.mustCall(() => {".to_string(), body));
            }
            let top = self.frames.last_mut().expect("checked");
            top.block = body;
            top.dead = false;
        }
        Ok(())
    }

    /// The statement of `op` (run A's ids, Node-handed ones encoded), before
    /// the model runs it.
    pub(super) fn statement(&mut self, i: usize, op: &Op) -> Result<(), NotWritten> {
        let arg = |w: &Self, id: AsyncId| match w.node_id(id) {
            Some(_) => id_js(HANDED + id),
            None => literal(id).to_string(),
        };
        match op {
            Op::NoForceAsyncHooksChecks => self.no_force = true,
            Op::NodeVersion(_) => {}
            Op::EntryModule { .. } => self.module = true,
            Op::PromiseCatch => {
                return refuse(i, "promise-catch is not written into a test yet")
            }
            // The caller catches what the bare make-callback handed back.
            Op::Catch => self.rewrite_bare_call(
                i,
                "assert.throws(() => ",
                "})), { message: 'the callback throws' });",
            )?,
            Op::SetTimeout => self.set_timeout(),
            Op::Timer => self.timer(i)?,
            Op::ClearTimeout(id) => self.clear_timeout(i, *id)?,
            Op::EndTimer => {}
            Op::AbortOnUncaughtException => self.abort_on_uncaught = true,
            Op::UnhandledRejections { .. } => {
                return refuse(
                    i,
                    "--unhandled-rejections and the program's listeners are not written into a test yet",
                )
            }
            Op::AlsDefault { als, value } => {
                self.storages.insert(als.0);
                self.defaults.insert(als.0, *value);
            }
            Op::OpenScope {
                kind,
                context,
                resource,
                ..
            } => {
                let global = resource.holder == model::vocab::Holder::Global;
                if global && kind.makes_callback() {
                    return refuse(
                        i,
                        "node::MakeCallback takes no Global<Object>* resource holder",
                    );
                }
                self.binding = true;
                self.resources.insert(resource.id.0);
                let (f, key) = match kind {
                    ScopeKind::MakeCallback => ("makeCallback", String::new()),
                    // From the event loop no JavaScript is below it: V8
                    // reports what its callback throws at once, as the
                    // addon's TryCatch made verbose does
                    // (`binding.reportUncaught()`).
                    ScopeKind::BareMakeCallback if self.a.frames.is_empty() => {
                        ("makeCallback", String::new())
                    }
                    ScopeKind::BareMakeCallback => ("bareMakeCallback", String::new()),
                    _ if global => ("globalCallbackScope", format!(", {}", resource.id.0)),
                    _ => ("callbackScope", String::new()),
                };
                let args = format!(
                    "{}, {}, {}",
                    r(resource.id.0),
                    arg(self, context.async_id),
                    arg(self, context.trigger_async_id)
                );
                let head = format!("binding.{f}({args}{key}, common.mustCall(() => {{");
                self.open(head, "}));");
                if f == "callbackScope" {
                    if let Some(top) = self.frames.last_mut() {
                        top.scope_args = Some(args);
                    }
                }
            }
            Op::CloseScope { threw } => {
                let make_callback = matches!(self.a.frames.last(), Some(Frame::Native(s)) if s.kind.makes_callback() && !s.threw);
                let bare = matches!(self.a.frames.last(), Some(Frame::Native(s)) if s.kind == ScopeKind::BareMakeCallback)
                    && self.a.frames.len() > 1;
                if make_callback && *threw {
                    // The addon's TryCatch takes it (the scope is marked
                    // failed), or with no TryCatch (bare) it goes to the
                    // caller, or is lost: what follows rewrites the call.
                    self.push(THROWS);
                    if bare {
                        self.bare_call = self.frames.last().and_then(|f| f.call);
                    }
                } else if make_callback {
                    // What the callback returns comes back from
                    // node::MakeCallback only if it ran to its end: an
                    // assertion that throws in it cannot go unnoticed.
                    self.push("return 'returned';");
                    if let Some(CodeFrame {
                        call: Some((block, at)),
                        ..
                    }) = self.frames.last().cloned()
                    {
                        if let Item::Call { parts, tail } = &mut self.blocks[block].items[at] {
                            if let Some((head, _)) = parts.first_mut() {
                                *head = format!("assert.strictEqual({head}");
                            }
                            *tail = "})), 'returned');".to_string();
                        }
                    }
                }
            }
            Op::CloseOuter { outer } => self.close_outer(i, *outer)?,
            Op::TimersScope => {
                self.binding = true;
                self.timers = true;
                self.open("inTimersScope(common.mustCall(() => {".to_string(), "}));");
            }
            Op::ResetGlobal(resource) => {
                self.binding = true;
                self.push(format!("binding.resetGlobal({});", resource.0));
            }
            Op::Stop => self.stop(i)?,
            Op::CreateHook { hook, callbacks } => {
                let mut names = Vec::new();
                for (on, name) in [
                    (callbacks.init, "init"),
                    (callbacks.before, "before"),
                    (callbacks.after, "after"),
                    (callbacks.destroy, "destroy"),
                    (callbacks.promise_resolve, "promiseResolve"),
                ] {
                    if on {
                        names.push(name);
                    }
                }
                if self.hooks.insert(hook.0, names).is_some() {
                    return refuse(i, "a hook created twice under one name");
                }
            }
            Op::EnableHook(h) => {
                self.push(format!("hook{}.enable();", h.0));
            }
            Op::DisableHook(h) => {
                self.push(format!("hook{}.disable();", h.0));
            }
            Op::EmitInit {
                async_id,
                type_name,
                trigger_async_id,
                resource,
            } => {
                self.from_internal.insert("emitInit");
                let res = self.resource_arg(resource);
                self.push(format!(
                    "emitInit({}, '{type_name}', {}{res});",
                    arg(self, *async_id),
                    arg(self, *trigger_async_id)
                ));
            }
            Op::EmitBefore {
                async_id,
                trigger_async_id,
                resource,
            } => {
                self.from_internal.insert("emitBefore");
                let res = self.resource_arg(resource);
                self.push(format!(
                    "emitBefore({}, {}{res});",
                    arg(self, *async_id),
                    arg(self, *trigger_async_id)
                ));
            }
            Op::EmitAfter { async_id } => {
                self.from_internal.insert("emitAfter");
                self.push(format!("emitAfter({});", arg(self, *async_id)));
            }
            Op::EmitDestroy { async_id } => {
                self.from_internal.insert("emitDestroy");
                self.push(format!("emitDestroy({});", arg(self, *async_id)));
            }
            Op::EnterRunInAsyncScope {
                async_id,
                trigger_async_id,
                resource,
            } => {
                self.uses_rias = true;
                self.resources.insert(resource.0);
                // A resource `async-resource` did not make is made here, and
                // captures the frame current now (the model's reading of
                // `new AsyncResource(...).runInAsyncScope(fn)`).
                let n = resource.0;
                if !self.made.contains(&n)
                    && (self.a.context_frame.has_stores() || self.captured.contains(&n))
                {
                    self.captured.insert(n);
                    self.push(format!(
                        "{}[contextFrameSymbol] = AsyncContextFrame.current();",
                        r(n)
                    ));
                }
                let head = format!(
                    "runInAsyncScope({}, {}, {}, common.mustCall(() => {{",
                    r(resource.0),
                    arg(self, *async_id),
                    arg(self, *trigger_async_id)
                );
                self.open(head, "}));");
            }
            Op::EnterDefaultTriggerScope { trigger_async_id } => {
                self.from_internal.insert("defaultTriggerAsyncIdScope");
                let head = format!(
                    "defaultTriggerAsyncIdScope({}, common.mustCall(() => {{",
                    arg(self, *trigger_async_id)
                );
                self.open(head, "}));");
            }
            Op::AlsRun { als, store } => {
                self.storages.insert(als.0);
                self.open(
                    format!("als{}.run({store}, common.mustCall(() => {{", als.0),
                    "}));",
                );
            }
            Op::AlsExit(als) => {
                self.storages.insert(als.0);
                self.open(
                    format!("als{}.exit(common.mustCall(() => {{", als.0),
                    "}));",
                );
            }
            Op::AlsEnterWith { als, store } => {
                self.storages.insert(als.0);
                self.push(format!("als{}.enterWith({store});", als.0));
            }
            Op::AlsGetStore(_)
            | Op::ExecutionAsyncId
            | Op::TriggerAsyncId
            | Op::ExecutionAsyncResource
            | Op::DefaultTriggerAsyncId
            | Op::NewAsyncId => {
                // Written with what the model answers (see `answer`).
            }
            Op::AsyncResource(resource) => {
                // What `new AsyncResource()` does with the frame on Node 26,
                // on the trace's object (its ids are runInAsyncScope's).
                let n = resource.0;
                self.resources.insert(n);
                self.made.insert(n);
                self.captured.insert(n);
                self.push(format!(
                    "{}[contextFrameSymbol] = AsyncContextFrame.current();",
                    r(n)
                ));
            }
            Op::AlsDisable(als) => {
                self.storages.insert(als.0);
                self.push(format!("als{}.disable();", als.0));
            }
            Op::NapiAsyncInit(resource) => {
                self.napi = true;
                self.resources.insert(resource.0);
                self.push(format!("napi.asyncInit({});", r(resource.0)));
            }
            Op::NapiMakeCallback(resource) => {
                if self.abort_on_uncaught {
                    // V8 predicts the catch at a throw: the model's caller
                    // of napi_make_callback catches what it hands back (as
                    // the conformance program's try/catch does), which
                    // keeps a throw inside from aborting.
                    return refuse(
                        i,
                        "napi-make-callback under --abort-on-uncaught-exception: the model's JavaScript caller catches, which the test does not write yet",
                    );
                }
                self.napi = true;
                self.open(
                    format!(
                        "napi.makeCallback({}, common.mustCall(() => {{",
                        r(resource.0)
                    ),
                    "}));",
                );
            }
            Op::NextTick { .. } | Op::NextTickBody => {
                let id = self.a.async_hooks.async_id_fields.k_async_id_counter + 1;
                let block = self.schedule("process.nextTick(common.mustCall(() => {");
                self.ticks.insert(id, block);
            }
            Op::TickCallback => {
                self.push("process._tickCallback();");
            }
            Op::QueueMicrotask | Op::QueueMicrotaskBody => {
                let block = self.schedule("queueMicrotask(common.mustCall(() => {");
                self.microtasks.push(block);
            }
            Op::PromiseThen | Op::PromiseThenBody => {
                let block = self.schedule("Promise.resolve().then(common.mustCall(() => {");
                self.microtasks.push(block);
            }
            Op::PromiseReject => {
                // The test's `unhandledRejection` listener records where
                // processPromiseRejections reports it (see `finish`).
                self.rejects = true;
                self.push("Promise.reject(new Error('rejected'));");
            }
            Op::UncaughtException { handled } => {
                // The exception a bare make-callback handed back goes on
                // from its call: what the op writes goes into its callback,
                // before the throw.
                self.in_flight = self.a.exception_in_flight;
                let leaves_body = (self.a.catching_microtask())
                    .is_some_and(|m| self.a.frames[m].is_module_body());
                if leaves_body && self.has_top_level_await() != self.a.microtasks.module_top_level_await {
                    return refuse(i, "a throw out of an ES module's body without `tla`: v20's test waits for the loader with a top-level await, which makes the rejection one job longer (write `entry-module tla`)");
                }
                self.body_threw |= leaves_body;
                self.module_rejection_unhandled |= leaves_body && !handled;
                match self.a.frames.last() {
                    Some(Frame::Native(s)) if s.kind.makes_callback() && !s.main_script =>
                    {
                        // As the conformance addon does it: the addon's
                        // TryCatch reports what the callback throws (a bare
                        // one's only from the event loop: the model refuses
                        // it elsewhere).
                        self.push("// Reported as uncaught while the MakeCallback scope is open, as for a");
                        self.push("// MakeCallback made from the event loop.");
                        self.push("binding.reportUncaught();");
                    }
                    Some(Frame::Microtask { .. } | Frame::Tick { .. }) => {
                        self.threw_in_microtask = self.a.catching_microtask();
                        // Thrown into a promise reaction's callback: it
                        // rejects the derived promise, which the test's
                        // `unhandledRejection` listener sees later.
                        let job = self.threw_in_microtask.map(|m| &self.a.frames[m]);
                        if let Some(Frame::Microtask {
                            job: RunningMicrotask::Reaction { .. },
                            ..
                        }) = job
                        {
                            self.rejects = true;
                            if !self.in_flight {
                                self.push("throw new Error('rejects the derived promise');");
                            }
                            return Ok(());
                        }
                        // Into a queueMicrotask callback: reported once the
                        // job is over, and the checkpoint goes on. Out of a
                        // tick run by a `Close` or a native scope's
                        // `_tickCallback()`: the frames up to there end
                        // (`follow_frames`).
                    }
                    // Out of a Timeout's callback, through processTimers and
                    // runTimeouts, to RunTimers' TryCatch, which reports it;
                    // RunTimers calls again: the scope goes on in the next
                    // callback of inTimersScope.
                    Some(Frame::Native(_) | Frame::Timer { .. }) => {}
                    _ => return refuse(i, "an uncaught exception thrown in a JS frame"),
                }
                if self.frames.len() == 1
                    && matches!(self.a.frames.last(), Some(Frame::Native(s)) if s.main_script)
                {
                    self.main_threw_at = Some(match (self.in_flight, self.bare_call) {
                        (true, Some((_, at))) => at,
                        _ => self.blocks[0].items.len(),
                    });
                }
                if *handled {
                    self.push("process.once('uncaughtException', common.mustCall());");
                }
                if !self.in_flight {
                    self.push("throw new Error('uncaught');");
                }
            }
            Op::UncaughtExceptionListener | Op::EndListener => {
                return refuse(
                    i,
                    "uncaught-exception-listener: a listener body is not written into a test yet",
                )
            }
            Op::ClearAsyncIdStack => {
                self.from_internal.insert("clearAsyncIdStack");
                self.push("clearAsyncIdStack();");
            }
            Op::EndTick
            | Op::EndMicrotask
            | Op::ExitRunInAsyncScope
            | Op::ExitDefaultTriggerScope
            | Op::EndAlsRun => {}
        }
        Ok(())
    }
}
