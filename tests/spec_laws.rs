//! Laws of the spec, checked with quickcheck on the eager model.
//!
//! Each law states something Node guarantees about its async-context
//! machinery without saying how (no law re-implements the stack): it compares
//! what a program observes before and after, or across, generated op
//! sequences. The sequences are built by [`Arbitrary`] impls over a small tree
//! of items (leaves, and frames that open, run a body and close in order), so
//! they are valid Node programs: scopes nest, every `emitBefore` has its
//! `emitAfter`, hooks are created before they are enabled.
//!
//! Every law is also run against a deliberately broken runtime (a wrapper
//! around the eager model, see [`Mutant`]) and must catch it: that is the
//! evidence that the law can fail.
//!
//! The last law is about the model itself rather than Node: enabling apart
//! from effect ([`law_enabled_is_what_apply_refuses`]).

use arbitrary::Unstructured;
use lazy::Lazy;
use model::vocab::OpKind;
use model::vocab::{
    AsyncContext, AsyncId, Cost, Holder, HookCallbacks, HookEvent, HookId, NativeResource,
    Observation, Op, OpError, ResourceId, ResourceView, Runtime, ScopeFlags, ScopeKind,
};
use model::Eager;
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use scopecheck::draw::{self, Choices};

// ---------------------------------------------------------------------------
// Generation

/// A piece of a program: ops that leave the context as they found it
/// (`Leaf`), or a frame that opens, runs its body, and closes.
#[derive(Clone, Debug)]
enum Item {
    /// Ops applied in order; `Check` leaves are expanded by the laws.
    Leaf(Vec<Op>),
    /// `getDefaultTriggerAsyncId()` and `executionAsyncId()`, checked by the
    /// default-trigger law against the frames open around it.
    Check,
    /// A frame: `open`, the body, `close`.
    Frame {
        open: Vec<Op>,
        body: Vec<Item>,
        close: Vec<Op>,
    },
}

/// Generation parameters and state: fresh hook names, the resources a block
/// may use (and reset), which leaves it may contain.
struct Builder<'a> {
    g: &'a mut Gen,
    next_hook: u32,
    resources: (u32, u32),
    hooks: bool,
    /// Extra `next-tick` leaves (for the tick law).
    probes: bool,
    checks: bool,
    /// Resources reset as Globals so far: a scope opened on one as a Global
    /// would abort (Node 26's CHECK on an empty Global), so they are held as
    /// Locals from then on.
    reset: std::collections::BTreeSet<ResourceId>,
}

fn below(g: &mut Gen, n: u32) -> u32 {
    u32::arbitrary(g) % n
}

impl Builder<'_> {
    /// An id a native push accepts: -1, 0 or a small positive id.
    fn id(&mut self) -> AsyncId {
        match below(self.g, 12) {
            0 => -1,
            1 => 0,
            _ => 1 + below(self.g, 40) as AsyncId,
        }
    }

    fn resource(&mut self) -> ResourceId {
        let (lo, hi) = self.resources;
        ResourceId(lo + below(self.g, hi - lo + 1))
    }

    fn hook(&mut self) -> (HookId, HookCallbacks) {
        let h = HookId(self.next_hook);
        self.next_hook += 1;
        let mut cb = HookCallbacks {
            init: bool::arbitrary(self.g),
            before: bool::arbitrary(self.g),
            after: bool::arbitrary(self.g),
            destroy: bool::arbitrary(self.g),
            promise_resolve: false,
        };
        if below(self.g, 4) == 0 {
            cb = HookCallbacks::ALL;
        }
        (h, cb)
    }

    /// The open and close ops of a random frame.
    fn frame_ops(&mut self) -> (Vec<Op>, Vec<Op>) {
        let kinds = if self.hooks { 6 } else { 5 };
        match below(self.g, kinds) {
            0 | 1 => {
                let context = AsyncContext {
                    async_id: self.id(),
                    trigger_async_id: self.id(),
                };
                let id = self.resource();
                let global = bool::arbitrary(self.g) && !self.reset.contains(&id);
                let open = if below(self.g, 3) == 0 {
                    Op::OpenScope {
                        kind: ScopeKind::MakeCallback,
                        context,
                        resource: NativeResource {
                            id,
                            holder: Holder::Local,
                        },
                        flags: ScopeFlags::default(),
                    }
                } else {
                    Op::OpenScope {
                        kind: ScopeKind::CallbackScope,
                        context,
                        resource: NativeResource {
                            id,
                            holder: if global {
                                Holder::Global
                            } else {
                                Holder::Local
                            },
                        },
                        flags: ScopeFlags {
                            skip_async_hooks: below(self.g, 4) == 0,
                            skip_task_queues: below(self.g, 4) == 0,
                        },
                    }
                };
                (vec![open], vec![Op::CloseScope { threw: false }])
            }
            2 => {
                let async_id = self.id();
                let trigger_async_id = self.id();
                let resource = if below(self.g, 3) == 0 {
                    None
                } else {
                    Some(self.resource())
                };
                (
                    vec![Op::EmitBefore {
                        async_id,
                        trigger_async_id,
                        resource,
                    }],
                    vec![Op::EmitAfter { async_id }],
                )
            }
            3 => {
                let async_id = self.id();
                let trigger_async_id = self.id();
                let resource = self.resource();
                (
                    vec![Op::EnterRunInAsyncScope {
                        async_id,
                        trigger_async_id,
                        resource,
                    }],
                    vec![Op::ExitRunInAsyncScope],
                )
            }
            4 => {
                let trigger_async_id = below(self.g, 50) as AsyncId;
                (
                    vec![Op::EnterDefaultTriggerScope { trigger_async_id }],
                    vec![Op::ExitDefaultTriggerScope],
                )
            }
            _ => {
                let (hook, callbacks) = self.hook();
                (
                    vec![Op::CreateHook { hook, callbacks }, Op::EnableHook(hook)],
                    vec![Op::DisableHook(hook)],
                )
            }
        }
    }

    /// A leaf: ops that end in the context they started in.
    fn leaf(&mut self) -> Item {
        loop {
            let op = match below(self.g, 14) {
                0 => Op::ExecutionAsyncId,
                1 => Op::TriggerAsyncId,
                2 => Op::ExecutionAsyncResource,
                3 => Op::DefaultTriggerAsyncId,
                4 => Op::NewAsyncId,
                5 => Op::NextTick {
                    query_resource: bool::arbitrary(self.g),
                },
                6 => Op::TickCallback,
                7 => Op::EmitInit {
                    async_id: self.id(),
                    type_name: "Thing".to_string(),
                    trigger_async_id: self.id(),
                    resource: Some(self.resource()),
                },
                8 => Op::EmitDestroy {
                    async_id: self.id(),
                },
                9 => {
                    let r = self.resource();
                    self.reset.insert(r);
                    Op::ResetGlobal(r)
                }
                10 if self.hooks => {
                    let (hook, callbacks) = self.hook();
                    return Item::Leaf(vec![
                        Op::CreateHook { hook, callbacks },
                        Op::EnableHook(hook),
                    ]);
                }
                11 if self.probes => Op::NextTick {
                    query_resource: bool::arbitrary(self.g),
                },
                12 | 13 if self.checks => return Item::Check,
                _ => continue,
            };
            return Item::Leaf(vec![op]);
        }
    }

    /// A balanced block: `budget` bounds its size, `depth` counts the
    /// frames open around it (beyond 16 the JS pushes fall back to C++).
    fn block(&mut self, budget: usize, depth: usize) -> Vec<Item> {
        let mut items = Vec::new();
        let mut left = budget;
        while left > 0 {
            let n = 1 + below(self.g, left as u32) as usize;
            left -= n;
            if n == 1 || depth >= 24 || below(self.g, 3) == 0 {
                items.push(self.leaf());
            } else {
                let (open, close) = self.frame_ops();
                let body = self.block(n - 1, depth + 1);
                items.push(Item::Frame { open, body, close });
            }
        }
        items
    }

    /// Frames opened and left open (each with its close ops, innermost
    /// last), with balanced blocks between them.
    fn prefix(&mut self, frames: usize) -> Vec<Group> {
        let mut groups = Vec::new();
        for depth in 0..frames {
            if below(self.g, 2) == 0 {
                let budget = 1 + below(self.g, 6) as usize;
                let block = self.block(budget, depth + 1);
                groups.push(Group {
                    items: block,
                    close: None,
                });
            }
            let (open, close) = self.frame_ops();
            groups.push(Group {
                items: vec![Item::Leaf(open)],
                close: Some(close),
            });
        }
        groups
    }
}

/// A part of a prefix: a balanced block (`close` is `None`), or the opening
/// of a frame left open, with the ops that would close it.
#[derive(Clone, Debug)]
struct Group {
    items: Vec<Item>,
    close: Option<Vec<Op>>,
}

fn flatten(items: &[Item], out: &mut Vec<Op>) {
    for item in items {
        match item {
            Item::Leaf(ops) => out.extend(ops.iter().cloned()),
            Item::Check => out.extend([Op::DefaultTriggerAsyncId, Op::ExecutionAsyncId]),
            Item::Frame { open, body, close } => {
                out.extend(open.iter().cloned());
                flatten(body, out);
                out.extend(close.iter().cloned());
            }
        }
    }
}

/// Smaller variants of a block: one item removed, a frame replaced by its
/// body, or a frame's body shrunk.
fn shrink_items(items: &[Item]) -> Vec<Vec<Item>> {
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut v = items.to_vec();
        v.remove(i);
        out.push(v);
    }
    for (i, item) in items.iter().enumerate() {
        if let Item::Frame { open, body, close } = item {
            let mut v = items[..i].to_vec();
            v.extend(body.iter().cloned());
            v.extend(items[i + 1..].iter().cloned());
            out.push(v);
            for smaller in shrink_items(body) {
                let mut v = items.to_vec();
                v[i] = Item::Frame {
                    open: open.clone(),
                    body: smaller,
                    close: close.clone(),
                };
                out.push(v);
            }
        }
    }
    out
}

fn shrink_groups(groups: &[Group]) -> Vec<Vec<Group>> {
    let mut out = Vec::new();
    for i in 0..groups.len() {
        let mut v = groups.to_vec();
        v.remove(i);
        out.push(v);
    }
    for (i, group) in groups.iter().enumerate() {
        if group.close.is_none() {
            for smaller in shrink_items(&group.items) {
                let mut v = groups.to_vec();
                v[i].items = smaller;
                out.push(v);
            }
        }
    }
    out
}

fn prefix_ops(groups: &[Group]) -> Vec<Op> {
    let mut ops = Vec::new();
    for group in groups {
        flatten(&group.items, &mut ops);
    }
    ops
}

/// A program in the main script: maybe `--no-force-async-hooks-checks`,
/// frames left open (`prefix`), then a balanced `block`.
#[derive(Clone, Debug)]
struct Nested {
    no_force: bool,
    prefix: Vec<Group>,
    block: Vec<Item>,
}

fn builder(g: &mut Gen) -> Builder<'_> {
    Builder {
        g,
        next_hook: 1,
        resources: (1, 9),
        hooks: true,
        probes: false,
        checks: false,
        reset: Default::default(),
    }
}

impl Arbitrary for Nested {
    fn arbitrary(g: &mut Gen) -> Self {
        let no_force = below(g, 4) == 0;
        let size = g.size().clamp(1, 40) as u32;
        let mut b = builder(g);
        let frames = below(b.g, 20) as usize;
        let prefix = b.prefix(frames);
        // The block uses resources of its own, so that resetting one of
        // them cannot change the resource of a frame around it.
        b.resources = (10, 29);
        let budget = 1 + below(b.g, size) as usize;
        let block = b.block(budget, frames + 1);
        Nested {
            no_force,
            prefix,
            block,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let mut out = Vec::new();
        if self.no_force {
            out.push(Nested {
                no_force: false,
                ..self.clone()
            });
        }
        for block in shrink_items(&self.block) {
            out.push(Nested {
                block,
                ..self.clone()
            });
        }
        for prefix in shrink_groups(&self.prefix) {
            out.push(Nested {
                prefix,
                ..self.clone()
            });
        }
        Box::new(out.into_iter())
    }
}

/// A walk through the main script that schedules ticks at every depth (the
/// tick law asks `getDefaultTriggerAsyncId()` right before each `next-tick`).
/// It ends with `process._tickCallback()`, or by closing every frame and the
/// main script, whose outermost close runs the queue.
#[derive(Clone, Debug)]
struct TickWalk {
    no_force: bool,
    groups: Vec<Group>,
    close_all: bool,
}

impl Arbitrary for TickWalk {
    fn arbitrary(g: &mut Gen) -> Self {
        let no_force = below(g, 4) == 0;
        let close_all = bool::arbitrary(g);
        let mut b = builder(g);
        b.probes = true;
        let frames = below(b.g, 20) as usize;
        let mut groups = b.prefix(frames);
        // End with a tick scheduled at the innermost depth too.
        groups.push(Group {
            items: vec![Item::Leaf(vec![Op::NextTick {
                query_resource: true,
            }])],
            close: None,
        });
        TickWalk {
            no_force,
            groups,
            close_all,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let mut out: Vec<TickWalk> = shrink_groups(&self.groups)
            .into_iter()
            .map(|groups| TickWalk {
                groups,
                ..self.clone()
            })
            .collect();
        if self.no_force {
            out.push(TickWalk {
                no_force: false,
                ..self.clone()
            });
        }
        Box::new(out.into_iter())
    }
}

/// A walk that checks `getDefaultTriggerAsyncId()` at random points.
#[derive(Clone, Debug)]
struct DefaultTriggerWalk {
    groups: Vec<Group>,
}

impl Arbitrary for DefaultTriggerWalk {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut b = builder(g);
        b.checks = true;
        let frames = below(b.g, 20) as usize;
        let mut groups = b.prefix(frames);
        groups.push(Group {
            items: vec![Item::Check],
            close: None,
        });
        DefaultTriggerWalk { groups }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(
            shrink_groups(&self.groups)
                .into_iter()
                .map(|groups| DefaultTriggerWalk { groups }),
        )
    }
}

/// Frames left open with no hook ever enabled and the checks forced, then
/// `emitAfter(executionAsyncId() + delta)` with `delta != 0`.
#[derive(Clone, Debug)]
struct WrongAfter {
    groups: Vec<Group>,
    delta: i64,
}

impl Arbitrary for WrongAfter {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut b = builder(g);
        b.hooks = false;
        let frames = below(b.g, 20) as usize;
        let groups = b.prefix(frames);
        let magnitude = 1 + below(g, 5) as i64;
        let delta = if bool::arbitrary(g) {
            magnitude
        } else {
            -magnitude
        };
        WrongAfter { groups, delta }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let delta = self.delta;
        Box::new(
            shrink_groups(&self.groups)
                .into_iter()
                .map(move |groups| WrongAfter { groups, delta }),
        )
    }
}

// ---------------------------------------------------------------------------
// Running

/// Why a law did not hold, or why the case does not apply.
enum Verdict {
    Broken(String),
    /// An op was refused: a shrunk case can be an impossible program.
    NotAProgram,
}

type LawResult = Result<(), Verdict>;

fn to_test_result(r: LawResult) -> TestResult {
    match r {
        Ok(()) => TestResult::passed(),
        Err(Verdict::Broken(why)) => TestResult::error(why),
        Err(Verdict::NotAProgram) => TestResult::discard(),
    }
}

/// Apply one op; a refused op makes the case not a program; a terminal
/// observation is returned like any other.
fn apply(rt: &mut dyn Runtime, op: &Op) -> Result<Vec<Observation>, Verdict> {
    match rt.apply(op) {
        Ok(obs) => Ok(obs),
        Err(OpError::Impossible(_)) => Err(Verdict::NotAProgram),
        Err(other) => Err(Verdict::Broken(format!("`{op}`: {other}"))),
    }
}

/// Apply ops that must not end the process; return all observations.
fn run_alive(rt: &mut dyn Runtime, ops: &[Op]) -> Result<Vec<Observation>, Verdict> {
    let mut all = Vec::new();
    for op in ops {
        let obs = apply(rt, op)?;
        if let Some(t) = obs.iter().find(|o| o.is_terminal()) {
            return Err(Verdict::Broken(format!("`{op}` ended the process: {t}")));
        }
        all.extend(obs);
    }
    Ok(all)
}

/// The context as a program sees it: the three queries and the default
/// trigger id, as their observations.
fn context(rt: &mut dyn Runtime) -> Result<Vec<Observation>, Verdict> {
    run_alive(
        rt,
        &[
            Op::ExecutionAsyncId,
            Op::TriggerAsyncId,
            Op::ExecutionAsyncResource,
            Op::DefaultTriggerAsyncId,
        ],
    )
}

fn start(rt: &mut dyn Runtime, no_force: bool) -> LawResult {
    if no_force {
        run_alive(rt, &[Op::NoForceAsyncHooksChecks])?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The laws

/// A balanced sequence of nested native scopes, JS contexts
/// (`emitBefore`/`emitAfter`, `runInAsyncScope`), default-trigger scopes and
/// hook toggles leaves `executionAsyncId()`, `triggerAsyncId()`,
/// `executionAsyncResource()` (and `getDefaultTriggerAsyncId()`) as they were,
/// at any depth, with or without forced checks.
fn law_balanced_block_restores_context(rt: &mut dyn Runtime, case: &Nested) -> LawResult {
    start(rt, case.no_force)?;
    run_alive(rt, &prefix_ops(&case.prefix))?;
    let before = context(rt)?;
    let mut block = Vec::new();
    flatten(&case.block, &mut block);
    run_alive(rt, &block)?;
    let after = context(rt)?;
    if before != after {
        return Err(Verdict::Broken(format!(
            "the context changed across a balanced block\n  before: {}\n  after:  {}",
            show(&before),
            show(&after)
        )));
    }
    Ok(())
}

/// `clearAsyncIdStack()` at any depth leaves the context (0, 0) and
/// `executionAsyncResource()` = `topLevelResource`, and shows nothing.
fn law_clear_resets_to_top_level(rt: &mut dyn Runtime, case: &Nested) -> LawResult {
    start(rt, case.no_force)?;
    run_alive(rt, &prefix_ops(&case.prefix))?;
    let mut block = Vec::new();
    flatten(&case.block, &mut block);
    run_alive(rt, &block)?;
    let shown = run_alive(rt, &[Op::ClearAsyncIdStack])?;
    if !shown.is_empty() {
        return Err(Verdict::Broken(format!(
            "clear-async-id-stack showed {}",
            show(&shown)
        )));
    }
    let seen = run_alive(
        rt,
        &[
            Op::ExecutionAsyncId,
            Op::TriggerAsyncId,
            Op::ExecutionAsyncResource,
        ],
    )?;
    let expected = vec![
        Observation::ExecutionAsyncId(0),
        Observation::TriggerAsyncId(0),
        Observation::ExecutionAsyncResource(ResourceView::TopLevel),
    ];
    if seen != expected {
        return Err(Verdict::Broken(format!(
            "after clear-async-id-stack: {}",
            show(&seen)
        )));
    }
    Ok(())
}

/// A tick runs with `executionAsyncId()` = its own id, `triggerAsyncId()` =
/// what `getDefaultTriggerAsyncId()` returned when `nextTick` was called, and
/// `executionAsyncResource()` = its tick object; ticks run in the order they
/// were scheduled, and all of them run.
fn law_tick_sees_its_scheduling_context(rt: &mut dyn Runtime, case: &TickWalk) -> LawResult {
    start(rt, case.no_force)?;
    let mut ops = prefix_ops(&case.groups);
    if case.close_all {
        for group in case.groups.iter().rev() {
            if let Some(close) = &group.close {
                ops.extend(close.iter().cloned());
            }
        }
        ops.push(Op::CloseScope { threw: false });
    } else {
        ops.push(Op::TickCallback);
    }
    // What getDefaultTriggerAsyncId() said right before each next-tick, in
    // scheduling order, and every tick that ran, in running order.
    let mut scheduled = Vec::new();
    let mut ticks = Vec::new();
    for op in &ops {
        if let Op::NextTick { .. } = op {
            let seen = run_alive(rt, &[Op::DefaultTriggerAsyncId])?;
            let [Observation::DefaultTriggerAsyncId(d)] = seen.as_slice() else {
                return Err(Verdict::Broken(format!("unexpected {}", show(&seen))));
            };
            scheduled.push(*d);
        }
        for o in run_alive(rt, std::slice::from_ref(op))? {
            if let Observation::Tick { .. } = o {
                ticks.push(o);
            }
        }
    }
    if ticks.len() != scheduled.len() {
        return Err(Verdict::Broken(format!(
            "{} ticks scheduled, {} ran: {}",
            scheduled.len(),
            ticks.len(),
            show(&ticks)
        )));
    }
    let mut last_id = AsyncId::MIN;
    for (tick, trigger) in ticks.iter().zip(scheduled) {
        let Observation::Tick {
            async_id,
            execution_async_id,
            trigger_async_id,
            resource,
        } = tick
        else {
            unreachable!()
        };
        if *execution_async_id != *async_id {
            return Err(Verdict::Broken(format!("{tick}: not its own id")));
        }
        if *trigger_async_id != trigger {
            return Err(Verdict::Broken(format!(
                "{tick}: getDefaultTriggerAsyncId() was {trigger} when it was scheduled"
            )));
        }
        if let Some(r) = resource {
            if *r != ResourceView::TickObject(*async_id) {
                return Err(Verdict::Broken(format!(
                    "{tick}: the resource is not its tick object"
                )));
            }
        }
        if *async_id <= last_id {
            return Err(Verdict::Broken(format!("{tick}: ran out of order")));
        }
        last_id = *async_id;
    }
    Ok(())
}

/// `getDefaultTriggerAsyncId()` is `executionAsyncId()` unless a
/// default-trigger scope is open, and then the innermost one's id, whatever
/// native scopes or JS contexts were opened inside it.
fn law_default_trigger(rt: &mut dyn Runtime, case: &DefaultTriggerWalk) -> LawResult {
    fn walk(rt: &mut dyn Runtime, items: &[Item], open: &mut Vec<AsyncId>) -> LawResult {
        for item in items {
            match item {
                Item::Leaf(ops) => {
                    run_alive(rt, ops)?;
                }
                Item::Check => {
                    let seen = run_alive(rt, &[Op::DefaultTriggerAsyncId, Op::ExecutionAsyncId])?;
                    let (Observation::DefaultTriggerAsyncId(d), Observation::ExecutionAsyncId(e)) =
                        (&seen[0], &seen[1])
                    else {
                        return Err(Verdict::Broken(format!("unexpected {}", show(&seen))));
                    };
                    let expected = open.last().copied().unwrap_or(*e);
                    if *d != expected {
                        return Err(Verdict::Broken(format!(
                            "getDefaultTriggerAsyncId() = {d}, executionAsyncId() = {e}, open default-trigger scopes {open:?}"
                        )));
                    }
                }
                Item::Frame {
                    open: o,
                    body,
                    close,
                } => {
                    run_alive(rt, o)?;
                    let pushed = match o.as_slice() {
                        [Op::EnterDefaultTriggerScope { trigger_async_id }] => {
                            open.push(*trigger_async_id);
                            true
                        }
                        _ => false,
                    };
                    walk(rt, body, open)?;
                    run_alive(rt, close)?;
                    if pushed {
                        open.pop();
                    }
                }
            }
        }
        Ok(())
    }
    let mut open = Vec::new();
    for group in &case.groups {
        walk(rt, &group.items, &mut open)?;
        // A frame left open by the prefix.
        if group.close.is_some() {
            if let [Item::Leaf(ops)] = group.items.as_slice() {
                if let [Op::EnterDefaultTriggerScope { trigger_async_id }] = ops.as_slice() {
                    open.push(*trigger_async_id);
                }
            }
        }
    }
    Ok(())
}

/// `newAsyncId()` is strictly increasing, and the ids ticks take from the
/// same counter (their TickObject init) interleave with it in order.
fn law_new_async_id_increases(rt: &mut dyn Runtime, case: &Nested) -> LawResult {
    start(rt, case.no_force)?;
    let mut ops = prefix_ops(&case.prefix);
    flatten(&case.block, &mut ops);
    let mut ids = Vec::new();
    for op in &ops {
        // Every op is followed by a newAsyncId(), so that the law always
        // has ids to compare.
        for o in run_alive(rt, &[op.clone(), Op::NewAsyncId])? {
            match o {
                Observation::NewAsyncId(id) => ids.push(id),
                Observation::Hook {
                    event:
                        HookEvent::Init {
                            async_id,
                            ref type_name,
                            ..
                        },
                    ..
                } if type_name == "TickObject" && ids.last() != Some(&async_id) => {
                    // Every hook with an init callback reports the same
                    // allocation: count it once.
                    ids.push(async_id)
                }
                _ => {}
            }
        }
    }
    for w in ids.windows(2) {
        if w[1] <= w[0] {
            return Err(Verdict::Broken(format!(
                "id {} came after {}: {ids:?}",
                w[1], w[0]
            )));
        }
    }
    Ok(())
}

/// With no hook and the checks forced, `emitAfter(id)` with an id that is not
/// the current execution id ends the process with exactly
/// `CorruptedStack { actual: executionAsyncId(), expected: id }`.
fn law_wrong_emit_after_dies(rt: &mut dyn Runtime, case: &WrongAfter) -> LawResult {
    run_alive(rt, &prefix_ops(&case.groups))?;
    let seen = run_alive(rt, &[Op::ExecutionAsyncId])?;
    let [Observation::ExecutionAsyncId(current)] = seen.as_slice() else {
        return Err(Verdict::Broken(format!("unexpected {}", show(&seen))));
    };
    let wrong = current + case.delta;
    let obs = apply(rt, &Op::EmitAfter { async_id: wrong })?;
    let expected = vec![Observation::CorruptedStack {
        actual: *current,
        expected: wrong,
        abort: false,
    }];
    if obs != expected {
        return Err(Verdict::Broken(format!(
            "emit-after {wrong} with executionAsyncId() = {current}: {}",
            show(&obs)
        )));
    }
    if rt.apply(&Op::ExecutionAsyncId) != Err(OpError::Exited) {
        return Err(Verdict::Broken("the process went on".to_string()));
    }
    Ok(())
}

fn show(obs: &[Observation]) -> String {
    let v: Vec<String> = obs.iter().map(ToString::to_string).collect();
    format!("[{}]", v.join(" | "))
}

// ---------------------------------------------------------------------------
// Broken runtimes: each law must catch one.

/// How a [`Mutant`] departs from the eager model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Defect {
    /// Every native close also leaves a JS context (999) on the stack.
    LeakyClose,
    /// `clearAsyncIdStack()` does nothing.
    NoClear,
    /// `nextTick` is called from inside a JS context 77.
    TickInJsContext,
    /// A default-trigger scope installs its id plus one.
    OffByOneDefaultTrigger,
    /// Every third `newAsyncId()` reports the previous id again.
    RepeatingIds,
    /// The process runs with `--no-force-async-hooks-checks`.
    NoForcedChecks,
}

/// The eager model with one [`Defect`].
struct Mutant {
    inner: Eager,
    defect: Defect,
    started: bool,
    new_ids: u32,
    last_id: AsyncId,
}

impl Mutant {
    fn new(defect: Defect) -> Self {
        Mutant {
            inner: Eager::new(),
            defect,
            started: false,
            new_ids: 0,
            last_id: 0,
        }
    }
}

impl Runtime for Mutant {
    fn apply(&mut self, op: &Op) -> Result<Vec<Observation>, OpError> {
        if !self.started {
            self.started = true;
            if self.defect == Defect::NoForcedChecks && *op != Op::NoForceAsyncHooksChecks {
                self.inner.apply(&Op::NoForceAsyncHooksChecks)?;
            }
        }
        match (self.defect, op) {
            (Defect::LeakyClose, Op::CloseScope { .. }) => {
                let mut obs = self.inner.apply(op)?;
                if !obs.iter().any(Observation::is_terminal) && self.inner.js_running() {
                    obs.extend(self.inner.apply(&Op::EmitBefore {
                        async_id: 999,
                        trigger_async_id: 0,
                        resource: None,
                    })?);
                }
                Ok(obs)
            }
            (Defect::NoClear, Op::ClearAsyncIdStack) => Ok(Vec::new()),
            (Defect::TickInJsContext, Op::NextTick { .. }) => {
                let mut obs = self.inner.apply(&Op::EmitBefore {
                    async_id: 77,
                    trigger_async_id: 0,
                    resource: None,
                })?;
                obs.extend(self.inner.apply(op)?);
                obs.extend(self.inner.apply(&Op::EmitAfter { async_id: 77 })?);
                Ok(obs)
            }
            (Defect::OffByOneDefaultTrigger, Op::EnterDefaultTriggerScope { trigger_async_id }) => {
                self.inner.apply(&Op::EnterDefaultTriggerScope {
                    trigger_async_id: trigger_async_id + 1,
                })
            }
            (Defect::RepeatingIds, Op::NewAsyncId) => {
                let obs = self.inner.apply(op)?;
                self.new_ids += 1;
                let Some(Observation::NewAsyncId(id)) = obs.first().cloned() else {
                    return Ok(obs);
                };
                let shown = if self.new_ids == 3 {
                    self.new_ids = 0;
                    self.last_id
                } else {
                    id
                };
                self.last_id = id;
                Ok(vec![Observation::NewAsyncId(shown)])
            }
            _ => self.inner.apply(op),
        }
    }

    fn cost(&self) -> Cost {
        self.inner.cost()
    }
}

// ---------------------------------------------------------------------------
// The tests: each law holds on the eager model and catches its mutant.

macro_rules! law_tests {
    ($holds:ident, $catches:ident, $law:ident, $case:ty, $defect:expr) => {
        #[test]
        fn $holds() {
            fn prop(case: $case) -> TestResult {
                to_test_result($law(&mut Eager::new(), &case))
            }
            QuickCheck::new()
                .tests(300)
                .max_tests(30_000)
                .quickcheck(prop as fn($case) -> TestResult);
        }

        #[test]
        fn $catches() {
            fn prop(case: $case) -> TestResult {
                to_test_result($law(&mut Mutant::new($defect), &case))
            }
            let outcome = QuickCheck::new()
                .tests(1_000)
                .max_tests(100_000)
                .quicktest(prop as fn($case) -> TestResult);
            assert!(
                outcome.is_err(),
                "{} did not catch {:?} in {:?} cases",
                stringify!($law),
                $defect,
                outcome
            );
        }
    };
}

law_tests!(
    balanced_block_restores_context,
    balanced_block_law_catches_a_leaky_close,
    law_balanced_block_restores_context,
    Nested,
    Defect::LeakyClose
);
law_tests!(
    clear_async_id_stack_resets_to_top_level,
    clear_law_catches_a_clear_that_does_nothing,
    law_clear_resets_to_top_level,
    Nested,
    Defect::NoClear
);
law_tests!(
    tick_sees_its_id_and_scheduling_trigger,
    tick_law_catches_ticks_scheduled_in_the_wrong_context,
    law_tick_sees_its_scheduling_context,
    TickWalk,
    Defect::TickInJsContext
);
law_tests!(
    default_trigger_is_execution_id_or_innermost_scope,
    default_trigger_law_catches_an_off_by_one_scope,
    law_default_trigger,
    DefaultTriggerWalk,
    Defect::OffByOneDefaultTrigger
);
law_tests!(
    new_async_id_strictly_increases,
    new_async_id_law_catches_a_repeated_id,
    law_new_async_id_increases,
    Nested,
    Defect::RepeatingIds
);
law_tests!(
    wrong_emit_after_dies_with_corrupted_stack,
    wrong_emit_after_law_catches_unforced_checks,
    law_wrong_emit_after_dies,
    WrongAfter,
    Defect::NoForcedChecks
);

/// The generators build programs: unshrunk cases are never refused by the
/// eager model and never end the process (so the laws' discards only ever
/// come from shrinking).
#[test]
fn generated_programs_are_valid() {
    let mut g = Gen::new(60);
    let mut deepest = 0;
    let mut trampolines = 0;
    for _ in 0..300 {
        let case = Nested::arbitrary(&mut g);
        let mut rt = Eager::new();
        let mut ops = Vec::new();
        if case.no_force {
            ops.push(Op::NoForceAsyncHooksChecks);
        }
        ops.extend(prefix_ops(&case.prefix));
        flatten(&case.block, &mut ops);
        for op in &ops {
            let obs = rt
                .apply(op)
                .unwrap_or_else(|e| panic!("`{op}` refused: {e}\n{case:?}"));
            assert!(
                !obs.iter().any(Observation::is_terminal),
                "`{op}` ended the process: {}\n{case:?}",
                show(&obs)
            );
            deepest = deepest.max(rt.async_hooks.fields.k_stack_length);
            if matches!(
                op,
                Op::OpenScope {
                    kind: ScopeKind::MakeCallback,
                    ..
                }
            ) && rt.hooks.trampoline_installed
            {
                trampolines += 1;
            }
        }
    }
    // The generator reaches the JS fallback to the native push (more than
    // 16 entries) and MakeCallback with the trampoline installed.
    assert!(deepest > 16, "deepest stack only {deepest}");
    assert!(trampolines > 0, "no MakeCallback with hooks enabled");
    for _ in 0..300 {
        let walk = TickWalk::arbitrary(&mut g);
        let mut rt = Eager::new();
        assert!(matches!(
            law_tick_sees_its_scheduling_context(&mut rt, &walk),
            Ok(()) | Err(Verdict::Broken(_))
        ));
    }
}

// ---------------------------------------------------------------------------
// Enabling apart from effect

/// `enabled` as the law sees it: `Ok`, or the refusal as `apply` reports it
/// and whether it is about the op's arguments.
type EnabledFn = fn(&Eager, &Op) -> Result<(), (String, bool)>;

/// The model's [`model::Environment::enabled`].
fn model_enabled(env: &Eager, op: &Op) -> Result<(), (String, bool)> {
    env.enabled(op)
        .map_err(|r| (OpError::from(r).to_string(), r.is_about_arguments()))
}

/// A broken `enabled`, for the law to catch: `end-tick` whatever frame is
/// innermost.
fn end_tick_anywhere(env: &Eager, op: &Op) -> Result<(), (String, bool)> {
    if *op == Op::EndTick && !env.exited && !env.frames.is_empty() {
        return Ok(());
    }
    model_enabled(env, op)
}

/// One probe: `enabled` refuses `op` exactly when `apply` does, with the
/// same text and leaving the state as it was; an op it enables runs on the
/// eager model and on the lazy implementation without a refusal (or a
/// panic, which fails the test); a refusal that is not about the arguments
/// refuses every other op of the kind drawn here too.
fn probe(
    enabled: EnabledFn,
    eager: &Eager,
    lazy: &Lazy,
    op: &Op,
    u: &mut Unstructured<'_>,
) -> LawResult {
    let verdict = enabled(eager, op);
    let mut after = eager.clone();
    let answer = after.apply(op);
    let lazy_answer = lazy.clone().apply(op);
    match (&verdict, &answer) {
        (Ok(()), Ok(_)) => {}
        (Ok(()), Err(e)) => {
            return Err(Verdict::Broken(format!(
                "`{op}` is enabled, but apply says: {e}"
            )));
        }
        (Err((why, _)), Ok(obs)) => {
            return Err(Verdict::Broken(format!(
                "`{op}` is refused ({why}), but apply ran it: {}",
                show(obs)
            )));
        }
        (Err((why, _)), Err(e)) if *why != e.to_string() => {
            return Err(Verdict::Broken(format!(
                "`{op}`: enabled says {why:?}, apply says {:?}",
                e.to_string()
            )));
        }
        (Err(_), Err(_)) if after != *eager => {
            return Err(Verdict::Broken(format!("refused `{op}` changed the state")));
        }
        (Err(_), Err(_)) => {}
    }
    if verdict.is_ok() != lazy_answer.is_ok() {
        return Err(Verdict::Broken(format!(
            "`{op}`: enabled says {verdict:?}, the lazy side {lazy_answer:?}"
        )));
    }
    if let Err((why, false)) = &verdict {
        for _ in 0..4 {
            let other = draw::draw_op(op.kind(), eager, u);
            if enabled(eager, &other).is_ok() {
                return Err(Verdict::Broken(format!(
                    "`{op}` is refused whatever its arguments ({why}), but `{other}` is enabled"
                )));
            }
        }
    }
    Ok(())
}

/// Now and then a native scope's holder or flags changed to what the
/// generators never draw (a Global on v20, a MakeCallback with a Global or
/// flags), so that their refusals are probed too.
fn vary(op: Op, u: &mut Unstructured<'_>) -> Op {
    let Op::OpenScope {
        kind,
        context,
        mut resource,
        mut flags,
    } = op
    else {
        return op;
    };
    if Choices::ratio(u, 1, 4) {
        resource.holder = Holder::Global;
    }
    if Choices::ratio(u, 1, 4) {
        flags.skip_task_queues = true;
    }
    Op::OpenScope {
        kind,
        context,
        resource,
        flags,
    }
}

/// Over a walk through random states (bytes choose, as the fuzz decoder's
/// do: one in four on node version 20, then ops the model enables), probe
/// an op of every kind in turn, its arguments drawn as the generators draw
/// them ([`vary`]ed) but not filtered ([`probe`]).
fn law_enabled_is_what_apply_refuses(enabled: EnabledFn, bytes: &[u8]) -> LawResult {
    let mut u = Unstructured::new(bytes);
    let (mut eager, mut lazy) = (Eager::new(), Lazy::new());
    if u.below(4) == 0 {
        let v20 = Op::NodeVersion(model::vocab::NodeVersion::V20);
        let _ = (eager.apply(&v20), lazy.apply(&v20));
    }
    let mut kinds = OpKind::ALL
        .iter()
        .cycle()
        .skip(u.below(OpKind::COUNT as u32) as usize);
    while !u.is_empty() && !eager.exited {
        let kind = *kinds.next().expect("a cycle");
        let op = vary(draw::draw_op(kind, &eager, &mut u), &mut u);
        probe(enabled, &eager, &lazy, &op, &mut u)?;
        let Some(next) = draw::enabled_op(&eager, &mut [1; OpKind::COUNT], &mut u) else {
            break;
        };
        let _ = (eager.apply(&next), lazy.apply(&next));
    }
    probe(enabled, &eager, &lazy, &Op::ExecutionAsyncId, &mut u)
}

#[test]
fn enabled_is_exactly_what_apply_refuses() {
    fn prop(bytes: Vec<u8>) -> TestResult {
        to_test_result(law_enabled_is_what_apply_refuses(model_enabled, &bytes))
    }
    QuickCheck::new()
        .rng(Gen::new(800))
        .tests(2_000)
        .quickcheck(prop as fn(Vec<u8>) -> TestResult);
}

#[test]
fn enabled_law_catches_an_end_tick_enabled_anywhere() {
    fn prop(bytes: Vec<u8>) -> TestResult {
        to_test_result(law_enabled_is_what_apply_refuses(end_tick_anywhere, &bytes))
    }
    let outcome = QuickCheck::new()
        .rng(Gen::new(800))
        .tests(2_000)
        .quicktest(prop as fn(Vec<u8>) -> TestResult);
    assert!(outcome.is_err(), "the law did not catch it: {outcome:?}");
}
