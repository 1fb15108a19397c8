//! Engine tests on tiny machines, with invariants checked after every event.

use super::*;
use crate::config::ByteSize;
use crate::config::CoreConfig;
use crate::device::{DeviceTraits, IoRequest};
use crate::ids::VirtPage;
use crate::mm::Watermarks;
use crate::policy::readahead::{FaultView, NoReadahead, Readahead, ReadaheadPlan};
use crate::policy::Policies;
use crate::workload::Access;
use crate::workload::RegionSpec;
use crate::SwapDeviceSpec;

#[derive(Debug)]
struct FixedLatency {
    ns: u64,
    rotational: bool,
}

impl BlockDevice for FixedLatency {
    fn kind(&self) -> &str {
        "fixed"
    }
    fn traits(&self) -> DeviceTraits {
        DeviceTraits { rotational: self.rotational, synchronous: false, queue_depth: 32, max_sectors_kb: 512 }
    }
    fn service(&mut self, now: SimTime, _req: &IoRequest) -> SimTime {
        SimTime(now.0 + self.ns)
    }
}

/// Readahead that reads the whole aligned 8-slot cluster, for tests that need readahead
/// without depending on the policies crate.
#[derive(Debug)]
struct Aligned8;
impl Readahead for Aligned8 {
    fn kind(&self) -> &'static str {
        "aligned8"
    }
    fn plan(&mut self, f: &FaultView) -> ReadaheadPlan {
        ReadaheadPlan::Slots { first: f.offset & !7, last: f.offset | 7 }
    }
}

fn config(limit_pages: u64, swap_pages: u64) -> CoreConfig {
    let mut cfg = CoreConfig::default();
    cfg.machine.memory = ByteSize::mib(64);
    cfg.memcg.limit = Some(ByteSize(limit_pages * crate::ids::PAGE_SIZE));
    cfg.devices.push(SwapDeviceSpec {
        name: "swap0".into(),
        size: ByteSize(swap_pages * crate::ids::PAGE_SIZE),
        priority: None,
        backing: None,
    });
    cfg
}

fn check(
    cfg: CoreConfig,
    readahead: Box<dyn Readahead>,
    pages: u64,
    accesses: Vec<(u64, bool)>,
) -> SimReport {
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true })],
        policies: Policies::default().with_readahead(readahead),
        tasks: vec![TaskSpec {
            address_space: None,
            name: "t".into(),
            regions: vec![RegionSpec::new(VirtPage(0), pages)],
            accesses: Box::new(accesses.into_iter().map(|(p, w)| Access {
                vpage: VirtPage(p),
                write: w,
                think_ns: None,
            })),
        }],
        timeline: Vec::new(),
    };
    let mut sim = Simulation::new(setup).unwrap();
    sim.check_invariants();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    sim.into_report()
}

#[test]
fn resident_accesses_never_fault() {
    let acc: Vec<_> = (0..10).chain(0..10).chain(0..10).map(|p| (p, true)).collect();
    let r = check(config(64, 256), Box::new(NoReadahead), 16, acc);
    assert_eq!(r.vmstat.pgfault, 10);
    assert_eq!(r.vmstat.pswpout, 0);
    assert_eq!(r.accesses, 30);
}

#[test]
fn cyclic_access_over_twice_the_limit_swaps_every_page() {
    // 128 pages cycled under a 64-page limit: LRU keeps evicting what comes next.
    let acc: Vec<_> = (0..3).flat_map(|_| 0..128u64).map(|p| (p, false)).collect();
    let mut acc2: Vec<_> = (0..128).map(|p| (p, true)).collect();
    acc2.extend(acc);
    let r = check(config(64, 1024), Box::new(NoReadahead), 128, acc2);
    let v = &r.vmstat;
    assert!(v.pswpout >= 64, "{v:?}");
    assert_eq!(v.pswpin, v.pgmajfault, "without readahead every read is a major fault");
    assert_eq!(v.pgmajfault, 3 * 128, "every page of every pass misses");
    assert_eq!(v.workingset_refault_anon, v.pswpin);
    assert_eq!(r.block[0].reads.completed, v.pswpin);
    assert_eq!(r.outcome, Outcome::Completed);
}

#[test]
fn readahead_reads_neighbours_and_hits_are_minor() {
    let mut acc: Vec<_> = (0..128).map(|p| (p, true)).collect();
    acc.extend((0..2).flat_map(|_| 0..128u64).map(|p| (p, false)));
    let r = check(config(64, 1024), Box::new(Aligned8), 128, acc);
    let v = &r.vmstat;
    assert!(v.swap_ra > 0 && v.swap_ra_hit > 0, "{v:?}");
    assert!(v.pgmajfault < v.pswpin);
    assert_eq!(v.pswpin, v.pgmajfault + v.swap_ra);
    assert!(r.block[0].reads.merges > 0, "plugged readahead merges");
}

#[test]
fn full_swap_ends_in_an_oom_kill() {
    // 200 pages written under a 64-page limit with only 31 usable slots.
    let acc: Vec<_> = (0..200).map(|p| (p, true)).collect();
    let r = check(config(64, 32), Box::new(NoReadahead), 200, acc);
    assert!(matches!(r.outcome, Outcome::OomKilled { .. }), "{:?}", r.outcome);
    assert_eq!(r.vmstat.oom_kill, 1);
    assert_eq!(r.at_end.swap_slots_used, 0, "the killed task's slots are released");
}

#[test]
fn watermarks_follow_the_kernel_formula() {
    // 4 GiB: min_free_kbytes = sqrt(16 × 4194304) = 8192 KiB = 2048 pages.
    let w = Watermarks::derive(1 << 20, None, 10);
    assert_eq!(w.min, 2048);
    assert_eq!(w.low - w.min, (1 << 20) * 10 / 10_000);
    assert_eq!(w.high - w.min, 2 * ((1 << 20) * 10 / 10_000));
}

fn two_threads(cfg: CoreConfig, pages: u64, a: Vec<(u64, bool)>, b: Vec<(u64, bool)>) -> SimReport {
    let task = |name: &str, acc: Vec<(u64, bool)>| TaskSpec {
        name: name.into(),
        address_space: Some(7),
        regions: vec![RegionSpec::new(VirtPage(0), pages)],
        accesses: Box::new(acc.into_iter().map(|(p, w)| Access {
            vpage: VirtPage(p),
            write: w,
            think_ns: None,
        })),
    };
    let mut cfg = cfg;
    cfg.machine.cpus = 2;
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true })],
        policies: Policies::default(),
        tasks: vec![task("t1", a), task("t2", b)],
        timeline: Vec::new(),
    };
    let mut sim = Simulation::new(setup).unwrap();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    sim.into_report()
}

#[test]
fn threads_share_their_process_address_space() {
    // Both threads write the same 32 pages: each page faults once, whoever comes first.
    let acc: Vec<_> = (0..32).map(|p| (p, true)).collect();
    let r = two_threads(config(64, 256), 32, acc.clone(), acc);
    assert_eq!(r.vmstat.pgfault, 32);
    assert_eq!(r.at_end.rss_pages, 32);
    assert_eq!(r.accesses, 64);
}

#[test]
fn an_oom_kill_takes_every_thread_of_the_process() {
    // 200 pages written under a 64-page limit with 31 usable slots: the process dies.
    let a: Vec<_> = (0..100).map(|p| (p, true)).collect();
    let b: Vec<_> = (100..200).map(|p| (p, true)).collect();
    let r = two_threads(config(64, 32), 200, a, b);
    assert!(matches!(r.outcome, Outcome::OomKilled { .. }), "{:?}", r.outcome);
    assert_eq!(r.vmstat.oom_kill, 1, "one kill takes both threads");
    assert_eq!(r.at_end.rss_pages, 0);
    assert_eq!(r.at_end.swap_slots_used, 0);
}

#[test]
fn a_mark_after_n_accesses_splits_the_run_into_phases() {
    use crate::timeline::{Operation, TimelineOp, Trigger};
    // Fill 128 pages under a 64-page limit, then read them all again.
    let mut acc: Vec<_> = (0..128).map(|p| (p, true)).collect();
    acc.extend((0..128u64).map(|p| (p, false)));
    let setup = Setup {
        config: config(64, 1024).validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true })],
        policies: Policies::default(),
        tasks: vec![TaskSpec {
            name: "t".into(),
            address_space: None,
            regions: vec![RegionSpec::new(VirtPage(0), 128)],
            accesses: Box::new(acc.into_iter().map(|(p, w)| Access {
                vpage: VirtPage(p),
                write: w,
                think_ns: None,
            })),
        }],
        timeline: vec![TimelineOp {
            trigger: Trigger::AfterAccesses { task: 0, accesses: 128 },
            op: Operation::Mark("fill-end".into()),
        }],
    };
    let mut sim = Simulation::new(setup).unwrap();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    let r = sim.into_report();
    let mark = &r.operations[0];
    assert_eq!(
        (mark.op.as_str(), mark.label.as_deref(), mark.result.as_str()),
        ("mark", Some("fill-end"), "completed")
    );
    // The mark fired at the end of the fill: after it, only the second pass happened.
    assert!(mark.start_s > 0.0 && mark.start_s < r.sim_time_s);
    assert_eq!(r.tasks[0].accesses, 256);
    assert_eq!(r.vmstat.pswpin, r.vmstat.pgmajfault);
    assert!(r.vmstat.pgmajfault > 0);
}

#[test]
fn a_checkpoint_for_a_missing_task_is_a_setup_error() {
    use crate::timeline::{Operation, TimelineOp, Trigger};
    let setup = Setup {
        config: config(64, 1024).validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true })],
        policies: Policies::default(),
        tasks: Vec::new(),
        timeline: vec![TimelineOp {
            trigger: Trigger::AfterAccesses { task: 3, accesses: 1 },
            op: Operation::Mark("x".into()),
        }],
    };
    let err = Simulation::new(setup).unwrap_err();
    assert_eq!(err.to_string(), "setup: timeline[0]: task 3 does not exist (the setup has 0 tasks)");
}

/// Progress is told the access count at each multiple of `PROGRESS_ACCESSES`, counting
/// accesses that complete at once and those that wait for a read, and watching a run
/// changes nothing in its report.
#[test]
fn progress_reports_multiples_of_the_interval_and_changes_nothing() {
    // Mostly a resident hot set, with one access in ten cycling through cold pages that
    // do not fit: both ways an access is counted happen many times.
    let n_accesses = 2 * PROGRESS_ACCESSES + 1000;
    let setup = || {
        let accesses = (0..n_accesses).map(|i| {
            let vpage = if i % 10 == 0 { 32 + (i / 10) % 200 } else { i % 32 };
            Access { vpage: VirtPage(vpage), write: i % 3 == 0, think_ns: None }
        });
        Setup {
            config: config(64, 1024).validate().unwrap(),
            seed: 1,
            devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true })],
            policies: Policies::default(),
            tasks: vec![TaskSpec {
                address_space: None,
                name: "t".into(),
                regions: vec![RegionSpec::new(VirtPage(0), 232)],
                accesses: Box::new(accesses),
            }],
            timeline: Vec::new(),
        }
    };
    let mut seen = Vec::new();
    let watched = run_with_progress(setup(), &mut |n_done| seen.push(n_done)).unwrap();
    assert_eq!(seen, [PROGRESS_ACCESSES, 2 * PROGRESS_ACCESSES]);
    assert_eq!(watched.accesses, n_accesses);
    assert!(watched.vmstat.pgmajfault > 0, "some accesses waited for a read");
    assert_eq!(format!("{watched:?}"), format!("{:?}", run(setup()).unwrap()));
}
