//! Random workloads and settings never break the invariants, counters agree with each
//! other, and with a plain LRU and no readahead the engine misses exactly where a naive
//! LRU model does.

use crate::support::*;
use proptest::prelude::*;
use swapsim_core::config::LruModel;
use swapsim_core::*;

fn accesses(pages: u64, max_len: usize) -> impl Strategy<Value = Vec<(u64, bool)>> {
    prop::collection::vec((0..pages, prop::bool::weighted(0.3)), 1..max_len)
}

/// A two-CPU machine with plugging and a cgroup v2 memcg, the classic LRU or MGLRU.
fn machine(limit_pages: u64, swap_pages: u64, page_cluster: u32, mglru: bool) -> Machine {
    Machine {
        limit_pages,
        swap_pages,
        cpus: 2,
        page_cluster,
        plugging: true,
        lru: if mglru { LruModel::Mglru } else { LruModel::Classic },
        memcg_version: 2,
    }
}

/// Each task's stream over a 128-page region with every first touch a write, and how
/// many distinct pages each one writes: what must be present, once, at the end.
fn written_tasks(tasks: &[Vec<(u64, bool)>]) -> (Vec<(u64, Vec<Access>)>, u64) {
    let distinct: usize =
        tasks.iter().map(|t| t.iter().map(|a| a.0).collect::<std::collections::BTreeSet<_>>().len()).sum();
    (tasks.iter().map(|t| (128, first_touch_writes(t))).collect(), distinct as u64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_random_workloads(
        tasks in prop::collection::vec(accesses(160, 600), 1..3),
        limit_pages in 24u64..96,
        swap_pages in 40u64..400,
        page_cluster in 0u32..4,
        plugging: bool,
        cpus in 1u32..3,
        vma_window: bool,
        memcg_version in 1u8..3,
        synchronous: bool,
        mglru: bool,
    ) {
        let lru = if mglru { LruModel::Mglru } else { LruModel::Classic };
        let m = Machine { limit_pages, swap_pages, cpus, page_cluster, plugging, lru, memcg_version };
        let readahead: Box<dyn Readahead> = if vma_window { Box::new(PageWindow) } else { Box::new(AlignedWindow) };
        let tasks: Vec<_> = tasks.iter().map(|t| (160, first_touch_writes(t))).collect();
        let n_total: usize = tasks.iter().map(|t| t.1.len()).sum();
        let dev = TestDevice { ns: 15_000, synchronous, depth: 4 };
        let r = run_checked(setup(&m, vec![Box::new(dev)], readahead, tasks, 3));
        let v = &r.vmstat;
        // Counters agree with each other and with the block layer.
        prop_assert!(v.pgmajfault <= v.pswpin);
        prop_assert_eq!(v.pswpin, v.pgmajfault + v.swap_ra);
        prop_assert!(v.swap_ra_hit <= v.swap_ra);
        prop_assert_eq!(r.block[0].reads.queued, v.pswpin);
        prop_assert_eq!(r.block[0].writes.queued, v.pswpout);
        prop_assert!(v.pgsteal_anon <= v.pgscan_anon);
        prop_assert_eq!(v.workingset_refault_anon, v.pswpin);
        if r.outcome == Outcome::Completed {
            prop_assert_eq!(r.accesses as usize, n_total);
        }
    }

    #[test]
    fn swapoff_empties_the_device_and_every_page_is_present_once(
        tasks in prop::collection::vec(accesses(128, 400), 1..3),
        limit_pages in 24u64..64,
        page_cluster in 0u32..4,
        swap_out_all_first: bool,
        vma_window: bool,
        mglru: bool,
    ) {
        let m = machine(limit_pages, 600, page_cluster, mglru);
        let readahead: Box<dyn Readahead> = if vma_window { Box::new(PageWindow) } else { Box::new(AlignedWindow) };
        let (tasks, distinct) = written_tasks(&tasks);
        let page_tables = tasks.len() as u64;
        let mut timeline = vec![TimelineOp { trigger: Trigger::WorkloadEnd, op: Operation::SetMemcgLimit(None) }];
        if swap_out_all_first {
            timeline.push(TimelineOp { trigger: Trigger::AfterPrevious, op: Operation::SwapOutAll });
        }
        timeline.push(TimelineOp { trigger: Trigger::AfterPrevious, op: Operation::Swapoff { device: "swap0".into() } });
        let dev = TestDevice { ns: 15_000, synchronous: false, depth: 4 };
        let r = run_checked(setup_with_timeline(&m, vec![Box::new(dev)], readahead, tasks, timeline));
        prop_assert_eq!(&r.outcome, &Outcome::Completed);
        let swapoff = r.operations.last().expect("swapoff reported");
        prop_assert_eq!(swapoff.op.as_str(), "swapoff");
        prop_assert_eq!(swapoff.result.as_str(), "completed");
        prop_assert_eq!(r.at_end.swap_slots_used, 0);
        prop_assert_eq!(r.at_end.swap_pages, 0);
        prop_assert_eq!(r.at_end.nr_swapcached, 0);
        // Every page a task wrote is present, once.
        prop_assert_eq!(r.at_end.rss_pages, distinct);
        // Charged too: each task's page table (its 128-page region fits one 2 MiB block).
        prop_assert_eq!(r.at_end.memcg_usage_pages, r.at_end.rss_pages + page_tables);
        if swap_out_all_first {
            let out = &r.operations[1];
            prop_assert_eq!(out.op.as_str(), "swap-out-all");
            prop_assert!(swapoff.pswpin > 0, "everything was pushed out, so swapoff reads");
        }
    }

    /// The opportunistic-reclaim RFC's cycle: reclaim ahead of time, release everything
    /// back (the device stays on), then swapoff finds nothing left to read.
    #[test]
    fn mm_reclaim_release_restores_every_page_once(
        tasks in prop::collection::vec(accesses(128, 400), 1..3),
        limit_pages in 24u64..64,
        page_cluster in 0u32..4,
        run_pages in prop_oneof![Just(0u64), 1u64..300],
        vma_window: bool,
        mglru: bool,
    ) {
        let m = machine(limit_pages, 600, page_cluster, mglru);
        let readahead: Box<dyn Readahead> = if vma_window { Box::new(PageWindow) } else { Box::new(AlignedWindow) };
        let (tasks, distinct) = written_tasks(&tasks);
        let page_tables = tasks.len() as u64;
        let after = |op| TimelineOp { trigger: Trigger::AfterPrevious, op };
        let timeline = vec![
            TimelineOp { trigger: Trigger::WorkloadEnd, op: Operation::SetMemcgLimit(None) },
            after(Operation::MmReclaimRun { pages: run_pages, timeout: None }),
            after(Operation::MmReclaimRelease { pages: 0 }),
            after(Operation::Swapoff { device: "swap0".into() }),
        ];
        let dev = TestDevice { ns: 15_000, synchronous: false, depth: 4 };
        let r = run_checked(setup_with_timeline(&m, vec![Box::new(dev)], readahead, tasks, timeline));
        prop_assert_eq!(&r.outcome, &Outcome::Completed);
        let [_, run, release, swapoff] = &r.operations[..] else {
            return Err(TestCaseError::fail(format!("four operations: {:?}", r.operations)));
        };
        prop_assert_eq!(run.result.as_str(), "completed");
        let reclaimed = run.reclaimed_pages.expect("reported");
        match run.stopped_by.as_deref() {
            Some("target") => prop_assert!(run_pages > 0 && reclaimed >= run_pages),
            Some("exhausted") => prop_assert!(run_pages == 0 || reclaimed < run_pages),
            other => prop_assert!(false, "stopped by {:?}", other),
        }
        prop_assert_eq!(release.result.as_str(), "completed");
        // No limit, so nothing goes back out during the release, and it is no fault.
        prop_assert_eq!(release.pswpout, 0);
        prop_assert_eq!(release.vmstat.pgfault, 0);
        prop_assert_eq!(release.pswpin, release.vmstat.pswpin);
        // Everything came back with the release: swapoff has nothing to read.
        prop_assert_eq!(swapoff.result.as_str(), "completed");
        prop_assert_eq!(swapoff.pswpin, 0);
        prop_assert_eq!(r.at_end.swap_slots_used, 0);
        prop_assert_eq!(r.at_end.swap_pages, 0);
        prop_assert_eq!(r.at_end.nr_swapcached, 0);
        // Every page a task wrote is present, once.
        prop_assert_eq!(r.at_end.rss_pages, distinct);
        // Charged too: each task's page table (its 128-page region fits one 2 MiB block).
        prop_assert_eq!(r.at_end.memcg_usage_pages, r.at_end.rss_pages + page_tables);
    }

    #[test]
    fn hibernate_resume_swapoff_restores_every_page_once(
        tasks in prop::collection::vec(accesses(128, 400), 1..3),
        limit_pages in 24u64..96,
        image_size in prop::option::of(0u64..4096),
        compress: bool,
        lift_limit: bool,
        mglru: bool,
    ) {
        let m = machine(limit_pages, 4096, 3, mglru);
        let (tasks, distinct) = written_tasks(&tasks);
        let page_tables = tasks.len() as u64;
        let after = |op| TimelineOp { trigger: Trigger::AfterPrevious, op };
        let first = if lift_limit { Operation::SetMemcgLimit(None) } else { Operation::Mark("end".into()) };
        let timeline = vec![
            TimelineOp { trigger: Trigger::WorkloadEnd, op: first },
            after(Operation::Hibernate(HibernateOp { image_size, compress, device: None })),
            after(Operation::Resume { boot: SimDuration(1_000_000_000) }),
            after(Operation::SetMemcgLimit(None)),
            after(Operation::Swapoff { device: "swap0".into() }),
        ];
        let dev = TestDevice { ns: 15_000, synchronous: false, depth: 4 };
        let r = run_checked(setup_with_timeline(&m, vec![Box::new(dev)], Box::new(AlignedWindow), tasks, timeline));
        prop_assert_eq!(&r.outcome, &Outcome::Completed);
        let results: Vec<&str> = r.operations.iter().map(|o| o.result.as_str()).collect();
        prop_assert_eq!(results, vec!["completed"; 5]);
        let (hib, res) = (&r.operations[1], &r.operations[2]);
        let (hr, rr) = (hib.hibernation.as_ref().unwrap(), res.hibernation.as_ref().unwrap());
        prop_assert!(hr.image_pages <= hr.target_pages.max(2048 + 64), "{:?}", hr);
        prop_assert_eq!(hr.image_pages, rr.image_pages);
        // The image is written and read whole, outside the swap counters: besides the
        // shrink's swap-outs, the writes queued while hibernating are the image's.
        prop_assert_eq!(hib.block.writes.queued_kib, (hr.image_slots + hib.pswpout) * 4);
        prop_assert_eq!(res.block.reads.queued_kib, hr.image_slots * 4);
        prop_assert_eq!(res.block.reads.completed_kib, hr.image_slots * 4);
        prop_assert_eq!((res.pswpin, res.pswpout), (0, 0));
        // Every page a task wrote is present, once, and swap is empty.
        prop_assert_eq!(r.at_end.swap_slots_used, 0);
        prop_assert_eq!(r.at_end.nr_swapcached, 0);
        prop_assert_eq!(r.at_end.rss_pages, distinct);
        // Charged too: each task's page table (its 128-page region fits one 2 MiB block).
        prop_assert_eq!(r.at_end.memcg_usage_pages, r.at_end.rss_pages + page_tables);
    }

    #[test]
    fn exact_lru_without_readahead_misses_like_a_naive_lru(
        raw in accesses(120, 800),
        limit_pages in 40u64..100,
    ) {
        let acc = first_touch_writes(&raw);
        let m = Machine {
            limit_pages, swap_pages: 1024, cpus: 1, page_cluster: 0, plugging: true,
            lru: LruModel::Exact, memcg_version: 2,
        };
        let dev = TestDevice { ns: 5_000, synchronous: true, depth: 1 };
        let r = run_checked(setup(&m, vec![Box::new(dev)], Box::new(NoReadahead), vec![(120, acc.clone())], 1));
        prop_assert_eq!(r.vmstat.pswpin, reference_swapins(&acc, limit_pages));
    }
}

/// A textbook LRU of `capacity` pages as a `Vec` (most recent last). When a page must
/// come in and the cache is full, the least recently used page leaves. Returns misses on
/// pages seen before.
fn reference_swapins(acc: &[Access], capacity: u64) -> u64 {
    let mut lru: Vec<u64> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut swapins = 0;
    for a in acc {
        let p = a.vpage.0;
        if let Some(i) = lru.iter().position(|&x| x == p) {
            lru.remove(i);
        } else {
            if !seen.insert(p) {
                swapins += 1;
            }
            if lru.len() as u64 >= capacity {
                lru.remove(0);
            }
        }
        lru.push(p);
    }
    swapins
}

#[test]
fn reference_model_counts_cyclic_misses() {
    // Three pages cycled through a cache of two: every revisit misses.
    let acc: Vec<Access> = [0u64, 1, 2, 0, 1, 2]
        .iter()
        .map(|&p| Access { vpage: VirtPage(p), write: true, think_ns: None })
        .collect();
    assert_eq!(reference_swapins(&acc, 2), 3);
    assert_eq!(reference_swapins(&acc, 3), 0);
}
