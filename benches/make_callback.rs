//! The workloads of Node's `benchmark/napi/make_callback` on each side, per
//! call, with the cost account (`Runtime::cost`) per call beside the times.
//!
//! Node's binding (`benchmark/napi/make_callback/binding.cc`) calls from a
//! libuv timer, so every call is a top-level callback scope:
//!
//! * `MakeCallback`: `node::MakeCallback(isolate, recv, fn, 0, nullptr, {0, 0})`
//!   → `make-callback 0 0 R1`, `close`, from the event loop;
//! * `AsyncResource`: `node::AsyncResource::MakeCallback` on a resource made
//!   in the main script (id 2, trigger 1) → `make-callback 2 1 R2`, `close`,
//!   from the event loop;
//! * `Call`: `v8::Function::Call`, no scope → no op on either side.
//!
//! One more row, `runInAsyncScope`, is the JavaScript `AsyncResource`:
//! `run-in-async-scope 2 1 R2`, `end-run-in-async-scope` per call inside the
//! main script's native scope. Node's benchmark does not run it.

use criterion::{criterion_group, criterion_main, Criterion};
use lazy::Lazy;
use model::vocab::{
    AsyncContext, Cost, Holder, NativeResource, Op, ResourceId, Runtime, ScopeFlags, ScopeKind,
};
use model::Eager;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Calls used to compute the cost per call (the account is exact integers).
const CALLS: u64 = 1000;

/// One workload: ops that put the runtime where the calls happen, then the
/// ops of one call.
struct Workload {
    name: &'static str,
    setup: Vec<Op>,
    call: Vec<Op>,
}

fn make_callback(async_id: i64, trigger_async_id: i64, resource: u32) -> Op {
    Op::OpenScope {
        kind: ScopeKind::MakeCallback,
        context: AsyncContext {
            async_id,
            trigger_async_id,
        },
        resource: NativeResource {
            id: ResourceId(resource),
            holder: Holder::Local,
        },
        flags: ScopeFlags::default(),
    }
}

fn workloads() -> Vec<Workload> {
    // The main script has ended: the timer fires from the event loop.
    let event_loop = vec![Op::CloseScope { threw: false }];
    let close = Op::CloseScope { threw: false };
    vec![
        Workload {
            name: "MakeCallback",
            setup: event_loop.clone(),
            call: vec![make_callback(0, 0, 1), close.clone()],
        },
        Workload {
            name: "AsyncResource",
            setup: event_loop.clone(),
            call: vec![make_callback(2, 1, 2), close],
        },
        Workload {
            name: "Call",
            setup: event_loop,
            call: vec![],
        },
        Workload {
            name: "runInAsyncScope",
            setup: vec![],
            call: vec![
                Op::EnterRunInAsyncScope {
                    async_id: 2,
                    trigger_async_id: 1,
                    resource: ResourceId(2),
                },
                Op::ExitRunInAsyncScope,
            ],
        },
    ]
}

/// A runtime after `setup`; every op must answer with no observation.
fn prepared<R: Runtime + Default>(w: &Workload) -> R {
    let mut rt = R::default();
    for op in &w.setup {
        assert_eq!(rt.apply(op), Ok(vec![]), "{}: setup `{op}`", w.name);
    }
    for op in &w.call {
        assert_eq!(rt.apply(op), Ok(vec![]), "{}: call `{op}`", w.name);
    }
    rt
}

/// The cost of one call, averaged over `CALLS` calls, as
/// (stack, resource, chain, crossings, allocations) per call.
fn cost_per_call<R: Runtime + Default>(w: &Workload) -> [f64; 5] {
    let mut rt: R = prepared(w);
    let before = rt.cost();
    for _ in 0..CALLS {
        for op in &w.call {
            let _ = rt.apply(op);
        }
    }
    let Cost {
        stack_writes,
        resource_writes,
        chain_writes,
        crossings,
        allocations,
    } = rt.cost() - before;
    [
        stack_writes,
        resource_writes,
        chain_writes,
        crossings,
        allocations,
    ]
    .map(|n| n as f64 / CALLS as f64)
}

fn print_cost_table(workloads: &[Workload]) {
    println!("cost per call (over {CALLS} calls): stack writes, resource writes, chain writes, crossings, allocations");
    for w in workloads {
        for (side, cost) in [
            ("eager", cost_per_call::<Eager>(w)),
            ("lazy", cost_per_call::<Lazy>(w)),
        ] {
            let total: f64 = cost.iter().sum();
            println!(
                "  {:<16} {:<5} stack {:>4} resource {:>4} chain {:>4} crossings {:>4} allocations {:>4}  total {}",
                w.name, side, cost[0], cost[1], cost[2], cost[3], cost[4], total
            );
        }
    }
}

/// Paired rounds: the two sides alternate, so that load that drifts during
/// the run (the machine is shared) hits both alike.
const ROUNDS: usize = 21;
/// Calls per side per round.
const ROUND_CALLS: u32 = 200_000;

fn time_calls<R: Runtime>(rt: &mut R, w: &Workload) -> f64 {
    let start = Instant::now();
    for _ in 0..ROUND_CALLS {
        for op in &w.call {
            let _ = black_box(rt.apply(black_box(op)));
        }
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(ROUND_CALLS)
}

fn print_paired(workloads: &[Workload]) {
    println!(
        "paired rounds ({ROUNDS} x {ROUND_CALLS} calls per side, sides alternating): ns per call, min and median; lazy/eager median of the per-round ratios"
    );
    for w in workloads {
        let (mut eager, mut lazy): (Eager, Lazy) = (prepared(w), prepared(w));
        let (mut e, mut l, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let te = time_calls(&mut eager, w);
            let tl = time_calls(&mut lazy, w);
            e.push(te);
            l.push(tl);
            ratio.push(tl / te);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (e_min, l_min) = (
            e.iter().copied().fold(f64::MAX, f64::min),
            l.iter().copied().fold(f64::MAX, f64::min),
        );
        println!(
            "  {:<16} eager min {:>7.2} median {:>7.2}   lazy min {:>7.2} median {:>7.2}   lazy/eager {:.3}",
            w.name,
            e_min,
            median(&mut e),
            l_min,
            median(&mut l),
            median(&mut ratio)
        );
    }
}

fn bench_side<R: Runtime + Default>(c: &mut Criterion, w: &Workload, side: &str) {
    let mut rt: R = prepared(w);
    c.bench_function(&format!("make_callback/{}/{side}", w.name), |b| {
        b.iter(|| {
            for op in &w.call {
                let _ = black_box(rt.apply(black_box(op)));
            }
        })
    });
}

fn make_callback_workloads(c: &mut Criterion) {
    let workloads = workloads();
    print_cost_table(&workloads);
    print_paired(&workloads);
    for w in &workloads {
        bench_side::<Eager>(c, w, "eager");
        bench_side::<Lazy>(c, w, "lazy");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = make_callback_workloads
}
criterion_main!(benches);
