//! Throughput of the engine's event queue (`swapsim_core::queue::EventQueue`).
//!
//! Two shapes of load:
//! * `schedule_then_pop`: schedule every event first, then drain the queue. This is the
//!   worst case for the heap, since it holds all events at once.
//! * `hold`: the classic "hold" model of discrete-event simulation. The queue keeps a
//!   fixed number of pending events; each operation pops the earliest one and schedules a
//!   replacement a random delay later. This is closer to what the engine does, where a
//!   handful of CPUs, in-flight requests and kswapd each have one event pending.
//!
//! Event times come from a SplitMix64 stream with a fixed seed, so every run times the
//! same sequence of operations.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use swapsim_core::queue::EventQueue;
use swapsim_core::SimTime;

/// Root seed of every input in this file.
const SEED: u64 = 0x5eed_0001;

/// Events per iteration of `schedule_then_pop`.
const EVENTS: u64 = 1_000_000;

/// Operations (one pop plus one schedule) per iteration of `hold`.
const HOLD_OPS: u64 = 1_000_000;

/// Event times are drawn from `[0, HORIZON_NS)`: one simulated second.
const HORIZON_NS: u64 = 1_000_000_000;

/// Delays in `hold` are drawn from `[0, DELAY_NS_MAX)`: 100 µs, the order of a swap read.
const DELAY_NS_MAX: u64 = 100_000;

/// SplitMix64: tiny, fast and fully determined by its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The payload carried by each event; the engine's `Event` is a small `Copy` enum of
/// about this size.
#[derive(Clone, Copy, Debug)]
struct Payload(u64);

/// Schedules `times.len()` events, then pops them all. Returns (events popped, sum of
/// payloads, whether pop order was non-decreasing in time).
fn schedule_then_pop(times: &[u64]) -> (u64, u64, bool) {
    let mut queue = EventQueue::default();
    for (i, &t) in times.iter().enumerate() {
        queue.schedule(SimTime(t), Payload(i as u64)).expect("the queue's time is still zero");
    }
    let mut n_popped = 0;
    let mut payload_sum = 0u64;
    let mut ordered = true;
    let mut last = SimTime::ZERO;
    while let Some((t, Payload(p))) = queue.pop() {
        ordered &= t >= last;
        last = t;
        n_popped += 1;
        payload_sum = payload_sum.wrapping_add(p);
    }
    (n_popped, payload_sum, ordered)
}

/// Runs the hold model with `pending` events in the queue for `delays.len()` operations.
/// Returns (operations done, final simulated time).
fn hold(pending: usize, initial: &[u64], delays: &[u64]) -> (u64, SimTime) {
    let mut queue = EventQueue::default();
    for (i, &t) in initial.iter().take(pending).enumerate() {
        queue.schedule(SimTime(t), Payload(i as u64)).expect("the queue's time is still zero");
    }
    let mut n_ops = 0;
    for &delay in delays {
        let (now, payload) = queue.pop().expect("the hold model never drains the queue");
        queue.schedule(SimTime(now.0 + delay), payload).expect("a delay is never negative");
        n_ops += 1;
    }
    (n_ops, queue.now())
}

fn bench_event_queue(c: &mut Criterion) {
    let mut rng = SplitMix64(SEED);
    let times: Vec<u64> = (0..EVENTS).map(|_| rng.next_u64() % HORIZON_NS).collect();
    let delays: Vec<u64> = (0..HOLD_OPS).map(|_| rng.next_u64() % DELAY_NS_MAX).collect();
    let initial: Vec<u64> = (0..65_536).map(|_| rng.next_u64() % DELAY_NS_MAX).collect();

    let mut group = c.benchmark_group("event_queue");
    group.sample_size(10);

    group.throughput(Throughput::Elements(EVENTS));
    group.bench_with_input(
        BenchmarkId::new("schedule_then_pop", format!("n={EVENTS}")),
        &times,
        |b, times| b.iter(|| schedule_then_pop(black_box(times))),
    );
    // Checked once, outside the timed loop, so that a broken queue cannot post a fast time.
    let expected_sum: u64 = (0..EVENTS).sum();
    assert_eq!(schedule_then_pop(&times), (EVENTS, expected_sum, true));

    group.throughput(Throughput::Elements(HOLD_OPS));
    for pending in [16usize, 1024, 65_536] {
        group.bench_with_input(
            BenchmarkId::new("hold", format!("pending={pending}")),
            &pending,
            |b, &pending| b.iter(|| hold(pending, black_box(&initial), black_box(&delays))),
        );
        let (n_ops, end) = hold(pending, &initial, &delays);
        assert_eq!(n_ops, HOLD_OPS);
        assert!(end > SimTime::ZERO, "simulated time did not advance");
    }
    group.finish();
}

criterion_group!(benches, bench_event_queue);
criterion_main!(benches);
