//! Timeline operations on tiny machines: the opportunistic-reclaim RFC's `mm-reclaim-run`
//! and `mm-reclaim-release`, with invariants checked after every event.

use crate::config::{ByteSize, CoreConfig};
use crate::engine::tests::{config, Aligned8, FixedLatency};
use crate::engine::{Setup, SimReport, Simulation, TaskSpec};
use crate::ids::VirtPage;
use crate::policy::readahead::{NoReadahead, Readahead};
use crate::policy::Policies;
use crate::time::SimDuration;
use crate::timeline::{OpReport, OpResult, Operation, TimelineOp, Trigger};
use crate::workload::{Access, RegionSpec};
use crate::SwapDeviceSpec;

/// A machine with room for everything: reclaim happens only when an operation asks.
fn roomy() -> CoreConfig {
    config(4096, 4096)
}

/// `ops` one after another, the first at the workload's end.
pub(in crate::engine) fn in_turn(ops: Vec<Operation>) -> Vec<TimelineOp> {
    ops.into_iter()
        .enumerate()
        .map(|(i, op)| TimelineOp {
            trigger: if i == 0 { Trigger::WorkloadEnd } else { Trigger::AfterPrevious },
            op,
        })
        .collect()
}

/// One task writes `pages` pages once; at the workload's end `ops` run one after another.
/// Every device has a fixed service time of `ns`. Invariants are checked after every event.
fn check(
    cfg: CoreConfig,
    ns: u64,
    readahead: Box<dyn Readahead>,
    pages: u64,
    ops: Vec<Operation>,
) -> SimReport {
    let n_devices = cfg.devices.len();
    let timeline = in_turn(ops);
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: (0..n_devices)
            .map(|_| {
                Box::new(FixedLatency { ns, rotational: false, synchronous: false })
                    as Box<dyn crate::device::BlockDevice>
            })
            .collect(),
        policies: Policies::default().with_readahead(readahead),
        tasks: vec![TaskSpec::new(
            "t",
            vec![RegionSpec::new(VirtPage(0), pages)],
            Box::new((0..pages).map(|p| Access { vpage: VirtPage(p), write: true, think_ns: None })),
        )],
        timeline,
    };
    let mut sim = Simulation::new(setup).unwrap();
    sim.check_invariants();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    sim.into_report()
}

fn run(pages: u64, timeout_ms: Option<u64>) -> Operation {
    Operation::MmReclaimRun { pages, timeout: timeout_ms.map(|ms| SimDuration(ms * 1_000_000)) }
}

fn release(pages: u64) -> Operation {
    Operation::MmReclaimRelease { pages }
}

/// The report of operation `i`, which must have completed.
fn op(r: &SimReport, i: usize) -> &OpReport {
    let op = &r.operations[i];
    assert_eq!(op.result, OpResult::Completed, "{op:?}");
    op
}

#[test]
fn run_with_a_target_reclaims_at_least_that_many() {
    let r = check(roomy(), 20_000, Box::new(NoReadahead), 200, vec![run(64, None)]);
    let run = op(&r, 0);
    assert_eq!(run.stopped_by.as_deref(), Some("target"));
    let reclaimed = run.reclaimed_pages.unwrap();
    assert!((64..200).contains(&reclaimed), "{run:?}");
    // Nothing was in swap before: every page freed was written by this operation.
    assert!(run.pswpout >= reclaimed, "{run:?}");
    assert_eq!(run.vmstat.pswpout, run.pswpout);
    // Pages written but not yet freed wait in the swap cache: out of RSS, still charged,
    // as is the region's page table.
    assert_eq!(r.at_end.memcg_usage_pages, 200 - reclaimed + 1);
    assert_eq!(r.at_end.rss_pages + r.at_end.swap_pages, 200);
    assert!(r.at_end.swap_pages >= reclaimed);
    assert_eq!((run.pswpin, run.vmstat.pgfault), (0, 0));
}

#[test]
fn run_of_zero_reclaims_everything_and_ends_exhausted() {
    let r = check(roomy(), 20_000, Box::new(NoReadahead), 200, vec![run(0, None)]);
    let run = op(&r, 0);
    assert_eq!(run.stopped_by.as_deref(), Some("exhausted"));
    assert_eq!(run.reclaimed_pages, Some(200));
    assert_eq!(run.pswpout, 200);
    let g = &r.at_end;
    // The region's page table stays charged while the task lives.
    assert_eq!((g.rss_pages, g.memcg_usage_pages, g.nr_swapcached, g.swap_pages), (0, 1, 0, 200));
}

#[test]
fn run_stops_exhausted_when_swap_is_full() {
    let r = check(config(4096, 64), 20_000, Box::new(NoReadahead), 200, vec![run(150, None)]);
    let run = op(&r, 0);
    assert_eq!(run.stopped_by.as_deref(), Some("exhausted"));
    // Every usable slot (the first holds the swap header) was written. The passes are
    // paced by writeback, so pages written early were freed by later passes once their
    // writes completed; once swap is full, get_scan_count leaves anonymous pages alone and
    // the rounds find nothing more.
    assert_eq!(run.pswpout, 63, "{run:?}");
    assert_eq!(r.at_end.swap_slots_used, 63);
    let reclaimed = run.reclaimed_pages.unwrap();
    assert!((1..=63).contains(&reclaimed), "{run:?}");
    assert_eq!(r.at_end.memcg_usage_pages, 200 - reclaimed + 1, "and the page table");
}

#[test]
fn run_stops_at_its_timeout() {
    // Each write takes 2 ms, so the paced passes have written some pages and freed few
    // of them when the 1 ms timeout stops the run.
    let ops = vec![run(0, Some(1)), Operation::Mark("after".into())];
    let r = check(roomy(), 2_000_000, Box::new(NoReadahead), 2000, ops);
    let run = op(&r, 0);
    assert_eq!(run.stopped_by.as_deref(), Some("timeout"));
    let duration_s = run.end_s.unwrap() - run.start_s;
    assert!((duration_s - 0.001).abs() < 1e-9, "{run:?}");
    assert!(run.pswpout > 0, "{run:?}");
    assert!(run.reclaimed_pages.unwrap() < 2000, "{run:?}");
    // The next operation starts once the timed-out one has stopped.
    assert!(r.operations[1].start_s >= run.end_s.unwrap());
}

#[test]
fn run_with_a_timeout_that_is_not_reached_stops_at_the_target() {
    let r = check(roomy(), 20_000, Box::new(NoReadahead), 200, vec![run(32, Some(60_000))]);
    let run = op(&r, 0);
    assert_eq!(run.stopped_by.as_deref(), Some("target"));
    assert!(run.end_s.unwrap() < 60.0);
}

#[test]
fn release_brings_n_pages_back_and_the_device_stays_on() {
    let r = check(roomy(), 20_000, Box::new(Aligned8), 200, vec![run(0, None), release(50), run(0, None)]);
    let back = op(&r, 1);
    assert_eq!(back.released_pages, Some(50), "{back:?}");
    // Not faults, but swap-ins: every PTE restored was read by this operation, target or
    // readahead (readahead may read past the last one restored).
    assert_eq!((back.vmstat.pgfault, back.vmstat.pgmajfault), (0, 0));
    assert!(back.pswpin >= 50 && back.pswpin < 50 + 8, "{back:?}");
    assert!(back.swap_ra > 0, "{back:?}");
    assert_eq!(back.pswpout, 0);
    // Swap is still on: the second run pushes the 50 pages out to it again.
    let again = op(&r, 2);
    assert_eq!(again.stopped_by.as_deref(), Some("exhausted"));
    assert_eq!(again.pswpout, 50, "{again:?}");
    assert_eq!((r.at_end.rss_pages, r.at_end.swap_pages), (0, 200));
}

#[test]
fn release_of_zero_empties_swap() {
    let r = check(roomy(), 20_000, Box::new(Aligned8), 200, vec![run(0, None), release(0)]);
    let back = op(&r, 1);
    assert_eq!(back.released_pages, Some(200));
    assert_eq!(back.pswpin, 200);
    // One target read per 8-slot cluster (the slots start at 1, after the header), the
    // rest read ahead.
    assert_eq!(back.pswpin - back.swap_ra, 26, "{back:?}");
    let g = &r.at_end;
    assert_eq!((g.rss_pages, g.swap_pages, g.swap_slots_used, g.nr_swapcached), (200, 0, 0, 0));
}

#[test]
fn release_walks_every_device_by_priority() {
    let mut cfg = roomy();
    cfg.devices[0].size = crate::config::ByteSize(100 * crate::ids::PAGE_SIZE);
    cfg.devices[0].priority = Some(10);
    cfg.devices.push(SwapDeviceSpec {
        name: "swap1".into(),
        size: crate::config::ByteSize(1000 * crate::ids::PAGE_SIZE),
        priority: Some(5),
        backing: None,
    });
    // 100 pages fill swap0 first; the other 100 go to swap1.
    let r = check(cfg.clone(), 20_000, Box::new(NoReadahead), 200, vec![run(0, None), release(150)]);
    let back = op(&r, 1);
    assert_eq!(back.released_pages, Some(150));
    // swap0 first, all of it, then the rest from swap1.
    let on_swap0 = r.block[0].writes.queued;
    assert_eq!(on_swap0, 99, "every usable slot of swap0");
    assert_eq!(r.block[0].reads.queued, on_swap0);
    assert_eq!(r.block[1].reads.queued, 150 - on_swap0);
    let r = check(cfg, 20_000, Box::new(NoReadahead), 200, vec![run(0, None), release(0)]);
    assert_eq!(op(&r, 1).released_pages, Some(200));
    assert_eq!((r.at_end.swap_pages, r.at_end.swap_slots_used), (0, 0));
}

#[test]
fn release_with_nothing_in_swap_releases_nothing() {
    let r = check(roomy(), 20_000, Box::new(NoReadahead), 50, vec![release(10)]);
    let back = op(&r, 0);
    assert_eq!((back.released_pages, back.pswpin), (Some(0), 0));
}

/// Under a memcg limit, bringing pages back makes reclaim push others out, to the same
/// device since it stays on. The walk passes each device once, so it ends; the pages
/// pushed out behind it stay in swap.
#[test]
fn release_under_a_memcg_limit_swaps_others_out_and_ends() {
    let r = check(config(64, 160), 20_000, Box::new(NoReadahead), 150, vec![run(0, None), release(0)]);
    let back = op(&r, 1);
    let released = back.released_pages.unwrap();
    assert!(released > 64, "{back:?}");
    assert_eq!(back.pswpin, released, "no readahead: one read per PTE");
    assert!(back.pswpout > 0, "{back:?}");
    assert!(r.at_end.memcg_usage_pages <= 64);
    assert!(r.at_end.swap_pages > 0);
}

/// A release that cannot get memory for the next page stops there, as swapoff does,
/// with what it brought back so far; nothing is killed and the device stays on. Here the
/// release's swap-ins under a full 64-page limit need reclaim to make room each time, and
/// after 18 pages a charge's reclaim gives up (MAX_RECLAIM_RETRIES rounds freeing and
/// writing nothing): the charge fails as out of memory.
#[test]
fn release_runs_out_of_memory_with_a_clear_result() {
    let ops = vec![release(0), run(0, None)];
    // Eight pages of page cache (on top of the 64 pages for folios) keep reclaim aging
    // the active list in so small a group, as in any real one.
    let mut cfg = config(64 + 8, 100);
    cfg.memcg.page_cache = ByteSize(8 * crate::ids::PAGE_SIZE);
    let r = check(cfg, 20_000, Box::new(NoReadahead), 110, ops);
    assert_eq!(r.outcome, crate::Outcome::Completed);
    let back = &r.operations[0];
    assert_eq!(back.result.as_str(), "failed: out of memory", "{back:?}");
    let released = back.released_pages.unwrap();
    assert_eq!(released, 18, "{back:?}");
    // The device is still on: the run after it swaps out again.
    assert!(op(&r, 1).pswpout > 0);
}

#[test]
fn mm_reclaim_runs_are_deterministic() {
    let ops = || vec![run(100, None), release(30), run(0, Some(5)), release(0)];
    let a = check(roomy(), 300_000, Box::new(Aligned8), 300, ops());
    let b = check(roomy(), 300_000, Box::new(Aligned8), 300, ops());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(a.operations.len(), 4);
}
