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

/// A device with a fixed service time; `synchronous` makes it behave as zram.
#[derive(Clone, Debug)]
pub(super) struct FixedLatency {
    pub(super) ns: u64,
    pub(super) rotational: bool,
    pub(super) synchronous: bool,
}

impl BlockDevice for FixedLatency {
    fn kind(&self) -> &str {
        "fixed"
    }
    fn traits(&self) -> DeviceTraits {
        DeviceTraits {
            rotational: self.rotational,
            synchronous: self.synchronous,
            queue_depth: 32,
            max_sectors_kb: 512,
        }
    }
    fn service(&mut self, now: SimTime, _req: &IoRequest) -> SimTime {
        SimTime(now.0 + self.ns)
    }
}

/// Readahead that reads the whole aligned 8-slot cluster, for tests that need readahead
/// without depending on the policies crate.
#[derive(Clone, Debug)]
pub(super) struct Aligned8;
impl Readahead for Aligned8 {
    fn kind(&self) -> &'static str {
        "aligned8"
    }
    fn plan(&mut self, f: &FaultView) -> ReadaheadPlan {
        ReadaheadPlan::Slots { first: f.offset & !7, last: f.offset | 7 }
    }
}

/// A 64 MiB machine whose memory cgroup has room for `limit_pages` pages of folios: its
/// limit adds the one page table (PTE page) of a task whose region fits in one 2 MiB block,
/// as every region of these tests does, so that the page counts below are the folios'.
pub(super) fn config(limit_pages: u64, swap_pages: u64) -> CoreConfig {
    let mut cfg = CoreConfig::default();
    cfg.machine.memory = ByteSize::mib(64);
    cfg.memcg.limit = Some(ByteSize((limit_pages + 1) * crate::ids::PAGE_SIZE));
    cfg.devices.push(SwapDeviceSpec {
        name: "swap0".into(),
        size: ByteSize(swap_pages * crate::ids::PAGE_SIZE),
        priority: None,
        backing: None,
    });
    cfg
}

pub(super) fn check(
    cfg: CoreConfig,
    readahead: Box<dyn Readahead>,
    pages: u64,
    accesses: Vec<(u64, bool)>,
) -> SimReport {
    run_to_end(cfg, readahead, pages, accesses).into_report()
}

/// A simulation, not run yet, of one task over `pages` pages replaying `stream`, on one
/// device of fixed 20 µs latency.
pub(super) fn one_task(
    cfg: CoreConfig,
    readahead: Box<dyn Readahead>,
    pages: u64,
    stream: Box<dyn crate::workload::AccessSource>,
) -> Simulation {
    let setup = Setup {
        config: cfg.validate().expect("test config is valid"),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true, synchronous: false })],
        policies: Policies::default().with_readahead(readahead),
        tasks: vec![TaskSpec::new("t", vec![RegionSpec::new(VirtPage(0), pages)], stream)],
        timeline: Vec::new(),
    };
    Simulation::new(setup).expect("setup is valid")
}

/// Runs one task over `pages` pages to the end of `accesses`, checking invariants after
/// every event, and hands back the simulation for inspection.
pub(super) fn run_to_end(
    cfg: CoreConfig,
    readahead: Box<dyn Readahead>,
    pages: u64,
    accesses: Vec<(u64, bool)>,
) -> Simulation {
    let stream = accesses.into_iter().map(|(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None });
    let mut sim = one_task(cfg, readahead, pages, Box::new(stream));
    sim.check_invariants();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    sim
}

#[test]
fn resident_accesses_never_fault() {
    let acc: Vec<_> = (0..10).chain(0..10).chain(0..10).map(|p| (p, true)).collect();
    let r = check(config(64, 256), Box::new(NoReadahead), 16, acc);
    assert_eq!(r.vmstat.pgfault, 10);
    assert_eq!(r.vmstat.pswpout, 0);
    assert_eq!(r.accesses, 30);
}

/// Reads of untouched pages map the zero page and take no memory, unless the task's reads
/// create their pages (`reads_create`, for traces of object requests): then they fault in
/// dirty pages as stores do, and a cycle over twice the limit swaps every page of it.
#[test]
fn reads_of_untouched_pages_create_them_only_when_asked() {
    let run = |reads_create: bool| {
        let stream = (0..3).flat_map(|_| 0..128u64).map(|p| Access {
            vpage: VirtPage(p),
            write: false,
            think_ns: None,
        });
        let mut sim = one_task(config(64, 1024), Box::new(NoReadahead), 128, Box::new(stream));
        sim.world.tasks[0].reads_create = reads_create;
        sim.check_invariants();
        while sim.step().unwrap() {
            sim.check_invariants();
        }
        sim.into_report()
    };
    let zero = run(false);
    assert_eq!((zero.vmstat.pgfault, zero.vmstat.pswpout, zero.vmstat.pgmajfault), (128, 0, 0));
    let created = run(true);
    let v = &created.vmstat;
    assert_eq!(v.pgmajfault, 2 * 128, "every page of the later passes misses: {v:?}");
    assert_eq!(v.pgfault, 3 * 128);
    assert!(v.pswpout >= 128, "created pages are dirty and written out: {v:?}");
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
    let task = |name: &str, acc: Vec<(u64, bool)>| {
        let accesses = acc.into_iter().map(|(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None });
        let mut spec = TaskSpec::new(name, vec![RegionSpec::new(VirtPage(0), pages)], Box::new(accesses));
        spec.address_space = Some(7);
        spec
    };
    let mut cfg = cfg;
    cfg.machine.cpus = 2;
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true, synchronous: false })],
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
fn threads_waiting_on_one_read_all_wake() {
    // Two threads of one process run the same stream on two CPUs: the second faults on
    // each page while the first's read of it is in flight, and sleeps on the same folio.
    let stream: Vec<_> = (0..128).map(|p| (p, true)).chain((0..128).map(|p| (p, false))).collect();
    let r = two_threads(config(64, 1024), 128, stream.clone(), stream);
    assert_eq!(r.accesses, 512);
    assert_eq!(r.vmstat.pswpin, r.vmstat.pgmajfault);
    assert!(r.vmstat.pgmajfault > 0 && r.vmstat.pgfault > r.vmstat.pgmajfault, "{:?}", r.vmstat);
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
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true, synchronous: false })],
        policies: Policies::default(),
        tasks: vec![TaskSpec::new(
            "t",
            vec![RegionSpec::new(VirtPage(0), 128)],
            Box::new(acc.into_iter().map(|(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None })),
        )],
        timeline: vec![TimelineOp {
            trigger: Trigger::AfterAccesses { task: crate::ids::TaskId(0), accesses: 128 },
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
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true, synchronous: false })],
        policies: Policies::default(),
        tasks: Vec::new(),
        timeline: vec![TimelineOp {
            trigger: Trigger::AfterAccesses { task: crate::ids::TaskId(3), accesses: 1 },
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
            devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true, synchronous: false })],
            policies: Policies::default(),
            tasks: vec![TaskSpec::new("t", vec![RegionSpec::new(VirtPage(0), 232)], Box::new(accesses))],
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

#[test]
fn the_resident_hit_loop_changes_nothing() {
    // A hot set with cold accesses mixed in, on two threads of one process with think
    // times from a timestamped stream, and a checkpoint in the middle of a run of hits:
    // every reason the loop hands back to the general path happens many times. The hot
    // set lies in two regions, whose pages alternate; a progress call falls in a run of
    // hits too.
    let setup = || {
        use crate::timeline::{Operation, TimelineOp, Trigger};
        let thread = |offset: u64| {
            (0..40_000u64).map(move |i| {
                let hot = (i + offset) % 48;
                let vpage = if i % 13 == 0 {
                    64 + (i * 7 + offset) % 300
                } else if hot.is_multiple_of(2) {
                    hot
                } else {
                    (1 << 20) + hot
                };
                Access {
                    vpage: VirtPage(vpage),
                    write: i % 5 == 0,
                    think_ns: (i % 3 != 0).then_some(150 + i % 700),
                }
            })
        };
        let task = |name: &str, offset: u64| {
            let regions = vec![RegionSpec::new(VirtPage(0), 400), RegionSpec::new(VirtPage(1 << 20), 48)];
            let mut spec = TaskSpec::new(name, regions, Box::new(thread(offset)));
            spec.address_space = Some(7);
            spec
        };
        let mut cfg = config(64, 1024);
        cfg.machine.cpus = 2;
        Setup {
            config: cfg.validate().unwrap(),
            seed: 1,
            devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: true, synchronous: false })],
            policies: Policies::default(),
            tasks: vec![task("a", 0), task("b", 17)],
            timeline: vec![TimelineOp {
                trigger: Trigger::AfterAccesses { task: crate::ids::TaskId(0), accesses: 25_001 },
                op: Operation::Mark("middle".into()),
            }],
        }
    };
    let run_recording = |general_only: bool| {
        super::user::GENERAL_PATH_ONLY.with(|c| c.set(general_only));
        let mut calls = Vec::new();
        let report = run_with_progress(setup(), &mut |n| calls.push(n)).unwrap();
        super::user::GENERAL_PATH_ONLY.with(|c| c.set(false));
        (report, calls)
    };
    let (general, general_calls) = run_recording(true);
    let (looped, looped_calls) = run_recording(false);
    assert!(looped.vmstat.pgmajfault > 1000, "{}", looped.vmstat.pgmajfault);
    assert_eq!(looped.accesses, 80_000);
    assert_eq!(looped.operations.len(), 1);
    assert_eq!(looped_calls, [PROGRESS_ACCESSES]);
    assert_eq!(looped_calls, general_calls);
    assert_eq!(format!("{looped:?}"), format!("{general:?}"));
}

/// A synchronous device (zram's traits): reads and writes complete in the caller's
/// context, so no I/O is ever in flight when a job exits.
#[derive(Clone, Debug)]
struct Synchronous;

impl BlockDevice for Synchronous {
    fn kind(&self) -> &str {
        "sync"
    }
    fn traits(&self) -> DeviceTraits {
        DeviceTraits { rotational: false, synchronous: true, queue_depth: 32, max_sectors_kb: 512 }
    }
    fn service(&mut self, now: SimTime, _req: &IoRequest) -> SimTime {
        SimTime(now.0 + 20_000)
    }
}

/// Job `i` of `n_jobs`, run `concurrency` at a time: writes its `pages` pages in order,
/// then reads them twice, and exits.
fn job(i: usize, concurrency: usize, pages: u64) -> TaskSpec {
    let accesses =
        (0..3 * pages).map(move |k| Access { vpage: VirtPage(k % pages), write: k < pages, think_ns: None });
    let mut spec =
        TaskSpec::new(format!("job{i}"), vec![RegionSpec::new(VirtPage(0), pages)], Box::new(accesses));
    if i >= concurrency {
        spec.start = crate::workload::TaskStart::AfterEnds((i - concurrency + 1) as u32);
    }
    spec.exit_on_end = true;
    spec
}

/// Runs `setup` checking invariants after every event; at the step where the last job
/// ends, checks that every frame left in use is a swap-cache folio nobody maps or
/// references, which only I/O in flight at an exit can leave. Returns that count.
fn run_jobs(setup: Setup) -> (SimReport, usize) {
    let mut sim = Simulation::new(setup).unwrap();
    sim.check_invariants();
    let mut left_at_end = None;
    while sim.step().unwrap() {
        sim.check_invariants();
        let queue =
            sim.world.tasks.iter().filter(|t| matches!(t.kind, task::TaskKind::User)).all(|t| t.exit_on_end);
        if queue && sim.world.workload_done && left_at_end.is_none() {
            let mm = &sim.world.mm;
            let mut n = 0;
            for pfn in mm.frames.in_use() {
                let slot =
                    mm.frames.swap_slot(pfn).expect("a frame left after every exit is in the swap cache");
                assert_eq!(mm.frames.owner(pfn), None, "frame {} is still mapped", pfn.0);
                assert_eq!(mm.swap.count(slot), 0, "{slot} is still referenced");
                n += 1;
            }
            assert_eq!(mm.swap.used_slots(), n as u64, "only those folios hold slots");
            assert!(mm.pt.ptes.iter().all(|pte| pte.state() == crate::mm::pagetable::PteState::None));
            left_at_end = Some(n);
        }
    }
    assert!(sim.world.workload_done, "the workload ended");
    (sim.into_report(), left_at_end.unwrap_or(0))
}

/// Checks the report of a queue of `n_jobs` run `concurrency` at a time: every job started
/// and exited, no more than `concurrency` ran at once, and the wall time spans them.
fn check_queue(r: &SimReport, n_jobs: usize, concurrency: usize) {
    let jobs = r.jobs.as_ref().expect("a job queue has a summary");
    // Kernel tasks the timeline started follow the jobs.
    let tasks = &r.tasks[..n_jobs];
    assert_eq!(
        (jobs.jobs, jobs.started, jobs.exited, jobs.oom_killed),
        (n_jobs as u64, n_jobs as u64, n_jobs as u64, 0)
    );
    assert!(tasks.iter().all(|t| t.exited));
    let starts: Vec<f64> = tasks.iter().map(|t| t.start_s.expect("started")).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "jobs start in queue order: {starts:?}");
    for t in tasks {
        let start = t.start_s.unwrap();
        let running = tasks.iter().filter(|u| u.start_s.unwrap() <= start && u.end_s > start).count();
        assert!(running <= concurrency, "{running} jobs running when {} started", t.name);
    }
    let last_end = tasks.iter().map(|t| t.end_s).fold(0.0, f64::max);
    assert!((jobs.wall_s - (last_end - starts[0])).abs() < 1e-9, "{jobs:?}");
}

/// Six jobs of 96 pages, two at a time, under a 64-page limit: they swap, and each exit
/// releases its frames, slots and swap-cache folios. On a synchronous device no I/O can
/// hold a folio at an exit, so nothing at all is left.
#[test]
fn exited_jobs_leave_no_memory_behind() {
    let mut cfg = config(64 + 8, 1024);
    cfg.machine.cpus = 2;
    // Eight pages of page cache keep reclaim aging the active list in so small a group.
    cfg.memcg.page_cache = ByteSize(8 * crate::ids::PAGE_SIZE);
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(Synchronous)],
        policies: Policies::default(),
        tasks: (0..6).map(|i| job(i, 2, 96)).collect(),
        timeline: Vec::new(),
    };
    let (r, left_at_end) = run_jobs(setup);
    assert!(r.vmstat.pswpout > 0 && r.vmstat.pswpin > 0, "the jobs swap: {:?}", r.vmstat);
    assert_eq!(left_at_end, 0);
    let g = &r.at_end;
    assert_eq!((g.memcg_usage_pages, g.swap_slots_used, g.nr_swapcached, g.rss_pages), (0, 0, 0, 0));
    assert_eq!(r.outcome, Outcome::Completed);
    check_queue(&r, 6, 2);
}

/// The same kind of queue on a slow device: a job can exit while reclaim is writing one
/// of its folios; that folio stays in the swap cache, mapped by nobody, until reclaim
/// reaches it. A swap-out-all once the I/O is over drops them. A mark on a job that waits
/// to start fires when that job gets there.
#[test]
fn jobs_exit_while_io_holds_their_folios() {
    use crate::timeline::{Operation, TimelineOp, Trigger};
    let mut cfg = config(64 + 8, 1024);
    cfg.machine.cpus = 2;
    // Eight pages of page cache keep reclaim aging the active list in so small a group.
    cfg.memcg.page_cache = ByteSize(8 * crate::ids::PAGE_SIZE);
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 500_000, rotational: false, synchronous: false })],
        policies: Policies::default(),
        tasks: (0..6).map(|i| job(i, 2, 42)).collect(),
        timeline: vec![
            TimelineOp {
                trigger: Trigger::AfterAccesses { task: crate::ids::TaskId(4), accesses: 10 },
                op: Operation::Mark("job4".into()),
            },
            TimelineOp { trigger: Trigger::At(SimTime(1_000_000_000)), op: Operation::SwapOutAll },
        ],
    };
    let (r, left_at_end) = run_jobs(setup);
    assert!(r.vmstat.pswpout > 0 && r.vmstat.pswpin > 0, "the jobs swap: {:?}", r.vmstat);
    // What makes this test worth having: if a change of timing leaves no folio under I/O
    // at an exit, pick another page count or latency (a scan over a few finds one).
    assert!(left_at_end > 0, "no folio was under I/O when a job exited");
    check_queue(&r, 6, 2);
    assert!(r.jobs.as_ref().unwrap().wall_s < 1.0, "the queue ends before the swap-out-all");
    let mark = &r.operations[0];
    assert!(mark.start_s > r.tasks[4].start_s.unwrap() && mark.start_s < r.tasks[4].end_s, "{mark:?}");
    assert_eq!(r.operations[1].result.as_str(), "completed");
    let g = &r.at_end;
    assert_eq!((g.memcg_usage_pages, g.swap_slots_used, g.nr_swapcached, g.rss_pages), (0, 0, 0, 0));
}

/// An OOM kill in a queue ends that job only: its slot goes to the next job and the
/// others run to their exit.
#[test]
fn an_oom_killed_job_frees_its_slot() {
    // 31 usable slots and a 64-page limit: the 200-page job cannot fit. One job at a
    // time, so that the job that cannot fit is the one that faults.
    let mut cfg = config(64, 32);
    cfg.machine.cpus = 2;
    let mut tasks: Vec<TaskSpec> = (0..5).map(|i| job(i, 1, 24)).collect();
    tasks[1] = job(1, 1, 200);
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: false, synchronous: false })],
        policies: Policies::default(),
        tasks,
        timeline: Vec::new(),
    };
    let (r, _) = run_jobs(setup);
    assert!(matches!(&r.outcome, Outcome::OomKilled { task, .. } if task == "job1"), "{:?}", r.outcome);
    let jobs = r.jobs.as_ref().unwrap();
    assert_eq!((jobs.started, jobs.exited, jobs.oom_killed), (5, 4, 1));
    assert!(!r.tasks[1].exited && r.tasks.iter().enumerate().all(|(i, t)| i == 1 || t.exited));
}

/// A task that starts after another: it starts when that one ends, on a free CPU, and
/// not before; tasks that never exit keep their memory and give no jobs summary.
#[test]
fn a_task_after_another_starts_at_its_end() {
    let writes = |pages: u64| (0..pages).map(|p| Access { vpage: VirtPage(p), write: true, think_ns: None });
    let first = TaskSpec::new("first", vec![RegionSpec::new(VirtPage(0), 16)], Box::new(writes(16)));
    let mut second = TaskSpec::new("second", vec![RegionSpec::new(VirtPage(0), 8)], Box::new(writes(8)));
    second.start = crate::workload::TaskStart::AfterTask(crate::ids::TaskId(0));
    let setup = Setup {
        config: config(64, 256).validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: false, synchronous: false })],
        policies: Policies::default(),
        tasks: vec![first, second],
        timeline: Vec::new(),
    };
    let (r, _) = run_jobs(setup);
    assert_eq!(r.tasks[0].start_s, Some(0.0));
    assert_eq!(r.tasks[1].start_s, Some(r.tasks[0].end_s));
    assert!(r.tasks[1].end_s > r.tasks[0].end_s);
    assert!(r.tasks.iter().all(|t| !t.exited));
    assert!(r.jobs.is_none());
    assert_eq!(r.at_end.rss_pages, 24);
}

#[test]
fn start_conditions_must_name_earlier_tasks() {
    use crate::workload::TaskStart;
    let check = |start: TaskStart| {
        let one = || TaskSpec::new("t", Vec::new(), Box::new(std::iter::empty()));
        let mut second = one();
        second.start = start;
        let setup = Setup {
            config: config(64, 1024).validate().unwrap(),
            seed: 1,
            devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: false, synchronous: false })],
            policies: Policies::default(),
            tasks: vec![one(), second],
            timeline: Vec::new(),
        };
        Simulation::new(setup).map(|_| ()).map_err(|err| err.to_string())
    };
    assert_eq!(check(TaskStart::AfterTask(crate::ids::TaskId(0))), Ok(()));
    assert_eq!(check(TaskStart::AfterEnds(1)), Ok(()));
    assert_eq!(
        check(TaskStart::AfterTask(crate::ids::TaskId(1))),
        Err("setup: task 1 (t): starts after task 1, which is not an earlier task".into())
    );
    assert_eq!(
        check(TaskStart::AfterEnds(2)),
        Err("setup: task 1 (t): starts after 2 task ends, outside 1..=1 (the tasks before it)".into())
    );
    assert_eq!(
        check(TaskStart::AfterEnds(0)),
        Err("setup: task 1 (t): starts after 0 task ends, outside 1..=1 (the tasks before it)".into())
    );
}

/// Every one of `n` written pages moved to the active list of a fresh classic LRU, whose
/// reclaim at priority 0 then runs once, `force_deactivate` set as a second sweep would
/// set it. Returns the pass's scan control and the pages it deactivated.
fn reclaim_with_every_folio_active(page_cache: ByteSize) -> (crate::lru::ScanControl, u64) {
    use crate::lru::{Origin, Placement, ScanControl};
    use crate::mm::pagetable::PteState;
    use crate::mm::vmscan::{Reclaimer, SWAP_CLUSTER_MAX};
    let n = 256;
    let writes: Vec<(u64, bool)> = (0..n).map(|p| (p, true)).collect();
    let mut cfg = config(4 * n + 1024, 4096);
    cfg.memcg.page_cache = page_cache;
    let mut sim = run_to_end(cfg, Box::new(NoReadahead), n, writes);
    let mut lru = crate::lru::classic::ClassicLru::new(1);
    for p in 0..n {
        let page = sim.world.mm.pt.existing_page(crate::ids::SpaceId(0), 0, VirtPage(p)).expect("written");
        let PteState::Present(pfn) = sim.world.mm.pt.pte(page).state() else {
            panic!("page {p} not present")
        };
        sim.world.lru.remove(&mut sim.world.mm, pfn);
        lru.add(&mut sim.world.mm, pfn, Placement::Active, Origin::Fault);
    }
    assert_eq!((lru.sizes().inactive_anon, lru.sizes().active_anon), (0, n));
    let before = sim.world.mm.vmstat.pgdeactivate;
    let owner = sim.world.tasks[0].owner;
    let mut sc = ScanControl::new(Reclaimer::Memcg, 0, SWAP_CLUSTER_MAX, 60, (owner, crate::ids::CpuId(0)));
    sc.force_deactivate = true;
    lru.shrink(&mut sim.world.mm, &mut sc);
    let deactivated = sim.world.mm.vmstat.pgdeactivate - before;
    assert_eq!(lru.sizes().inactive_anon, deactivated);
    lru.check_invariants(&sim.world.mm);
    (sc, deactivated)
}

/// `shrink_lruvec` loops on the inactive list's scan target and the file lists': the
/// active list is aged only alongside. With every folio active, none inactive and no page
/// cache, a pass at priority 0 scans nothing, reports no skipped deactivation (so
/// `do_try_to_free_pages` would not go round again) and ages the active list only by the
/// rebalancing after the loop, `SWAP_CLUSTER_MAX` pages at most, even when forced.
#[test]
fn reclaim_with_an_empty_inactive_list_scans_nothing() {
    let (sc, deactivated) = reclaim_with_every_folio_active(ByteSize(0));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (0, 0));
    assert!(!sc.skipped_deactivate, "no active folio was passed over by the loop");
    assert!(deactivated <= crate::mm::vmscan::SWAP_CLUSTER_MAX, "deactivated {deactivated} pages");
}

/// With page cache charged to the group (here 128 pages: four rounds of
/// `SWAP_CLUSTER_MAX` at priority 0), the same pass keeps looping on the file lists and
/// ages the active list a batch per round: more than the rebalancing alone could.
#[test]
fn page_cache_keeps_the_active_list_aged_when_the_inactive_list_is_empty() {
    let (sc, deactivated) = reclaim_with_every_folio_active(ByteSize(512 * 1024));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (0, 0), "nothing was inactive before the pass");
    assert!(deactivated >= 4 * crate::mm::vmscan::SWAP_CLUSTER_MAX, "deactivated {deactivated} pages");
}
