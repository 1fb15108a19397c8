//! MGLRU's documented behaviours on tiny machines, with invariants checked after every
//! event.

use super::tests::{check, config, run_to_end};
use super::*;
use crate::config::{ByteSize, CoreConfig, LruModel};
use crate::ids::{Pfn, VirtPage};
use crate::lru::mglru::MgLru;
use crate::lru::{Placement, ScanControl};
use crate::mm::frames::flag;
use crate::mm::pagetable::{PageId, PteState};
use crate::mm::vmscan::Reclaimer;
use crate::policy::readahead::NoReadahead;

fn mglru(limit_pages: u64, swap_pages: u64) -> CoreConfig {
    let mut cfg = config(limit_pages, swap_pages);
    cfg.lru = LruModel::Mglru;
    cfg
}

/// Writes pages `0..n` once.
fn fill(n: u64) -> Vec<(u64, bool)> {
    (0..n).map(|p| (p, true)).collect()
}

/// A run in which one task wrote pages `0..n` without reclaim, and a fresh MGLRU that
/// holds every folio, each added as a write fault adds it. The run's own LRU is left
/// empty; checks go through the returned one.
fn resident(n: u64) -> (Simulation, MgLru, Vec<PageId>, Vec<Pfn>) {
    let cfg = mglru(4 * n + 1024, 4096);
    let mut sim = run_to_end(cfg.clone(), Box::new(NoReadahead), n, fill(n));
    let mut lru = MgLru::new(&cfg.lru_gen);
    let pages: Vec<PageId> = (0..n)
        .map(|p| sim.world.mm.pt.existing_page(crate::ids::SpaceId(0), 0, VirtPage(p)).expect("written"))
        .collect();
    let pfns: Vec<Pfn> = pages
        .iter()
        .map(|&pg| match sim.world.mm.pt.pte(pg).state() {
            PteState::Present(pfn) => pfn,
            other => panic!("page {pg:?} is {other:?}"),
        })
        .collect();
    for &pfn in &pfns {
        sim.world.lru.remove(&mut sim.world.mm, pfn);
        lru.add(&mut sim.world.mm, pfn, Placement::Inactive, crate::lru::Origin::Fault);
    }
    lru.check_invariants(&sim.world.mm);
    (sim, lru, pages, pfns)
}

fn memcg_scan(sim: &Simulation) -> ScanControl {
    ScanControl {
        reclaimer: Reclaimer::Memcg,
        priority: 12,
        nr_to_reclaim: 32,
        nr_scanned: 0,
        nr_reclaimed: 0,
        swappiness: 60,
        owner: sim.world.tasks[0].owner,
        cpu: crate::ids::CpuId(0),
        force_deactivate: false,
        skipped_deactivate: false,
        wait_writeback: false,
    }
}

fn touch(sim: &mut Simulation, pages: &[PageId]) {
    for &p in pages {
        sim.world.mm.pt.pte_mut(p).touch(false);
    }
}

fn clear_young(sim: &mut Simulation, pages: &[PageId]) {
    for &p in pages {
        sim.world.mm.pt.pte_mut(p).clear_accessed();
    }
}

#[test]
fn a_page_used_between_two_agings_is_promoted() {
    let (mut sim, mut lru, pages, pfns) = resident(256);
    let (_, max) = lru.seqs();
    // A fault places a folio in the second-youngest generation.
    assert!(pfns.iter().all(|&p| lru.folio_seq(&sim.world.mm, p) == Some(max - 1)));
    // The first aging finds every PTE young (just written), but a first detection only
    // marks the folio referenced, and clears the young bits.
    lru.age(&mut sim.world.mm);
    lru.check_invariants(&sim.world.mm);
    assert!(pfns.iter().all(|&p| lru.folio_seq(&sim.world.mm, p) == Some(max - 1)));
    assert!(pfns.iter().all(|&p| sim.world.mm.frames.test(p, flag::REFERENCED)));
    assert!(pages.iter().all(|&p| !sim.world.mm.pt.pte(p).accessed()));
    // Half the pages are used again; the second aging promotes exactly those, to the
    // generation that was youngest when it walked, and marks them as working set.
    touch(&mut sim, &pages[..128]);
    let walked_at = lru.seqs().1;
    lru.age(&mut sim.world.mm);
    lru.check_invariants(&sim.world.mm);
    for (i, &p) in pfns.iter().enumerate() {
        let (seq, ws) = (lru.folio_seq(&sim.world.mm, p), sim.world.mm.frames.test(p, flag::WORKINGSET));
        if i < 128 {
            assert_eq!((seq, ws), (Some(walked_at), true), "used page {i}");
        } else {
            assert_eq!((seq, ws), (Some(max - 1), false), "unused page {i}");
        }
    }
}

#[test]
fn a_one_pass_scan_does_not_flood_the_young_generations() {
    // 128 hot pages used between agings and 128 pages of a scan touched once (when
    // written): after two agings the scan is still in the oldest generation, and the
    // first eviction pass takes only scan pages.
    let (mut sim, mut lru, pages, pfns) = resident(256);
    lru.age(&mut sim.world.mm);
    touch(&mut sim, &pages[..128]);
    lru.age(&mut sim.world.mm);
    let (min, _) = lru.seqs();
    assert!(
        pfns[128..].iter().all(|&p| lru.folio_seq(&sim.world.mm, p) == Some(min)),
        "the scan stays oldest"
    );
    assert!(
        pfns[..128].iter().all(|&p| lru.folio_seq(&sim.world.mm, p) > Some(min + 1)),
        "the hot set is young"
    );
    let mut sc = memcg_scan(&sim);
    let owner = sc.owner;
    sim.world.mm.start_plug(owner);
    let scanned = lru.evict(&mut sim.world.mm, &mut sc);
    sim.world.mm.finish_plug(owner);
    lru.check_invariants(&sim.world.mm);
    assert!(scanned >= 64, "{scanned}");
    let written: Vec<usize> =
        (0..256).filter(|&i| sim.world.mm.frames.swap_slot(pfns[i]).is_some()).collect();
    assert_eq!(written.len(), 64, "one batch of MIN_LRU_BATCH pages went to swap");
    assert!(written.iter().all(|&i| i >= 128), "only scan pages: {written:?}");
    assert_eq!(sim.world.mm.vmstat.pgactivate, 0);
}

#[test]
fn the_working_set_tier_is_protected_only_when_the_controller_says_so() {
    for protect in [false, true] {
        let (mut sim, mut lru, pages, pfns) = resident(128);
        // Half the folios are working set; no PTE is young, so two agings leave every
        // folio in the oldest generation.
        for &p in &pfns[..64] {
            sim.world.mm.frames.set(p, flag::WORKINGSET);
        }
        clear_young(&mut sim, &pages);
        lru.age(&mut sim.world.mm);
        lru.age(&mut sim.world.mm);
        let (min, _) = lru.seqs();
        assert!(pfns.iter().all(|&p| lru.folio_seq(&sim.world.mm, p) == Some(min)));
        // Tier 0 refaults at 10 %; the working-set tier at 50 % (protect) or 10 %.
        let top = if protect { (500, 1_000) } else { (100, 1_000) };
        lru.set_feedback((1_000, 10_000), top);
        let mut sc = memcg_scan(&sim);
        let owner = sc.owner;
        sim.world.mm.start_plug(owner);
        lru.evict(&mut sim.world.mm, &mut sc);
        sim.world.mm.finish_plug(owner);
        lru.check_invariants(&sim.world.mm);
        let ws_written = pfns[..64].iter().filter(|&&p| sim.world.mm.frames.swap_slot(p).is_some()).count();
        let other_written =
            pfns[64..].iter().filter(|&&p| sim.world.mm.frames.swap_slot(p).is_some()).count();
        if protect {
            assert_eq!(ws_written, 0, "the working set was protected");
            assert!(pfns[..64].iter().all(|&p| lru.folio_seq(&sim.world.mm, p) == Some(min + 1)));
            assert_eq!(other_written, 64);
        } else {
            assert_eq!(ws_written + other_written, 64, "one batch, in list order");
            assert!(ws_written > 0, "working-set folios were evicted like the rest");
        }
    }
}

#[test]
fn a_young_folio_is_kept_once_then_activated_at_eviction() {
    // Every folio in the oldest generation and young when eviction reaches it. Those
    // already seen young once (PG_referenced, from an aging walk) are activated as
    // working set into the youngest generation; the others are marked referenced and
    // kept, put back out of the oldest generation. None is reclaimed.
    let (mut sim, mut lru, pages, pfns) = resident(64);
    clear_young(&mut sim, &pages);
    lru.age(&mut sim.world.mm);
    lru.age(&mut sim.world.mm);
    let (min, _) = lru.seqs();
    assert!(pfns.iter().all(|&p| lru.folio_seq(&sim.world.mm, p) == Some(min)));
    for &p in &pfns[32..] {
        sim.world.mm.frames.clear(p, flag::REFERENCED);
    }
    for &p in &pfns[..32] {
        sim.world.mm.frames.set(p, flag::REFERENCED);
    }
    touch(&mut sim, &pages);
    let mut sc = memcg_scan(&sim);
    lru.evict(&mut sim.world.mm, &mut sc);
    lru.check_invariants(&sim.world.mm);
    let (min_now, max) = lru.seqs();
    assert_eq!(sim.world.mm.vmstat.pswpout, 0, "nothing was reclaimed");
    assert_eq!(sim.world.mm.vmstat.pgactivate, 32);
    for (i, &p) in pfns.iter().enumerate() {
        let seq = lru.folio_seq(&sim.world.mm, p).expect("on a list");
        let ws = sim.world.mm.frames.test(p, flag::WORKINGSET);
        if i < 32 {
            assert_eq!((seq, ws), (max, true), "folio {i} activated");
        } else {
            assert!(!ws && seq < max && seq > min, "folio {i} kept: seq {seq}, min {min_now}, max {max}");
        }
    }
}

#[test]
fn a_stream_with_a_hot_set_swaps_and_stays_consistent() {
    // End to end under a 1,024-page limit: aging promotes the hot set, the stream is
    // evicted, refaults are counted, and the histogram adds up to the pages on the lists.
    let hot = 256;
    let mut acc = fill(hot);
    let mut next = hot;
    for _ in 0..200 {
        acc.extend((next..next + 32).map(|p| (p, true)));
        next += 32;
        acc.extend((0..hot).map(|p| (p, false)));
    }
    let r = check(mglru(1024, 16384), Box::new(NoReadahead), next, acc);
    let gens = r.lru_gen.as_ref().expect("an MGLRU run reports its generations");
    assert!(gens.aging.runs > 3 && gens.aging.promoted >= hot, "{gens:?}");
    assert!(r.vmstat.pswpout >= next - 1024 - hot, "the stream was evicted: {:?}", r.vmstat);
    assert!(r.vmstat.pswpin < r.vmstat.pswpout / 10, "mostly the stream: {:?}", r.vmstat);
    assert_eq!(r.vmstat.workingset_refault_anon, r.vmstat.pswpin);
    let listed: u64 = gens.generations.iter().map(|g| g.anon_pages).sum();
    assert_eq!(listed, r.at_end.nr_active_anon + r.at_end.nr_inactive_anon);
    assert!((2..=4).contains(&gens.generations.len()));
}

#[test]
fn tiers_are_protected_only_when_the_working_set_refaults_more() {
    // A cyclic pass over twice the limit refaults everything alike: no tier refaults
    // more than tier 0, so the controller never protects one.
    let acc: Vec<_> =
        fill(256).into_iter().chain((0..4).flat_map(|_| (0..256).map(|p| (p, false)))).collect();
    let r = check(mglru(128, 4096), Box::new(NoReadahead), 256, acc);
    let gens = r.lru_gen.as_ref().unwrap();
    assert!(r.vmstat.workingset_refault_anon > 500, "{:?}", r.vmstat);
    assert_eq!(gens.protected_tier_above, 3, "nothing is protected: {gens:?}");
}

#[test]
fn min_ttl_kills_rather_than_thrash() {
    // Global memory pressure (no cgroup limit, 4 MiB of RAM) and a cyclic workload over
    // one and a half times the memory: without min_ttl kswapd and direct reclaim thrash;
    // with a minute of min_ttl, kswapd finds every generation younger than that and calls
    // the OOM killer.
    let pages = 1536;
    let acc: Vec<_> =
        fill(pages).into_iter().chain((0..3).flat_map(|_| (0..pages).map(|p| (p, false)))).collect();
    let run = |min_ttl_ms: u64| {
        let mut cfg = mglru(0, 8192);
        cfg.memcg.limit = None;
        cfg.machine.memory = ByteSize::mib(4);
        cfg.lru_gen.min_ttl_ms = min_ttl_ms;
        check(cfg, Box::new(NoReadahead), pages, acc.clone())
    };
    let thrash = run(0);
    assert_eq!(thrash.outcome, Outcome::Completed);
    assert!(thrash.vmstat.pswpin > pages, "{:?}", thrash.vmstat);
    assert!(thrash.vmstat.pgscan_kswapd > 0, "kswapd reclaimed: {:?}", thrash.vmstat);
    let killed = run(60_000);
    assert!(matches!(killed.outcome, Outcome::OomKilled { .. }), "{:?}", killed.outcome);
    assert_eq!(killed.vmstat.oom_kill, 1);
    assert!(killed.vmstat.pswpin < thrash.vmstat.pswpin / 4, "{:?}", killed.vmstat);
}

#[test]
fn mglru_needs_its_main_switch() {
    let mut cfg = mglru(64, 256);
    cfg.lru_gen.enabled = 0x0006;
    let err = cfg.validate().unwrap_err().to_string();
    assert!(err.starts_with("lru_gen.enabled: 0x0006 turns MGLRU off"), "{err}");
    let mut cfg = mglru(64, 256);
    cfg.lru_gen.enabled = 0x0017;
    assert!(cfg.validate().unwrap_err().to_string().contains("bits outside 0x0007"));
}

#[test]
fn without_page_table_walks_look_around_finds_the_young_pages() {
    // Capability 0x0002 off: aging only opens generations; the hot set is still kept,
    // by eviction's rmap walk and its look-around.
    let hot = 64;
    let mut acc = fill(hot);
    let mut next = hot;
    for _ in 0..80 {
        acc.extend((next..next + 16).map(|p| (p, true)));
        next += 16;
        acc.extend((0..hot).map(|p| (p, false)));
    }
    let mut cfg = mglru(192, 4096);
    cfg.lru_gen.enabled = 0x0005;
    let r = check(cfg, Box::new(NoReadahead), next, acc);
    let gens = r.lru_gen.as_ref().unwrap();
    assert_eq!(gens.aging.ptes_walked, 0, "{gens:?}");
    assert!(gens.aging.look_arounds > 0, "{gens:?}");
    assert!(r.vmstat.pswpout > 500, "{:?}", r.vmstat);
}

/// Answers nothing: a folio under writeback leaves `shrink_folio_list` before its
/// references are checked.
struct NoReferenceCheck;

impl crate::mm::vmscan::ReclaimHooks for NoReferenceCheck {
    fn folio_check_references(
        &mut self,
        _mm: &mut crate::mm::Mm,
        _pfn: Pfn,
    ) -> crate::mm::vmscan::FolioReferences {
        unreachable!("a folio under writeback is not checked for references")
    }
    fn eviction_shadow(&mut self, _mm: &mut crate::mm::Mm, _pfn: Pfn) -> crate::mm::swap::Shadow {
        unreachable!("a folio under writeback is not evicted")
    }
}

/// `shrink_folio_list` on a folio under writeback: cgroup v1 limit reclaim waits for a write
/// it started itself (the folio marked for reclaim, case 3); a folio not yet marked is marked
/// and activated (case 2), and so is every such folio under cgroup v2, whose writeback
/// throttling is sane.
#[test]
fn a_folio_under_writeback_makes_v1_limit_reclaim_wait_and_is_activated_otherwise() {
    use crate::mm::vmscan::Fate;
    for (version, marked, waits) in [(1, true, true), (1, false, false), (2, true, false), (2, false, false)]
    {
        let (mut sim, _lru, _pages, pfns) = resident(4);
        let pfn = pfns[0];
        sim.world.mm.cfg.memcg.version = version;
        sim.world.mm.frames.set(pfn, flag::WRITEBACK);
        if marked {
            sim.world.mm.frames.set(pfn, flag::RECLAIM);
        }
        let mut sc = memcg_scan(&sim);
        let (mut batch, mut fates) = (vec![pfn], Vec::new());
        let res = sim.world.mm.shrink_folio_list(&mut batch, &mut sc, &mut NoReferenceCheck, &mut fates);
        let case = format!("cgroup v{version}, marked {marked}");
        assert_eq!(sc.wait_writeback, waits, "{case}: the scan control carries the wait to the charge");
        assert_eq!(fates, [if waits { Fate::Keep } else { Fate::Activate }], "{case}");
        assert!(sim.world.mm.frames.test(pfn, flag::RECLAIM), "{case}: the folio ends marked");
        assert_eq!(res.reclaimed, 0, "{case}");
    }
}

/// `folio_rotate_reclaimable` once a marked folio's write ends (`lru_move_tail`) under the
/// classic LRU: the folio leaves whichever list holds it, loses `PG_active` and goes to the
/// inactive tail, so a folio activated while its write was in flight (case 2 above, or a
/// zswap writeback folio activated by its refault) is freed as soon as any other. A dirty
/// folio stays where it is.
#[test]
fn a_written_folio_marked_for_reclaim_goes_to_the_inactive_tail_even_when_active() {
    let mut sim = run_to_end(config(64, 256), Box::new(NoReadahead), 8, fill(8));
    let pfns: Vec<Pfn> = (0..2)
        .map(|p| {
            let page =
                sim.world.mm.pt.existing_page(crate::ids::SpaceId(0), 0, VirtPage(p)).expect("written");
            match sim.world.mm.pt.pte(page).state() {
                PteState::Present(pfn) => pfn,
                other => panic!("page {p} is {other:?}"),
            }
        })
        .collect();
    let w = &mut sim.world;
    for &pfn in &pfns {
        w.lru.remove(&mut w.mm, pfn);
        w.lru.add(&mut w.mm, pfn, Placement::Active, crate::lru::Origin::Fault);
    }
    w.mm.frames.set(pfns[1], flag::DIRTY);
    let before = (w.lru.sizes(), w.mm.vmstat.pgrotated);
    for &pfn in &pfns {
        w.lru.rotate_reclaimable(&mut w.mm, pfn);
    }
    let after = w.lru.sizes();
    assert!(!w.mm.frames.test(pfns[0], flag::ACTIVE), "the clean folio is deactivated");
    assert!(w.mm.frames.test(pfns[1], flag::ACTIVE), "the dirty folio is left alone");
    assert_eq!(after.active_anon, before.0.active_anon - 1);
    assert_eq!(after.inactive_anon, before.0.inactive_anon + 1);
    assert_eq!(w.mm.vmstat.pgrotated, before.1 + 1);
    w.lru.check_invariants(&w.mm);
}
