//! The programs the laws run: [`Arbitrary`] impls over a small tree of
//! items (leaves, and frames that open, run a body and close in order), so
//! that every generated sequence is a valid Node program, and their
//! shrinking.

use model::vocab::{
    AsyncContext, AsyncId, Holder, HookCallbacks, HookId, NativeResource, Op, ResourceId,
    ScopeFlags, ScopeKind,
};
use quickcheck::{Arbitrary, Gen};

/// A piece of a program: ops that leave the context as they found it
/// (`Leaf`), or a frame that opens, runs its body, and closes.
#[derive(Clone, Debug)]
pub(super) enum Item {
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

pub(super) fn below(g: &mut Gen, n: u32) -> u32 {
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
pub(super) struct Group {
    pub(super) items: Vec<Item>,
    pub(super) close: Option<Vec<Op>>,
}

pub(super) fn flatten(items: &[Item], out: &mut Vec<Op>) {
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

pub(super) fn prefix_ops(groups: &[Group]) -> Vec<Op> {
    let mut ops = Vec::new();
    for group in groups {
        flatten(&group.items, &mut ops);
    }
    ops
}

/// A program in the main script: maybe `--no-force-async-hooks-checks`,
/// frames left open (`prefix`), then a balanced `block`.
#[derive(Clone, Debug)]
pub(super) struct Nested {
    pub(super) no_force: bool,
    pub(super) prefix: Vec<Group>,
    pub(super) block: Vec<Item>,
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
pub(super) struct TickWalk {
    pub(super) no_force: bool,
    pub(super) groups: Vec<Group>,
    pub(super) close_all: bool,
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
pub(super) struct DefaultTriggerWalk {
    pub(super) groups: Vec<Group>,
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
pub(super) struct WrongAfter {
    pub(super) groups: Vec<Group>,
    pub(super) delta: i64,
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
