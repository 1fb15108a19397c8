use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use swapsim_core::{ZswapLruView, ZswapProtection, ZswapSwapin, ZswapVisit};

use super::*;

/// Every choice. The match fails to compile when a variant is added, as a reminder to
/// list it here too.
fn every_config() -> [ZswapProtectionConfig; 2] {
    let all = [ZswapProtectionConfig::Decay, ZswapProtectionConfig::SecondChance];
    for c in all {
        match c {
            ZswapProtectionConfig::Decay | ZswapProtectionConfig::SecondChance => {}
        }
    }
    all
}

/// An LRU whose pool takes one page per stored page, so counts are not scaled.
fn unscaled(lru_size: u64) -> ZswapLruView {
    ZswapLruView::new(lru_size, lru_size, lru_size)
}

/// A zswap LRU as the engine keeps it: entries with their referenced bits, oldest first.
#[derive(Debug, Default)]
struct TinyLru {
    entries: VecDeque<(u32, bool)>,
}

impl TinyLru {
    fn store(&mut self, policy: &mut dyn ZswapProtection, id: u32) {
        self.entries.push_back((id, false));
        let referenced = policy.stored(self.entries.len() as u64);
        self.entries.back_mut().unwrap().1 = referenced;
    }

    /// Visits `n` entries from the old end: a rotated entry goes to the young end, a
    /// written-back one leaves the pool. Returns the written-back ids.
    fn walk(&mut self, policy: &mut dyn ZswapProtection, n: usize) -> Vec<u32> {
        let mut written = Vec::new();
        for _ in 0..n {
            let Some((id, mut referenced)) = self.entries.pop_front() else { break };
            match policy.visit(&mut referenced) {
                ZswapVisit::Rotate => self.entries.push_back((id, referenced)),
                ZswapVisit::Writeback => written.push(id),
            }
        }
        written
    }
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Section {
    #[serde(default)]
    protection: ZswapProtectionConfig,
}

#[test]
fn names_round_trip_through_toml_and_build_matches() {
    let names: Vec<&str> = every_config().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["decay", "second-chance"]);
    for cfg in every_config() {
        let text = format!("protection = \"{}\"\n", cfg.name());
        let section: Section = toml::from_str(&text).unwrap();
        assert_eq!(section.protection, cfg);
        assert_eq!(toml::to_string(&section).unwrap(), text);
        assert_eq!(cfg.build().name(), cfg.name());
    }
    let empty: Section = toml::from_str("").unwrap();
    assert_eq!(empty.protection, ZswapProtectionConfig::SecondChance);
}

#[test]
fn toml_rejects_an_unknown_policy_naming_the_variants() {
    for bad in ["lru", "second_chance", "Decay", "none"] {
        let err = toml::from_str::<Section>(&format!("protection = \"{bad}\"")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(&format!("unknown variant `{bad}`")), "{message}");
        for cfg in every_config() {
            assert!(message.contains(&format!("`{}`", cfg.name())), "{message}");
        }
    }
}

#[test]
fn decay_stores_grow_protection_and_halve_it_above_a_quarter_of_the_lru() {
    let mut p = DecayProtection::default();
    // An LRU of 20 entries: a quarter is 5, so the sixth unit of protection halves it.
    let seen: Vec<u64> = (0..8)
        .map(|_| {
            assert!(!p.stored(20), "no referenced bit in this scheme");
            p.protected()
        })
        .collect();
    assert_eq!(seen, [1, 2, 3, 4, 5, 3, 4, 5]);
    // A growing LRU: the limit rises with it (lru_size counts the new entry).
    let mut p = DecayProtection::default();
    let seen: Vec<u64> = (1..=12)
        .map(|size| {
            p.stored(size);
            p.protected()
        })
        .collect();
    // While a quarter of the LRU is 0, every store halves 1 back to 0. From 4 entries
    // protection climbs to the quarter and halves on the store that passes it: 2 > 1 at
    // sizes 5–7, 3 > 2 at sizes 9 and 11.
    assert_eq!(seen, [0, 0, 0, 1, 1, 1, 1, 2, 1, 2, 1, 2]);
}

#[test]
fn decay_count_subtracts_protection_and_scales_by_backing_over_stored() {
    let mut p = DecayProtection::default();
    for _ in 0..5 {
        p.stored(100);
    }
    assert_eq!(p.protected(), 5);
    assert_eq!(p.count(&unscaled(100)), 95);
    // 95 entries at 3 pool pages per 10 stored: mult_frac(95, 3, 10) = 28.
    assert_eq!(p.count(&ZswapLruView::new(100, 3, 10)), 28);
    // Protection at or above the LRU size offers nothing.
    assert_eq!(p.count(&unscaled(5)), 0);
    assert_eq!(p.count(&unscaled(3)), 0);
    assert_eq!(p.count(&unscaled(0)), 0);
    // Counting consumes nothing.
    assert_eq!(p.protected(), 5);
}

#[test]
fn decay_may_scan_aborts_exactly_when_protection_reaches_what_the_batch_leaves() {
    let mut p = DecayProtection::default();
    for _ in 0..5 {
        p.stored(100);
    }
    assert_eq!(p.protected(), 5);
    let lru = unscaled(100);
    // 100 - 94 = 6 > 5: allowed; 100 - 95 = 5 <= 5: stop.
    assert!(p.may_scan(&lru, 94));
    assert!(!p.may_scan(&lru, 95));
    assert!(!p.may_scan(&lru, 96));
    // A batch of exactly the LRU's size leaves 0, which any protection reaches.
    assert!(!p.may_scan(&lru, 100));
    assert!(!DecayProtection::default().may_scan(&lru, 100));
    // A batch larger than the LRU wraps the kernel's unsigned difference: allowed.
    assert!(p.may_scan(&lru, 101));
    assert!(p.may_scan(&unscaled(0), 1));
}

#[test]
fn decay_grows_protection_on_target_swapins_and_failed_writebacks_only() {
    let mut p = DecayProtection::default();
    p.swapin(ZswapSwapin::new(true, true));
    p.swapin(ZswapSwapin::new(false, true));
    assert_eq!(p.protected(), 2, "the faulting page counts from zswap or disk");
    p.swapin(ZswapSwapin::new(true, false));
    p.swapin(ZswapSwapin::new(false, false));
    assert_eq!(p.protected(), 2, "readahead neighbours never count");
    p.writeback_failed();
    assert_eq!(p.protected(), 3);
    let mut referenced = true;
    assert_eq!(p.visit(&mut referenced), ZswapVisit::Writeback);
    assert!(referenced, "the bit is left alone");
}

#[test]
fn second_chance_rotates_and_clears_on_the_first_visit_and_writes_back_on_the_second() {
    let mut p = SecondChanceProtection::default();
    let mut referenced = p.stored(1);
    assert!(referenced);
    assert_eq!(p.visit(&mut referenced), ZswapVisit::Rotate);
    assert!(!referenced);
    assert_eq!(p.visit(&mut referenced), ZswapVisit::Writeback);
    assert!(!referenced);
    assert!(p.may_scan(&unscaled(0), 0) && p.may_scan(&unscaled(10), 10));
}

#[test]
fn second_chance_disk_swapins_are_subtracted_from_one_count_and_consumed() {
    let mut p = SecondChanceProtection::default();
    // Three pages from the disk, two of them readahead neighbours; two zswap hits.
    p.swapin(ZswapSwapin::new(true, true));
    p.swapin(ZswapSwapin::new(true, false));
    p.swapin(ZswapSwapin::new(true, false));
    p.swapin(ZswapSwapin::new(false, true));
    p.swapin(ZswapSwapin::new(false, false));
    assert_eq!(p.disk_swapins(), 3, "zswap hits are not counted");
    assert_eq!(p.count(&unscaled(10)), 7);
    assert_eq!(p.disk_swapins(), 0);
    assert_eq!(p.count(&unscaled(10)), 10, "a second count sees none");
    // An empty LRU consumes nothing.
    p.swapin(ZswapSwapin::new(true, true));
    assert_eq!(p.count(&unscaled(0)), 0);
    assert_eq!(p.disk_swapins(), 1);
}

#[test]
fn second_chance_swapins_beyond_the_lru_carry_over() {
    let mut p = SecondChanceProtection::default();
    for _ in 0..7 {
        p.swapin(ZswapSwapin::new(true, false));
    }
    // Seven swap-ins against four entries: the first count uses four and offers nothing.
    assert_eq!(p.count(&unscaled(4)), 0);
    assert_eq!(p.disk_swapins(), 3);
    // The next count uses the three left over.
    assert_eq!(p.count(&unscaled(4)), 1);
    assert_eq!(p.disk_swapins(), 0);
    assert_eq!(p.count(&unscaled(4)), 4);
}

#[test]
fn second_chance_count_scales_by_backing_over_stored() {
    let mut p = SecondChanceProtection::default();
    p.swapin(ZswapSwapin::new(true, true));
    // 99 freeable entries at 1 pool page per 4 stored: mult_frac(99, 1, 4) = 24.
    assert_eq!(p.count(&ZswapLruView::new(100, 1, 4)), 24);
    assert_eq!(p.count(&ZswapLruView::new(100, 1, 4)), 25);
    // Nothing stored (the pool's statistics lag): nothing offered.
    assert_eq!(p.count(&ZswapLruView::new(100, 0, 0)), 0);
}

#[test]
fn a_pass_over_fresh_entries_writes_back_none_with_second_chance_and_all_with_decay() {
    const N: u32 = 16;
    let mut second = ZswapProtectionConfig::SecondChance.build();
    let mut lru = TinyLru::default();
    (0..N).for_each(|id| lru.store(second.as_mut(), id));
    assert!(lru.walk(second.as_mut(), N as usize).is_empty());
    assert_eq!(lru.entries.len(), N as usize);
    assert!(lru.entries.iter().all(|&(_, referenced)| !referenced));
    assert_eq!(lru.walk(second.as_mut(), N as usize), (0..N).collect::<Vec<_>>());
    assert!(lru.entries.is_empty());

    let mut decay = ZswapProtectionConfig::Decay.build();
    let mut lru = TinyLru::default();
    (0..N).for_each(|id| lru.store(decay.as_mut(), id));
    assert_eq!(lru.walk(decay.as_mut(), N as usize / 2), (0..N / 2).collect::<Vec<_>>());
    assert_eq!(lru.walk(decay.as_mut(), N as usize), (N / 2..N).collect::<Vec<_>>());
}
