//! Belady's OPT (`lru = "opt"`) on tiny machines, with invariants checked after every
//! event: what the policy remembers of pages read ahead, and the heap's lazy deletion.

use super::tests::{config, one_task, Aligned8};
use super::*;
use crate::config::{ByteSize, CoreConfig, LruModel};
use crate::error::TraceError;
use crate::ids::VirtPage;
use crate::mm::frames::flag;
use crate::mm::pagetable::PteState;
use crate::workload::{Access, AccessSource};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A trace with each access's next use, counting the accesses handed out in `fetched`
/// (the engine reads ahead: see `Simulation::next_access`).
struct Oracle {
    accesses: Vec<(u64, bool)>,
    next: Vec<Option<u64>>,
    fetched: Arc<AtomicUsize>,
}

impl AccessSource for Oracle {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let at = self.fetched.load(Ordering::Relaxed);
        let Some(&(page, write)) = self.accesses.get(at) else { return Ok(None) };
        self.fetched.store(at + 1, Ordering::Relaxed);
        Ok(Some(Access { vpage: VirtPage(page), write, think_ns: None }))
    }
    fn knows_next_uses(&self) -> bool {
        true
    }
    fn next_use(&self) -> Option<u64> {
        self.fetched.load(Ordering::Relaxed).checked_sub(1).and_then(|at| self.next[at])
    }
}

/// For each access, the index of the next access to its page.
fn next_uses(accesses: &[(u64, bool)]) -> Vec<Option<u64>> {
    let mut later = std::collections::BTreeMap::new();
    let mut next = vec![None; accesses.len()];
    for (i, &(page, _)) in accesses.iter().enumerate().rev() {
        next[i] = later.insert(page, i as u64);
    }
    next
}

fn opt_config(limit_pages: u64, swap_pages: u64) -> CoreConfig {
    let mut cfg = config(limit_pages, swap_pages);
    cfg.lru = LruModel::Opt;
    // A reference cache of `limit_pages`: OPT charges no page table.
    cfg.memcg.limit = Some(ByteSize(limit_pages * crate::ids::PAGE_SIZE));
    cfg
}

/// One task over `pages` pages replaying `accesses`; returns the simulation, not run yet,
/// and the counter of accesses handed out.
fn opt_sim(
    cfg: CoreConfig,
    readahead: Box<dyn crate::policy::readahead::Readahead>,
    pages: u64,
    accesses: Vec<(u64, bool)>,
) -> (Simulation, Arc<AtomicUsize>) {
    let fetched = Arc::new(AtomicUsize::new(0));
    let next = next_uses(&accesses);
    let oracle = Oracle { accesses, next, fetched: Arc::clone(&fetched) };
    (one_task(cfg, readahead, pages, Box::new(oracle)), fetched)
}

/// A deterministic scramble of `n` accesses over `pages` pages, every first touch a
/// write.
fn scrambled(n: u64, pages: u64) -> Vec<(u64, bool)> {
    let mut seen = std::collections::BTreeSet::new();
    (0..n)
        .map(|i| {
            let page = (i * i * 7 + i * 13 + (i / 5) * 3) % pages;
            (page, seen.insert(page) || i % 6 == 0)
        })
        .collect()
}

#[test]
fn a_page_read_ahead_keeps_the_next_use_of_its_last_access() {
    let accesses = scrambled(600, 48);
    let (mut sim, fetched) = opt_sim(opt_config(16, 256), Box::new(Aligned8), 64, accesses.clone());
    let mut n_checked = 0;
    while sim.step().expect("no trace errors") {
        sim.check_invariants();
        // Accesses the engine took, less those it read ahead and has not simulated yet.
        let read_ahead = sim.streams[0].ahead.pending();
        let fetched = fetched.load(Ordering::Relaxed) - read_ahead;
        let opt = sim.world.lru.as_opt().expect("the run's LRU is OPT");
        for page in 0..48 {
            let Some(id) = sim.world.mm.pt.existing_page(crate::ids::SpaceId(0), 0, VirtPage(page)) else {
                continue;
            };
            let PteState::Swap(slot) = sim.world.mm.pt.pte(id).state() else { continue };
            let Some(pfn) = sim.world.mm.swap.cached_frame(slot) else { continue };
            if !sim.world.mm.frames.test(pfn, flag::READAHEAD) {
                continue;
            }
            // Not accessed since it was read: its next use is the first access to it
            // not handed out yet.
            let expected =
                accesses[fetched..].iter().position(|&(p, _)| p == page).map(|i| (fetched + i) as u64);
            assert_eq!(
                opt.frame_next_use(pfn),
                expected,
                "page {page} in frame {} after {fetched} accesses",
                pfn.0
            );
            n_checked += 1;
        }
    }
    assert!(n_checked > 100, "readahead brought pages in: {n_checked} checks");
    assert!(sim.into_report().vmstat.swap_ra_hit > 0);
}

#[test]
fn hits_leave_stale_heap_entries_that_a_rebuild_drops() {
    // Sixteen pages, all resident, hit 5,000 times: one heap entry per hit, dropped by
    // rebuilds once stale ones outnumber the folios by the slack.
    let mut accesses: Vec<(u64, bool)> = (0..16).map(|p| (p, true)).collect();
    accesses.extend((0..5_000u64).map(|i| ((i * 7) % 16, false)));
    let (mut sim, _) =
        opt_sim(opt_config(64, 256), Box::new(crate::policy::readahead::NoReadahead), 16, accesses);
    let mut longest = 0;
    while sim.step().expect("no trace errors") {
        sim.check_invariants();
        longest = longest.max(sim.world.lru.as_opt().expect("OPT").heap_len());
    }
    // 5,016 entries were pushed; without rebuilds the heap would hold them all.
    assert!(longest <= 2 * 16 + 1024 + 1, "heap peaked at {longest}");
    assert_eq!(sim.into_report().vmstat.pgfault, 16);
}

#[test]
fn the_victim_is_the_resident_page_used_furthest_ahead() {
    // Pages 0..16 fill the cgroup, then page 16 comes in: page 3's next use is the latest
    // (every other page is used before it), so page 3 is the one written out.
    let mut accesses: Vec<(u64, bool)> = (0..16).map(|p| (p, true)).collect();
    accesses.push((16, true));
    accesses.extend((0..16).filter(|&p| p != 3).map(|p| (p, false)));
    accesses.push((3, false));
    let (mut sim, fetched) =
        opt_sim(opt_config(16, 256), Box::new(crate::policy::readahead::NoReadahead), 32, accesses);
    while fetched.load(Ordering::Relaxed) < 17 || sim.world.mm.vmstat.pswpout == 0 {
        assert!(sim.step().expect("no trace errors"), "the run ended before page 16 came in");
        sim.check_invariants();
    }
    let swapped: Vec<u64> = (0..16)
        .filter(|&p| {
            let id = sim.world.mm.pt.existing_page(crate::ids::SpaceId(0), 0, VirtPage(p)).expect("written");
            matches!(sim.world.mm.pt.pte(id).state(), PteState::Swap(_))
        })
        .collect();
    assert_eq!(swapped, [3]);
}
