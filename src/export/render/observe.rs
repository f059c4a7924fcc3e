//! Observation to assertion: what an op's answer and the hooks' calls
//! become in the test (`assert.strictEqual`, the hook calls checked, the
//! resources told apart).

use super::*;

impl<S: AsyncIdStack> Writer<S> {
    pub(super) fn resource_view(
        &mut self,
        index: usize,
        view: &ResourceView,
    ) -> Result<String, NotWritten> {
        Ok(match view {
            ResourceView::Resource(id) => {
                self.resources.insert(id.0);
                r(id.0)
            }
            ResourceView::Undefined => "undefined".to_string(),
            ResourceView::Process => "process".to_string(),
            ResourceView::Unspecified => {
                return refuse(index, "the model calls this executionAsyncResource() unspecified (a read of a scope that has returned: freed memory, which may crash Node 26), and nothing unspecified is exported")
            }
            other => return refuse(index, format!("a resource the test cannot name before it sees it: {other}")),
        })
    }

    /// What a callback sees as it begins (a tick's, a microtask's, a
    /// Timeout's): the hooks' calls so far, then its ids.
    fn check_ids_seen(&mut self, execution_async_id: AsyncId, trigger_async_id: AsyncId) {
        self.flush();
        self.from_async_hooks.insert("executionAsyncId");
        self.from_async_hooks.insert("triggerAsyncId");
        self.push(format!(
            "assert.strictEqual(executionAsyncId(), {});",
            id_js(execution_async_id)
        ));
        self.push(format!(
            "assert.strictEqual(triggerAsyncId(), {});",
            id_js(trigger_async_id)
        ));
    }

    /// `assert.strictEqual(executionAsyncResource(), ...)` and the like.
    pub(super) fn check_resource(
        &mut self,
        index: usize,
        view: &ResourceView,
    ) -> Result<(), NotWritten> {
        self.from_async_hooks.insert("executionAsyncResource");
        match view {
            ResourceView::Main | ResourceView::TopLevel => {
                let (name, bound, other, other_bound) = if *view == ResourceView::Main {
                    (
                        "mainResource",
                        self.main_bound,
                        "topLevelResource",
                        self.top_bound,
                    )
                } else {
                    (
                        "topLevelResource",
                        self.top_bound,
                        "mainResource",
                        self.main_bound,
                    )
                };
                if bound {
                    self.push(format!(
                        "assert.strictEqual(executionAsyncResource(), {name});"
                    ));
                } else {
                    if self.current() == 0 {
                        // Bound where it is declared: a `const`.
                        self.bound_inline.insert(name);
                        self.push(format!("const {name} = executionAsyncResource();"));
                    } else {
                        self.push(format!("{name} = executionAsyncResource();"));
                    }
                    self.push(format!("assert.deepStrictEqual({name}, {{}});"));
                    if other_bound {
                        self.push(format!("assert.notStrictEqual({name}, {other});"));
                    }
                    if *view == ResourceView::Main {
                        self.main_bound = true;
                    } else {
                        self.top_bound = true;
                    }
                }
            }
            ResourceView::Immediate(id) | ResourceView::Timeout(id) => {
                self.uses_timer_symbol = true;
                self.push(format!(
                    "assert.strictEqual(executionAsyncResource()[timer_async_id_symbol], {});",
                    id_js(*id)
                ));
            }
            ResourceView::TickObject(id)
            | ResourceView::Microtask(id)
            | ResourceView::Promise(id) => {
                self.uses_symbol = true;
                self.push(format!(
                    "assert.strictEqual(executionAsyncResource()[async_id_symbol], {});",
                    id_js(*id)
                ));
            }
            ResourceView::Unspecified => {
                // Not called: the answer would come through a pointer to a
                // scope that is gone, and nothing unspecified is exported.
                self.push("// executionAsyncResource() would read freed memory here: not called.");
            }
            other => {
                let js = self.resource_view(index, other)?;
                self.push(format!(
                    "assert.strictEqual(executionAsyncResource(), {js});"
                ));
            }
        }
        Ok(())
    }

    pub(super) fn hook_call(
        &mut self,
        index: usize,
        o: &Observation,
    ) -> Result<String, NotWritten> {
        let Observation::Hook {
            hook,
            event,
            execution_async_id,
            trigger_async_id,
        } = o
        else {
            return refuse(index, "not a hook call");
        };
        let name = format!("'hook{}'", hook.0);
        let (e, t) = (id_js(*execution_async_id), id_js(*trigger_async_id));
        Ok(match event {
            HookEvent::Init {
                async_id,
                type_name,
                trigger_async_id: trigger,
                resource,
            } => {
                let res = match resource {
                    ResourceView::Resource(id) => {
                        self.resources.insert(id.0);
                        format!("'{}'", r(id.0))
                    }
                    ResourceView::Undefined => "undefined".to_string(),
                    // v20's nextTick makes a plain object.
                    ResourceView::TickObject(_) if self.a.version == NodeVersion::V20 => {
                        "'Object'".to_string()
                    }
                    ResourceView::TickObject(_) => "'TickObject'".to_string(),
                    ResourceView::Immediate(_) => "'Immediate'".to_string(),
                    ResourceView::Microtask(_) => "'AsyncResource'".to_string(),
                    ResourceView::Promise(_) => "'Promise'".to_string(),
                    ResourceView::Timeout(_) => "'Timeout'".to_string(),
                    other => return refuse(index, format!("an init hook with resource {other}")),
                };
                format!(
                    "[{name}, 'init', {}, '{type_name}', {}, {res}, {e}, {t}]",
                    id_js(*async_id),
                    id_js(*trigger)
                )
            }
            HookEvent::Before(id) => format!("[{name}, 'before', {}, {e}, {t}]", id_js(*id)),
            HookEvent::After(id) => format!("[{name}, 'after', {}, {e}, {t}]", id_js(*id)),
            HookEvent::Destroy(id) => format!("[{name}, 'destroy', {}, {e}, {t}]", id_js(*id)),
            HookEvent::PromiseResolve(id) => {
                format!("[{name}, 'promiseResolve', {}, {e}, {t}]", id_js(*id))
            }
        })
    }

    /// Write what op `i` answered (its direct result), and route what
    /// the hooks and callbacks saw.
    pub(super) fn answer(
        &mut self,
        i: usize,
        op: &Op,
        observations: &[Observation],
    ) -> Result<(), NotWritten> {
        for o in observations {
            match o {
                // Node 26 loses what the bare make-callback's callback
                // threw: its call returns.
                Observation::ExceptionLost => self.lost_exception(i)?,
                Observation::ExecutionAsyncId(id) => {
                    self.from_async_hooks.insert("executionAsyncId");
                    self.push(format!(
                        "assert.strictEqual(executionAsyncId(), {});",
                        id_js(*id)
                    ));
                }
                Observation::TriggerAsyncId(id) => {
                    self.from_async_hooks.insert("triggerAsyncId");
                    self.push(format!(
                        "assert.strictEqual(triggerAsyncId(), {});",
                        id_js(*id)
                    ));
                }
                Observation::ExecutionAsyncResource(view) => self.check_resource(i, view)?,
                Observation::DefaultTriggerAsyncId(id) => {
                    self.from_internal.insert("getDefaultTriggerAsyncId");
                    self.push(format!(
                        "assert.strictEqual(getDefaultTriggerAsyncId(), {});",
                        id_js(*id)
                    ));
                }
                Observation::NewAsyncId(id) => {
                    self.from_internal.insert("newAsyncId");
                    self.push(format!("assert.strictEqual(newAsyncId(), {});", id_js(*id)));
                }
                Observation::Store { als, value } => {
                    self.storages.insert(als.0);
                    let v = value.map_or("undefined".to_string(), |v| v.to_string());
                    self.push(format!("assert.strictEqual(als{}.getStore(), {v});", als.0));
                }
                Observation::Hook { .. } => {
                    let call = self.hook_call(i, o)?;
                    self.pending.push(call);
                }
                Observation::Tick {
                    async_id,
                    execution_async_id,
                    trigger_async_id,
                    resource,
                } => {
                    let model_id = model_id(*async_id);
                    let Some(&block) = self.ticks.get(&model_id) else {
                        return refuse(
                            i,
                            format!("tick {model_id} runs, and the test did not schedule it"),
                        );
                    };
                    self.ran.insert(block);
                    self.in_block(block, |w| {
                        w.check_ids_seen(*execution_async_id, *trigger_async_id);
                        if let Some(view) = resource {
                            w.check_resource(i, view)?;
                        }
                        Ok(())
                    })?;
                    // Every storage the test has without a store there.
                    let listed: BTreeSet<u32> = observations
                        .iter()
                        .filter_map(|o| match o {
                            Observation::TickStore {
                                async_id: a, als, ..
                            } if a == async_id => Some(als.0),
                            _ => None,
                        })
                        .collect();
                    let unlisted: Vec<u32> = self.storages.difference(&listed).copied().collect();
                    self.in_block(block, |w| {
                        for s in unlisted {
                            w.push(format!("assert.strictEqual(als{s}.getStore(), undefined);"));
                        }
                        Ok(())
                    })?;
                }
                Observation::Timeout {
                    async_id,
                    execution_async_id,
                    trigger_async_id,
                } => {
                    let model_id = model_id(*async_id);
                    let block = self.current();
                    if self.timeouts.get(&model_id).map(|&(_, b)| b) != Some(block) {
                        return refuse(
                            i,
                            format!("Timeout {model_id} runs, and the test is not in its callback"),
                        );
                    }
                    self.check_ids_seen(*execution_async_id, *trigger_async_id);
                    // Every storage the test has, with its store there or
                    // `undefined`.
                    let stores: BTreeMap<u32, model::vocab::StoreValue> = observations
                        .iter()
                        .filter_map(|o| match o {
                            Observation::TimeoutStore {
                                async_id: a,
                                als,
                                value,
                            } if a == async_id => Some((als.0, *value)),
                            _ => None,
                        })
                        .collect();
                    self.storages.extend(stores.keys());
                    for s in self.storages.clone() {
                        let value = stores
                            .get(&s)
                            .map_or("undefined".to_string(), |v| v.to_string());
                        self.push(format!("assert.strictEqual(als{s}.getStore(), {value});"));
                    }
                }
                // Written with its Timeout's ids, above.
                Observation::TimeoutStore { .. } => {}
                Observation::TickStore {
                    async_id,
                    als,
                    value,
                } => {
                    let model_id = model_id(*async_id);
                    let Some(&block) = self.ticks.get(&model_id) else {
                        return refuse(i, "a tick's store, and the test did not schedule the tick");
                    };
                    self.storages.insert(als.0);
                    self.in_block(block, |w| {
                        w.push(format!(
                            "assert.strictEqual(als{}.getStore(), {value});",
                            als.0
                        ));
                        Ok(())
                    })?;
                }
                Observation::Microtask {
                    execution_async_id,
                    trigger_async_id,
                    ..
                } => {
                    let Some(&block) = self.microtasks.get(self.microtasks_run) else {
                        return refuse(i, "a microtask runs, and the test did not queue it");
                    };
                    self.microtasks_run += 1;
                    self.ran.insert(block);
                    self.in_block(block, |w| {
                        w.check_ids_seen(*execution_async_id, *trigger_async_id);
                        Ok(())
                    })?;
                }
                Observation::UnhandledRejection {
                    execution_async_id,
                    trigger_async_id,
                } => {
                    self.rejections_seen += 1;
                    self.pending.push(format!(
                        "['unhandledRejection', {}, {}]",
                        id_js(*execution_async_id),
                        id_js(*trigger_async_id)
                    ));
                }
                Observation::RejectionHandled { .. } => {
                    return refuse(
                        i,
                        "a rejectionHandled listener is not written into a test yet",
                    )
                }
                Observation::CorruptedStack {
                    actual,
                    expected,
                    abort,
                } => {
                    let (actual, expected) = (id_re(*actual), id_re(*expected));
                    self.ending = Some(if *abort {
                        Ending::CorruptedAbort { actual, expected }
                    } else {
                        Ending::Corrupted { actual, expected }
                    });
                }
                Observation::CheckFailed(c) => self.ending = Some(Ending::Check(*c)),
                // At the throw, or (out of an ES module's body) at the op
                // whose checkpoint runs the loader's last job.
                Observation::Exit(1)
                    if matches!(op, Op::UncaughtException { .. })
                        || self.module_rejection_unhandled =>
                {
                    // The exception a bare make-callback handed back, or
                    // the op's own throw.
                    let message = if self.in_flight {
                        "the callback throws"
                    } else {
                        "uncaught"
                    };
                    self.ending = Some(Ending::Uncaught(message))
                }
                Observation::Exit(code) => {
                    return refuse(
                        i,
                        format!("the process exits with {code}, and the test does not know why"),
                    )
                }
                Observation::Aborted(signal) => self.ending = Some(Ending::Aborted(*signal)),
            }
        }
        Ok(())
    }
}
