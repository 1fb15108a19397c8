//! Random queues of processes (`make -jN`): jobs of one or two threads, each its own
//! address space, started as slots free up after a launch delay, exiting at the end of
//! their streams, in a memory cgroup too small for them, sometimes with too little swap so
//! that the OOM killer must choose. Every invariant holds after every event, every job is
//! accounted for, an exit frees everything its process held, and the same setup gives the
//! same report.

use crate::support::*;
use proptest::prelude::*;
use swapsim_core::config::LruModel;
use swapsim_core::*;

/// One job: its region, its threads' streams (the first thread's first touches write), its
/// launch delay in microseconds, and whether it starts by exec.
#[derive(Clone, Debug)]
pub(crate) struct Job {
    pages: u64,
    threads: Vec<Vec<(u64, bool)>>,
    delay_us: u64,
    exec: bool,
}

pub(crate) fn job() -> impl Strategy<Value = Job> {
    (8u64..96, 1usize..3, 0u64..3000, any::<bool>()).prop_flat_map(|(pages, threads, delay_us, exec)| {
        prop::collection::vec(prop::collection::vec((0..pages, prop::bool::weighted(0.3)), 1..300), threads)
            .prop_map(move |threads| Job { pages, threads, delay_us, exec })
    })
}

#[derive(Clone, Debug)]
pub(crate) struct Knobs {
    concurrency: u32,
    limit_pages: u64,
    swap_pages: u64,
    cpus: u32,
    synchronous: bool,
    mglru: bool,
    memcg_version: u8,
}

pub(crate) fn knobs() -> impl Strategy<Value = Knobs> {
    (1u32..4, 16u64..80, prop_oneof![8u64..40, 200u64..600], 1u32..3, any::<bool>(), any::<bool>(), 1u8..3)
        .prop_map(|(concurrency, limit_pages, swap_pages, cpus, synchronous, mglru, memcg_version)| Knobs {
            concurrency,
            limit_pages,
            swap_pages,
            cpus,
            synchronous,
            mglru,
            memcg_version,
        })
}

/// The queue as a setup: job `j`'s threads share address space `j`; the first
/// `concurrency` jobs start at once, job `j` after `j - concurrency + 1` process exits.
pub(crate) fn queue_setup(k: &Knobs, jobs: &[Job], seed: u64) -> Setup {
    let m = Machine {
        limit_pages: k.limit_pages,
        swap_pages: k.swap_pages,
        cpus: k.cpus,
        page_cluster: 2,
        plugging: true,
        lru: if k.mglru { LruModel::Mglru } else { LruModel::Classic },
        memcg_version: k.memcg_version,
    };
    let dev = TestDevice { ns: 40_000, synchronous: k.synchronous, depth: 2 };
    let mut s = setup(&m, vec![Box::new(dev)], Box::new(AlignedWindow), Vec::new(), seed);
    let mut config = s.config.get().clone();
    config.cpu.exec_ns = 200_000;
    config.cpu.exec_faults = 3;
    s.config = config.validate().expect("test config is valid");
    for (j, job) in jobs.iter().enumerate() {
        for (k_thread, stream) in job.threads.iter().enumerate() {
            let accesses = if k_thread == 0 {
                first_touch_writes(stream)
            } else {
                stream
                    .iter()
                    .map(|&(page, write)| Access { vpage: VirtPage(page), write, think_ns: None })
                    .collect()
            };
            let mut spec = TaskSpec::new(
                format!("job{j}.{k_thread}"),
                vec![RegionSpec::new(VirtPage(0), job.pages)],
                Box::new(accesses.into_iter()),
            );
            spec.address_space = Some(j as u64);
            spec.exit_on_end = true;
            spec.exec = job.exec;
            spec.start_delay = SimDuration(job.delay_us * 1000);
            spec.start = match (j as u64).checked_sub(u64::from(k.concurrency) - 1).filter(|&n| n > 0) {
                Some(n) => TaskStart::AfterExits(n as u32),
                None => TaskStart::AtStart,
            };
            s.tasks.push(spec);
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn random_queues_keep_every_invariant_and_free_what_exits(
        k in knobs(),
        jobs in prop::collection::vec(job(), 1..7),
    ) {
        let r = run_checked(queue_setup(&k, &jobs, 3));
        let q = r.jobs.as_ref().expect("tasks that exit make a queue report");
        let n_tasks: usize = jobs.iter().map(|j| j.threads.len()).sum();
        prop_assert_eq!(q.jobs as usize, n_tasks);
        prop_assert_eq!(q.per_job.len(), n_tasks);
        // Every job either ran to its exit or was taken by the OOM killer, whatever the
        // kills: a queue never stalls.
        prop_assert_eq!(q.exited + q.oom_killed, q.jobs, "{:?}", q);
        for job in &q.per_job {
            prop_assert!(job.end_s.is_some(), "{:?}", job);
            if let (Some(start), Some(end)) = (job.start_s, job.end_s) {
                prop_assert!(start <= end, "{:?}", job);
            }
            prop_assert!(job.major_faults <= job.faults, "{:?}", job);
        }
        // A job's start waits for its slot: never more than `concurrency` processes run
        // at once (threads of one job count once).
        let mut spans: Vec<(f64, f64, usize)> = Vec::new();
        let mut t = 0;
        for (j, job) in jobs.iter().enumerate() {
            let starts: Vec<f64> = q.per_job[t..t + job.threads.len()].iter().filter_map(|p| p.start_s).collect();
            let ends: Vec<f64> = q.per_job[t..t + job.threads.len()].iter().filter_map(|p| p.end_s).collect();
            if let (Some(start), Some(end)) = (starts.iter().copied().reduce(f64::min), ends.iter().copied().reduce(f64::max)) {
                spans.push((start, end, j));
            }
            t += job.threads.len();
        }
        for &(start, _, j) in &spans {
            let running = spans.iter().filter(|&&(s, e, i)| i != j && s <= start && e > start).count();
            prop_assert!(running < k.concurrency as usize, "job {j} started with {running} running: {spans:?}");
        }
        // Per-job faults add up to the machine's.
        prop_assert_eq!(q.per_job.iter().map(|j| j.faults).sum::<u64>(), r.vmstat.pgfault);
        prop_assert_eq!(q.per_job.iter().map(|j| j.major_faults).sum::<u64>(), r.vmstat.pgmajfault);
        // Every process exited or was killed, so no page is mapped and no swap entry is
        // left in a page table. What may remain is what the kernel leaves too: a folio
        // under I/O when its process exited cannot be dropped from the swap cache then
        // (`free_swap_and_cache` skips a locked or writeback folio); it stays there,
        // charged and holding its slot, until reclaim frees it.
        let g = &r.at_end;
        prop_assert_eq!((g.rss_pages, g.swap_pages, g.nr_writeback), (0, 0, 0), "{:?}", g);
        prop_assert_eq!(g.memcg_usage_pages, g.nr_swapcached, "{:?}", g);
        prop_assert_eq!(g.swap_slots_used, g.nr_swapcached, "{:?}", g);
    }

    #[test]
    fn a_random_queue_gives_the_same_report_twice(
        k in knobs(),
        jobs in prop::collection::vec(job(), 1..5),
        seed in 0u64..1000,
    ) {
        let a = run(queue_setup(&k, &jobs, seed)).expect("runs");
        let b = run(queue_setup(&k, &jobs, seed)).expect("runs");
        prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}
