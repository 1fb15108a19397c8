//! Large folios under random workloads and knobs: every invariant holds after every
//! event (folios contiguous and aligned in the page table, the frame table and swap),
//! counters agree with each other, and runs are deterministic.

use crate::support::*;
use proptest::prelude::*;
use swapsim_core::config::{LruModel, SwapBacking};
use swapsim_core::thp::{OrderMask, ThpEnabled, ThpHint, ThpSizeEnabled};
use swapsim_core::*;

/// Swap in every candidate order, or none.
#[derive(Clone, Debug)]
struct Large(bool);

impl SwapinSize for Large {
    fn name(&self) -> &'static str {
        "test"
    }
    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        if self.0 {
            view.candidates
        } else {
            0
        }
    }
}

#[derive(Clone, Debug)]
struct Knobs {
    sizes: Vec<(u8, ThpSizeEnabled)>,
    enabled: ThpEnabled,
    hint: ThpHint,
    synchronous: bool,
    block: bool,
    large_swapin: bool,
    ever_enabled: bool,
    lru: LruModel,
}

fn knobs() -> impl Strategy<Value = Knobs> {
    let setting = prop_oneof![
        Just(ThpSizeEnabled::Always),
        Just(ThpSizeEnabled::Inherit),
        Just(ThpSizeEnabled::Madvise),
        Just(ThpSizeEnabled::Never)
    ];
    let enabled = prop_oneof![Just(ThpEnabled::Always), Just(ThpEnabled::Madvise), Just(ThpEnabled::Never)];
    let hint = prop_oneof![Just(ThpHint::Default), Just(ThpHint::Hugepage), Just(ThpHint::Nohugepage)];
    (
        prop::collection::vec((2u8..=6, setting), 0..4),
        enabled,
        hint,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.2),
        prop_oneof![Just(LruModel::Classic), Just(LruModel::Mglru), Just(LruModel::Opt)],
    )
        .prop_map(|(sizes, enabled, hint, synchronous, block, large_swapin, ever_enabled, lru)| Knobs {
            sizes,
            enabled,
            hint,
            synchronous,
            block,
            large_swapin,
            ever_enabled,
            lru,
        })
}

fn run(
    k: &Knobs,
    limit_pages: u64,
    swap_pages: u64,
    pages: u64,
    acc: &[(u64, bool)],
    seed: u64,
) -> SimReport {
    let mut cfg = CoreConfig::default();
    cfg.machine.memory = ByteSize::mib(64);
    cfg.memcg.limit = Some(ByteSize(limit_pages * 4096));
    cfg.devices.push(SwapDeviceSpec {
        name: "swap0".into(),
        size: ByteSize(swap_pages * 4096),
        priority: None,
        backing: Some(if k.block { SwapBacking::Block } else { SwapBacking::File }),
    });
    cfg.thp.enabled = k.enabled;
    for &(order, s) in &k.sizes {
        cfg.thp.hugepages.insert(thp::size_name(order), s);
    }
    cfg.zswap.ever_enabled = k.ever_enabled;
    cfg.lru = k.lru;
    let dev = TestDevice { ns: 15_000, synchronous: k.synchronous, depth: 4 };
    let setup = Setup {
        config: cfg.validate().expect("test config is valid"),
        seed,
        devices: vec![Box::new(dev)],
        policies: Policies::default()
            .with_readahead(Box::new(AlignedWindow))
            .with_swapin(Box::new(Large(k.large_swapin))),
        tasks: vec![TaskSpec::new(
            "t",
            vec![RegionSpec { thp: k.hint, ..RegionSpec::new(VirtPage(0), pages) }],
            // Next uses attached for OPT; the other LRUs never ask for them.
            Box::new(oracle(first_touch_writes(acc))),
        )],
        timeline: Vec::new(),
    };
    run_checked(setup)
}

fn accesses(pages: u64) -> impl Strategy<Value = Vec<(u64, bool)>> {
    let runs = prop::collection::vec((0..pages, 1u64..24, prop::bool::weighted(0.3)), 1..60);
    runs.prop_map(move |runs| {
        runs.into_iter()
            .flat_map(|(start, len, w)| (start..(start + len).min(pages)).map(move |p| (p, w)))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_with_large_folios(
        k in knobs(),
        acc in accesses(300),
        limit_pages in 40u64..120,
        swap_pages in 200u64..1200,
    ) {
        let r = run(&k, limit_pages, swap_pages, 300, &acc, 5);
        let v = &r.vmstat;
        // Every swap-in is a major fault, a readahead page, or one of the extra pages of
        // a large swap-in.
        let extra: u64 = r.mthp.iter().map(|(size, s)| {
            let nr = size.trim_end_matches("kB").parse::<u64>().unwrap() / 4;
            s.swpin * (nr - 1)
        }).sum();
        prop_assert_eq!(v.pswpin, v.pgmajfault + v.swap_ra + extra);
        prop_assert_eq!(v.workingset_refault_anon, v.pswpin);
        // A bio covers a page, or a whole large folio on a synchronous device.
        prop_assert_eq!(r.block[0].writes.queued_kib, 4 * v.pswpout);
        prop_assert_eq!(r.block[0].reads.queued_kib, 4 * v.pswpin);
        prop_assert!(r.block[0].writes.queued <= v.pswpout);
        for (size, s) in &r.mthp {
            prop_assert!(s.anon_fault_fallback_charge <= s.anon_fault_fallback, "{}: {:?}", size, s);
            prop_assert!(s.swpin_fallback_charge <= s.swpin_fallback, "{}: {:?}", size, s);
            if !k.block {
                prop_assert_eq!(s.swpout, 0, "{}: a swap file holds no large entry", size);
            }
            if !k.synchronous || k.ever_enabled || !k.large_swapin {
                prop_assert_eq!(s.swpin, 0, "{}: no large swap-in here", size);
            }
        }
        if k.hint == ThpHint::Nohugepage {
            prop_assert!(r.mthp.is_empty(), "MADV_NOHUGEPAGE allocates no large folio");
        }
    }

    #[test]
    fn large_folio_runs_are_deterministic(k in knobs(), acc in accesses(200), seed in 0u64..4) {
        let a = run(&k, 48, 800, 200, &acc, seed);
        let b = run(&k, 48, 800, 200, &acc, seed);
        prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}
