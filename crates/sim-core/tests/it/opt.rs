//! `lru = "opt"`: with no readahead and one page evicted per miss, the engine's page
//! faults are a brute-force Belady cache's misses; with readahead, several tasks or large
//! folios the invariants still hold; runs are deterministic; a stream that does not know
//! its next uses is refused.

use crate::support::*;
use proptest::prelude::*;
use swapsim_core::config::LruModel;
use swapsim_core::*;

/// A setup whose tasks replay `tasks` (each a region size and its accesses) with next
/// uses counted over the tasks' accesses laid end to end.
fn opt_setup(
    m: &Machine,
    device: TestDevice,
    readahead: Box<dyn Readahead>,
    tasks: Vec<(u64, Vec<Access>)>,
) -> Setup {
    let mut s = setup(m, vec![Box::new(device)], readahead, Vec::new(), 1);
    // Pages are per task (address space): give each task's pages a range of its own.
    let keyed: Vec<u64> = tasks
        .iter()
        .enumerate()
        .flat_map(|(t, (_, acc))| acc.iter().map(move |a| ((t as u64) << 32) | a.vpage.0))
        .collect();
    let mut next = next_uses(&keyed).into_iter();
    for (i, (pages, acc)) in tasks.into_iter().enumerate() {
        let with_next: Vec<(Access, Option<u64>)> =
            acc.into_iter().map(|a| (a, next.next().flatten())).collect();
        s.tasks.push(TaskSpec::new(
            format!("t{i}"),
            vec![RegionSpec::new(VirtPage(0), pages)],
            Box::new(Oracle { accesses: with_next.into_iter(), last: None }),
        ));
    }
    s
}

/// Belady by brute force: on a miss with `capacity` pages resident, the resident page
/// whose next access is furthest away (or that is never accessed again) leaves.
fn naive_belady(pages: &[u64], capacity: u64) -> u64 {
    let mut resident: Vec<u64> = Vec::new();
    let mut misses = 0;
    for (t, &p) in pages.iter().enumerate() {
        if resident.contains(&p) {
            continue;
        }
        misses += 1;
        if resident.len() as u64 == capacity {
            let next_use = |q: u64| pages[t + 1..].iter().position(|&x| x == q).unwrap_or(usize::MAX);
            let (i, _) = resident.iter().enumerate().max_by_key(|&(_, &q)| next_use(q)).expect("full");
            resident.remove(i);
        }
        resident.push(p);
    }
    misses
}

fn opt_machine(
    limit_pages: u64,
    swap_pages: u64,
    cpus: u32,
    page_cluster: u32,
    memcg_version: u8,
) -> Machine {
    Machine { limit_pages, swap_pages, cpus, page_cluster, plugging: true, lru: LruModel::Opt, memcg_version }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn opt_without_readahead_misses_like_a_brute_force_belady(
        raw in prop::collection::vec((0u64..120, prop::bool::weighted(0.3)), 1..800),
        limit_pages in 16u64..100,
        synchronous: bool,
        memcg_version in 1u8..3,
    ) {
        let acc = first_touch_writes(&raw);
        let pages: Vec<u64> = acc.iter().map(|a| a.vpage.0).collect();
        let m = opt_machine(limit_pages, 1024, 1, 0, memcg_version);
        let dev = TestDevice { ns: 5_000, synchronous, depth: 1 };
        let r = run_checked(opt_setup(&m, dev, Box::new(NoReadahead), vec![(120, acc)]));
        prop_assert_eq!(r.vmstat.pgfault, naive_belady(&pages, limit_pages));
        // Never more misses than the exact LRU on the same accesses.
        let lru = Machine { lru: LruModel::Exact, ..opt_machine(limit_pages, 1024, 1, 0, memcg_version) };
        let dev = TestDevice { ns: 5_000, synchronous, depth: 1 };
        let exact = run_checked(setup(&lru, vec![Box::new(dev)], Box::new(NoReadahead), vec![(120, first_touch_writes(&raw))], 1));
        prop_assert!(r.vmstat.pgfault <= exact.vmstat.pgfault);
    }

    #[test]
    fn invariants_hold_under_opt_with_readahead_and_several_tasks(
        tasks in prop::collection::vec(prop::collection::vec((0u64..160, prop::bool::weighted(0.3)), 1..500), 1..3),
        limit_pages in 16u64..96,
        swap_pages in 40u64..400,
        page_cluster in 0u32..4,
        cpus in 1u32..3,
        vma_window: bool,
        synchronous: bool,
        memcg_version in 1u8..3,
    ) {
        let m = opt_machine(limit_pages, swap_pages, cpus, page_cluster, memcg_version);
        let readahead: Box<dyn Readahead> = if vma_window { Box::new(PageWindow) } else { Box::new(AlignedWindow) };
        let tasks: Vec<_> = tasks.iter().map(|t| (160, first_touch_writes(t))).collect();
        let dev = TestDevice { ns: 15_000, synchronous, depth: 4 };
        let r = run_checked(opt_setup(&m, dev, readahead, tasks));
        prop_assert!(r.vmstat.pgmajfault <= r.vmstat.pswpin);
    }
}

#[test]
fn the_page_never_used_again_goes_first_then_the_one_used_last() {
    // Sixteen pages fill the cgroup; page 16 then needs room, and page 5, never used
    // again, leaves. Page 17 needs room next: page 16 is used right after it, pages 15
    // down to 1 then, and page 0 last, so page 0 leaves. Its refault at the end evicts a
    // page never used again.
    let mut pages: Vec<u64> = (0..16).collect();
    pages.extend([16, 17, 16]);
    pages.extend((1..16).rev().filter(|&p| p != 5));
    pages.push(0);
    let acc: Vec<(u64, bool)> = pages.iter().map(|&p| (p, false)).collect();
    let m = opt_machine(16, 256, 1, 0, 2);
    let dev = TestDevice { ns: 5_000, synchronous: false, depth: 1 };
    let r = run_checked(opt_setup(&m, dev, Box::new(NoReadahead), vec![(32, first_touch_writes(&acc))]));
    // Any other victim for page 17 would refault once more.
    assert_eq!(r.vmstat.pgfault, 19);
    assert_eq!(r.vmstat.pgfault, naive_belady(&pages, 16));
    assert_eq!((r.vmstat.pswpout, r.vmstat.pswpin), (3, 1));
}

#[test]
fn opt_runs_are_deterministic() {
    let report = || {
        let m = opt_machine(40, 512, 2, 2, 1);
        let mk = |k: u64| -> Vec<(u64, bool)> {
            (0..900u64).map(|i| ((i * 37 + k * 11) % 140, i % 5 == 0)).collect()
        };
        let tasks = vec![(140, first_touch_writes(&mk(1))), (140, first_touch_writes(&mk(2)))];
        let dev = TestDevice { ns: 20_000, synchronous: false, depth: 2 };
        run(opt_setup(&m, dev, Box::new(AlignedWindow), tasks)).expect("runs")
    };
    let a = report();
    assert_eq!(format!("{a:?}"), format!("{:?}", report()));
    // The run exercises what could differ: both tasks swap out and back in.
    assert!(a.vmstat.pswpout > 50 && a.vmstat.pswpin > 50, "{:?}", a.vmstat);
}

#[test]
fn a_stream_without_next_uses_is_refused_by_setting_and_task() {
    let m = opt_machine(40, 512, 1, 0, 2);
    let dev = TestDevice { ns: 20_000, synchronous: false, depth: 2 };
    let s =
        setup(&m, vec![Box::new(dev)], Box::new(NoReadahead), vec![(8, first_touch_writes(&[(1, true)]))], 1);
    let Err(err) = Simulation::new(s) else { panic!("a stream without next uses was accepted") };
    let err = err.to_string();
    assert!(err.contains("lru = \"opt\": task 0 (t0) does not know when its pages are used next"), "{err}");
}
