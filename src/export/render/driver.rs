//! The driver: both runs of the model op by op, each op's statement and
//! answer written, and the code frames kept in line with the model's.

use super::*;

/// Write the test of `ops` (already decided for node, closes appended) on
/// node version `version`, with the expectations of the environment `make`
/// gives (the eager model, or a mutant for a wrong variant). `comment` is
/// the test's one-line description.
pub fn render<S: AsyncIdStack>(
    ops: &[Op],
    version: NodeVersion,
    make: impl Fn() -> Environment<S>,
    comment: &str,
) -> Result<Rendered, NotWritten> {
    let mut a = make();
    a.version = version;
    let mut b = make();
    b.version = version;
    b.async_hooks.async_id_fields.k_async_id_counter += SHIFT;
    let mut w = Writer {
        a,
        b,
        blocks: vec![Block::default()],
        frames: vec![CodeFrame {
            block: 0,
            call: None,
            dead: false,
            scope_args: None,
        }],
        event_loop: None,
        pending: Vec::new(),
        handed: HashMap::new(),
        literals: BTreeSet::new(),
        ticks: HashMap::new(),
        microtasks: Vec::new(),
        microtasks_run: 0,
        ran: BTreeSet::new(),
        from_async_hooks: BTreeSet::new(),
        from_internal: BTreeSet::new(),
        resources: BTreeSet::new(),
        hooks: BTreeMap::new(),
        storages: BTreeSet::new(),
        defaults: Default::default(),
        uses_symbol: false,
        uses_rias: false,
        main_bound: false,
        top_bound: false,
        bound_inline: BTreeSet::new(),
        binding: false,
        napi: false,
        timers: false,
        timeouts: BTreeMap::new(),
        timeouts_declared: BTreeSet::new(),
        timer_call: None,
        runs_timeouts: false,
        uses_timer_symbol: false,
        no_force: false,
        abort_on_uncaught: false,
        ending: None,
        main_threw_at: None,
        bare_call: None,
        in_flight: false,
        lost: 0,
        rejects: false,
        rejections_seen: 0,
        made: BTreeSet::new(),
        captured: BTreeSet::new(),
        module: false,
        body_threw: false,
        module_rejection_unhandled: false,
        heap_scopes: 0,
        threw_in_microtask: None,
        stopped: false,
        named: BTreeSet::new(),
    };
    for (i, op) in ops.iter().enumerate() {
        if w.ending.is_some() {
            break;
        }
        // After `stop` only the frames' ends follow, and none is written
        // (the worker's stack unwinds); the model must observe nothing.
        if w.stopped && !op.ends_frame() {
            return refuse(
                i,
                "after stop no JavaScript runs: only the frames' ends follow",
            );
        }
        let depth = w.a.frames.len();
        if depth > 24 {
            return refuse(
                i,
                format!("{depth} nested frames: too deep for a test to read"),
            );
        }
        // What happened since the last statement is checked before this
        // one (a closing op has no statement: the callback returns).
        // A `timer` that the `processTimers` call going on runs next has no
        // statement where the code frame is: what the hooks saw since the
        // last Timeout's callback is checked in the next callback to run
        // (a tick's, or this Timeout's).
        let chained_timer = matches!(op, Op::Timer) && w.a.timers.call.is_some();
        if !w.stopped && !w.frames.last().is_some_and(|f| f.dead) && !chained_timer {
            w.flush();
        }
        let frames_before = w.a.frames.len();
        if !w.stopped {
            w.continue_after_exception(i, op)?;
        }
        // Where the op's statement goes: a statement that ends the process
        // is announced there first, as test-improper-order.js's child does.
        let mark = w.current();
        let mark = (mark, w.blocks[mark].items.len());
        if !w.stopped {
            // The ids the op makes Node hand out are read here, just
            // before its statement.
            w.blocks[mark.0].items.push(Item::Anchor(Vec::new()));
            w.statement(i, op)?;
        }
        let op_b = op.map_ids(&mut |id| w.node_id(id).unwrap_or(id));
        let _ = op.map_ids(&mut |id| {
            if !w.handed.contains_key(&id) {
                w.literals.insert(id);
            }
            id
        });
        let counter_a = w.a.async_hooks.async_id_fields.k_async_id_counter;
        let counter_b = w.b.async_hooks.async_id_fields.k_async_id_counter;
        // The main script's close runs the checkpoint where test/common's
        // own promise reaction (queued as it loads) runs first: with promise
        // hooks on, it takes an id there, ahead of the test's.
        let main_close_with_promise_hooks = matches!(op, Op::CloseScope { .. })
            && matches!(w.a.frames.last(), Some(Frame::Native(s)) if s.main_script)
            && w.a.microtasks.installed.is_some();
        let obs_a =
            match crate::lockstep::catch_panic(|| model::vocab::Runtime::apply(&mut w.a, op)) {
                Ok(o) => o,
                Err(e) => return refuse(i, format!("the model rejects `{op}`: {e}")),
            };
        let obs_b =
            match crate::lockstep::catch_panic(|| model::vocab::Runtime::apply(&mut w.b, &op_b)) {
                Ok(o) => o,
                Err(e) => {
                    return refuse(
                        i,
                        format!("the model rejects `{op_b}` with its ids moved: {e}"),
                    )
                }
            };
        if obs_a.len() != obs_b.len() {
            return refuse(i, "the model answers differently with its id counter moved");
        }
        let mut written = Vec::with_capacity(obs_a.len());
        for (oa, ob) in obs_a.iter().zip(&obs_b) {
            let (ia, ib) = (ids_of(oa), ids_of(ob));
            if ia.len() != ib.len() {
                return refuse(i, "the model answers differently with its id counter moved");
            }
            let mut k = 0;
            let moved = map_ids(oa, &mut |id| {
                let shifted = ib[k];
                k += 1;
                if shifted == id {
                    id
                } else {
                    HANDED + id
                }
            });
            let mut k = 0;
            let same = map_ids(oa, &mut |id| {
                let v = ib[k];
                k += 1;
                if v == id || v == id + SHIFT {
                    v
                } else {
                    id
                }
            });
            if &same != ob || ia.len() != ib.len() {
                return refuse(i, "the model answers differently with its id counter moved");
            }
            written.push(moved);
        }
        let handed_now = w.a.async_hooks.async_id_fields.k_async_id_counter > counter_a;
        if handed_now && main_close_with_promise_hooks {
            return refuse(i, "Node hands out an id in the checkpoint of the main script's close with promise hooks on, where a promise reaction test/common queued as it loads runs first and takes an id too: the test cannot read the id just before");
        }
        for m in counter_a + 1..=w.a.async_hooks.async_id_fields.k_async_id_counter {
            w.handed.insert(m, m - counter_a + counter_b);
            if !w.stopped {
                if let Some(Item::Anchor(ids)) = w.blocks[mark.0].items.get_mut(mark.1) {
                    ids.push(m);
                } else {
                    return refuse(i, "Node hands out an id where the test cannot read it");
                }
            }
        }
        if w.a.async_hooks.async_id_fields.k_async_id_counter - counter_a
            != w.b.async_hooks.async_id_fields.k_async_id_counter - counter_b
        {
            return refuse(
                i,
                "the model takes ids differently with its id counter moved",
            );
        }
        if w.stopped {
            if !written.is_empty() {
                return refuse(i, "the model observes something after stop");
            }
            continue;
        }
        if written.iter().any(Observation::is_terminal) {
            let beat = Item::Line("process._rawDebug('heartbeat: still alive');".to_string());
            w.blocks[mark.0].items.insert(mark.1, beat);
        }
        if w.in_flight {
            w.end_in_flight(i, mark)?;
        }
        w.answer(i, op, &written)?;
        w.in_flight = false;
        let into_microtask = w.threw_in_microtask.is_some();
        w.follow_frames(i, op, frames_before)?;
        // The native scope the exception was reported in can run no more
        // JS in that callback; where a tick's exception ended the `Close`
        // that ran it, the code goes on after that scope. A microtask's
        // job takes its exception: the scope around the checkpoint goes on.
        if matches!(op, Op::UncaughtException { .. })
            && !into_microtask
            && matches!(w.a.frames.last(), Some(Frame::Native(_)))
        {
            if let Some(top) = w.frames.last_mut() {
                top.dead = true;
            }
        }
    }
    // Hook calls made after an ES module's body are checked from the event
    // loop (the addon's callback), as a CommonJS test's are.
    let module_body_only =
        w.module && w.frames.is_empty() && w.event_loop.is_none() && w.pending.is_empty();
    if w.ending.is_none() && !w.stopped {
        w.flush();
        // After a throw out of the module's body no line of block 0 runs.
        let unreachable = module_body_only && w.body_threw;
        if (!w.hooks.is_empty() || w.rejects) && !unreachable {
            // An ES module test that runs nothing from the event loop checks
            // at the end of its body that no hook call is left.
            let block = if module_body_only { 0 } else { w.current() };
            w.blocks[block]
                .items
                .push(Item::Line("assert.deepStrictEqual(calls, []);".to_string()));
        }
    }
    if let Some(m) = w
        .literals
        .last()
        .filter(|&&m| literal(m) > MAX_TAKEN && !w.handed.is_empty())
    {
        return refuse(
            0,
            format!(
                "id {m} is written as a number ({}): too large to take Node's ids up to it",
                literal(*m)
            ),
        );
    }
    Ok(w.finish(comment))
}

impl<S: AsyncIdStack> Writer<S> {
    /// Bring the code frames in line with the model's after op `i`.
    pub(super) fn follow_frames(
        &mut self,
        i: usize,
        op: &Op,
        before: usize,
    ) -> Result<(), NotWritten> {
        let after = self.a.frames.len();
        if self.a.exited {
            return Ok(());
        }
        let kept = if op.opens_frame() {
            if after != before + 1 {
                return refuse(i, "the model opened no frame");
            }
            return Ok(());
        } else if op.ends_frame() || matches!(op, Op::CloseOuter { .. }) {
            before - 1
        } else if let (Op::UncaughtException { .. }, Some(m)) = (op, self.threw_in_microtask) {
            // An exception into a microtask's callback ends its job: the
            // next job's callback, if the checkpoint runs one, is a new
            // frame.
            self.threw_in_microtask = None;
            m
        } else if matches!(op, Op::UncaughtException { .. }) {
            // A tick's exception ends the frames up to where it is reported.
            after.min(before)
        } else {
            before
        };
        // The code frames of the model's frames that remain (index 0 is
        // the main script, kept apart once it closed).
        let keep_code = kept.min(self.frames.len());
        self.frames.truncate(keep_code);
        for f in &self.a.frames[kept.min(after)..] {
            let block = match f {
                Frame::Tick { tick, .. } => {
                    *self.ticks.get(&tick.async_id).ok_or_else(|| NotWritten {
                        index: i,
                        reason: "a tick's callback runs that the test did not schedule".to_string(),
                    })?
                }
                Frame::Microtask { .. } => {
                    let Some(&b) = self.microtasks.get(self.microtasks_run.wrapping_sub(1)) else {
                        return refuse(
                            i,
                            "a microtask's callback runs that the test did not queue",
                        );
                    };
                    b
                }
                _ => return refuse(i, "a frame the test cannot follow"),
            };
            self.frames.push(CodeFrame {
                block,
                call: None,
                dead: false,
                scope_args: None,
            });
        }
        if self.frames.len() != after {
            return refuse(i, format!("the test's callbacks and the model's frames part ways ({} against {after}, kept {kept}, before {before})", self.frames.len()));
        }
        Ok(())
    }
}
