//! zswap under random workloads and knobs: every invariant holds after every event (each
//! page in exactly one of memory, zswap, the swap device or flight; the pool's objects and
//! bytes match its entries; zsmalloc's zspages add up to the pool's footprint), and the
//! counters agree with each other.

use crate::support::*;
use proptest::prelude::*;
use swapsim_core::config::LruModel;
use swapsim_core::contents::{Contents, SizeTable};
use swapsim_core::thp::ThpSizeEnabled;
use swapsim_core::zswap::Incompressible;
use swapsim_core::*;

/// A referenced bit per entry, set at store; a visit clears it and rotates the entry, the
/// next writes it back. Disk swap-ins are held back from the next count, as 6.12 does.
#[derive(Clone, Debug, Default)]
struct Referenced {
    disk_swapins: u64,
}

impl ZswapProtection for Referenced {
    fn name(&self) -> &'static str {
        "referenced"
    }
    fn stored(&mut self, _lru_size: u64) -> bool {
        true
    }
    fn swapin(&mut self, swapin: ZswapSwapin) {
        self.disk_swapins += u64::from(swapin.from_disk);
    }
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        let held = self.disk_swapins.min(lru.lru_size);
        self.disk_swapins -= held;
        lru.scale(lru.lru_size - held)
    }
    fn visit(&mut self, referenced: &mut bool) -> ZswapVisit {
        if std::mem::take(referenced) {
            ZswapVisit::Rotate
        } else {
            ZswapVisit::Writeback
        }
    }
}

#[derive(Clone, Debug)]
struct Knobs {
    limit_pages: u64,
    max_pool_percent: u32,
    accept_threshold_percent: u32,
    /// Of the two regions, pages 0..150 and 150..300.
    contents: [Contents; 2],
    shrinker_enabled: bool,
    memcg_version: u8,
    /// cgroup v2 only: `memory.zswap.max` in pages and `memory.zswap.writeback`.
    zswap_max_pages: Option<u64>,
    zswap_writeback: bool,
    referenced: bool,
    reject: bool,
    synchronous: bool,
    page_cluster: u32,
    large_folios: bool,
    lru: LruModel,
}

fn contents() -> impl Strategy<Value = Contents> {
    let sizes =
        prop::collection::vec((1u32..=4096, 1u32..4), 1..4).prop_map(|v| Contents::Sizes(SizeTable::new(v)));
    prop_oneof![
        Just(Contents::Random),
        Just(Contents::Half),
        Just(Contents::Text),
        Just(Contents::Zero),
        sizes
    ]
}

fn knobs() -> impl Strategy<Value = Knobs> {
    (
        (24u64..128, 0u32..=30, 0u32..=100, [contents(), contents()], any::<bool>(), 1u8..3),
        (prop::option::weighted(0.2, 4u64..64), prop::bool::weighted(0.8), any::<bool>(), any::<bool>()),
        (
            any::<bool>(),
            0u32..4,
            prop::bool::weighted(0.3),
            prop_oneof![Just(LruModel::Classic), Just(LruModel::Mglru), Just(LruModel::Opt)],
        ),
    )
        .prop_map(|(a, b, c)| {
            let (
                limit_pages,
                max_pool_percent,
                accept_threshold_percent,
                contents,
                shrinker_enabled,
                memcg_version,
            ) = a;
            let (zswap_max_pages, zswap_writeback, referenced, reject) = b;
            let (synchronous, page_cluster, large_folios, lru) = c;
            let v2 = memcg_version == 2;
            Knobs {
                limit_pages,
                max_pool_percent,
                accept_threshold_percent,
                contents,
                shrinker_enabled,
                memcg_version,
                zswap_max_pages: zswap_max_pages.filter(|_| v2),
                zswap_writeback: zswap_writeback || !v2,
                referenced,
                reject,
                synchronous,
                page_cluster,
                large_folios,
                lru,
            }
        })
}

/// Runs of accesses over `pages` pages, reads or writes, first touches made writes.
fn accesses(pages: u64) -> impl Strategy<Value = Vec<(u64, bool)>> {
    let runs = prop::collection::vec((0..pages, 1u64..32, prop::bool::weighted(0.3)), 1..40);
    runs.prop_map(move |runs| {
        runs.into_iter()
            .flat_map(|(start, len, w)| (start..(start + len).min(pages)).map(move |p| (p, w)))
            .collect()
    })
}

/// Machine RAM: 8 MiB, so that 1 % of it (20 pages of pool) is a limit the workload meets.
const RAM_PAGES: u64 = 2048;

fn run(k: &Knobs, acc: &[(u64, bool)]) -> SimReport {
    run_checked(setup(k, &[acc]))
}

/// One task per access stream, each on its own address space with the two regions.
fn setup(k: &Knobs, streams: &[&[(u64, bool)]]) -> Setup {
    let mut cfg = CoreConfig::default();
    cfg.machine.memory = ByteSize(RAM_PAGES * 4096);
    cfg.memcg.limit = Some(ByteSize(k.limit_pages * 4096));
    cfg.memcg.version = k.memcg_version;
    cfg.memcg.zswap_max = k.zswap_max_pages.map(|p| ByteSize(p * 4096));
    cfg.memcg.zswap_writeback = k.zswap_writeback;
    cfg.swap.page_cluster = k.page_cluster;
    cfg.devices.push(SwapDeviceSpec {
        name: "swap0".into(),
        size: ByteSize(1024 * 4096),
        priority: None,
        backing: None,
    });
    if k.large_folios {
        cfg.thp.hugepages.insert("16kB".into(), ThpSizeEnabled::Always);
        cfg.thp.hugepages.insert("64kB".into(), ThpSizeEnabled::Always);
    }
    cfg.zswap.enabled = true;
    cfg.lru = k.lru;
    cfg.zswap.max_pool_percent = k.max_pool_percent;
    cfg.zswap.accept_threshold_percent = k.accept_threshold_percent;
    cfg.zswap.shrinker_enabled = k.shrinker_enabled;
    cfg.zswap.incompressible = if k.reject { Incompressible::Reject } else { Incompressible::Store };
    let protection: Box<dyn ZswapProtection> =
        if k.referenced { Box::new(Referenced::default()) } else { Box::new(NoProtection) };
    let regions = || {
        (0..2)
            .map(|i| RegionSpec {
                contents: k.contents[i].clone(),
                ..RegionSpec::new(VirtPage(150 * i as u64), 150)
            })
            .collect()
    };
    Setup {
        config: cfg.validate().expect("test config is valid"),
        seed: 3,
        devices: vec![Box::new(TestDevice { ns: 15_000, synchronous: k.synchronous, depth: 4 })],
        policies: Policies::default().with_readahead(Box::new(AlignedWindow)).with_zswap(protection),
        tasks: streams
            .iter()
            .enumerate()
            .map(|(i, acc)| {
                // Next uses attached for OPT (each task numbering its own accesses); the
                // other LRUs never ask for them.
                TaskSpec::new(format!("t{i}"), regions(), Box::new(oracle(first_touch_writes(acc))))
            })
            .collect(),
        timeline: Vec::new(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(40), ..ProptestConfig::default() })]

    #[test]
    fn zswap_invariants_hold_for_random_workloads(k in knobs(), acc in accesses(300)) {
        let r = run(&k, &acc);
        let v = &r.vmstat;
        let z = r.zswap.as_ref().expect("zswap is on");
        // Every swap-in (a fault's target or a readahead neighbour) came from one of the zero
        // map, zswap or the device: large swap-in is off once zswap exists.
        prop_assert_eq!(v.pswpin + v.zswpin + v.swpin_zero, v.pgmajfault + v.swap_ra, "{:?}", v);
        prop_assert_eq!(r.block[0].reads.queued_kib, 4 * v.pswpin);
        prop_assert_eq!(r.block[0].writes.queued_kib, 4 * v.pswpout);
        prop_assert_eq!(v.zswpwb, z.written_back_pages);
        prop_assert!(v.pswpout >= v.zswpwb);
        // Every entry stored is still there, was loaded or was written back; only an OOM
        // kill frees entries otherwise (with their slots).
        if r.outcome == Outcome::Completed {
            prop_assert_eq!(z.stored_pages + v.zswpin + v.zswpwb, v.zswpout, "{:?} {:?}", v, z);
        } else {
            prop_assert!(z.stored_pages + v.zswpin + v.zswpwb <= v.zswpout, "{:?} {:?}", v, z);
        }
        prop_assert!(z.stored_incompressible_pages <= z.stored_pages);
        prop_assert!(z.memcg_zswap_bytes <= z.stored_pages * 4096);
        if k.contents.iter().all(Contents::is_zero) {
            prop_assert_eq!(v.zswpout, 0, "zero pages never reach zswap");
        }
        if k.reject || !k.zswap_writeback {
            prop_assert_eq!(z.stored_incompressible_pages, 0);
        }
        if k.max_pool_percent == 0 {
            prop_assert_eq!(v.zswpout, 0, "a pool of 0 pages takes nothing");
        }
        // Writeback needs a full pool (the worker) or the shrinker on cgroup v2, and a group
        // that allows it.
        if v.zswpwb > 0 {
            prop_assert!(k.zswap_writeback);
            prop_assert!(z.pool_limit_hit > 0 || (k.shrinker_enabled && k.memcg_version == 2), "{:?}", z);
        }
        if z.shrink_worker_runs > 0 {
            prop_assert!(z.pool_limit_hit > 0);
        }
        // A store passes the pool's limit by at most one zspage (8 pages at most) per page
        // of the folio it stores.
        let max_pages = RAM_PAGES * u64::from(k.max_pool_percent) / 100;
        let folio = if k.large_folios { 16 } else { 1 };
        prop_assert!(z.pool_total_size / 4096 <= max_pages + 8 * folio, "{:?}", z);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(24), ..ProptestConfig::default() })]

    /// Two tasks, the first exiting when its stream ends (its slots, and so its zswap
    /// entries, are freed), then swapoff with no limit: every entry is loaded or freed.
    #[test]
    fn exits_and_swapoff_leave_zswap_empty(k in knobs(), a in accesses(300), b in accesses(300)) {
        let mut s = setup(&k, &[&a, &b]);
        s.tasks[0].exit_on_end = true;
        s.timeline = vec![
            TimelineOp { trigger: Trigger::WorkloadEnd, op: Operation::SetMemcgLimit(None) },
            TimelineOp { trigger: Trigger::AfterPrevious, op: Operation::Swapoff { device: "swap0".into() } },
        ];
        let r = run_checked(s);
        let v = &r.vmstat;
        let z = r.zswap.as_ref().expect("zswap is on");
        if r.outcome == Outcome::Completed {
            prop_assert_eq!(r.operations[1].result.as_str(), "completed");
            prop_assert_eq!(r.at_end.swap_slots_used, 0);
            prop_assert_eq!((z.stored_pages, z.pool_total_size, z.memcg_zswap_bytes), (0, 0, 0), "{:?}", z);
        }
        prop_assert!(z.stored_pages + v.zswpin + v.zswpwb <= v.zswpout, "{:?} {:?}", v, z);
    }
}

/// The shrunk case that found a swap fault reading its target into the swap cache while
/// the target was already there: a neighbour before it in the readahead window was
/// charged, the charge's reclaim ran zswap's shrinker, and the shrinker wrote the
/// target's entry back to the device, which puts it in the swap cache.
#[test]
fn a_target_written_back_while_its_neighbours_are_charged_is_found_in_the_swap_cache() {
    let k = Knobs {
        limit_pages: 47,
        max_pool_percent: 4,
        accept_threshold_percent: 0,
        contents: [Contents::Sizes(SizeTable::new(vec![(1640, 1)])), Contents::Text],
        shrinker_enabled: true,
        memcg_version: 2,
        zswap_max_pages: None,
        zswap_writeback: true,
        referenced: true,
        reject: false,
        synchronous: false,
        page_cluster: 2,
        large_folios: false,
        lru: LruModel::Classic,
    };
    let runs = [(0, 30), (239, 243), (161, 173), (108, 121), (79, 110), (76, 79), (119, 120)];
    let acc: Vec<(u64, bool)> = runs.iter().flat_map(|&(a, b)| (a..b).map(|p| (p, false))).collect();
    let r = run(&k, &acc);
    assert_eq!(r.outcome, Outcome::Completed);
    assert!(r.vmstat.zswpwb > 0, "{:?}", r.vmstat);
}
