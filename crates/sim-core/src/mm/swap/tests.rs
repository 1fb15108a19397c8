//! Tests of the swap devices, their cluster allocator and the swap cache.

use super::device::{first_free, SwapDevice, COUNT_SHIFT, TAG_FRAME, TAG_SHADOW, ZERO_BIT};
use super::*;
use crate::policy::allocator::{AfterAlloc, ClusterLists, SlotPlan, SlotSource};
use proptest::prelude::*;

impl Swap {
    /// True while the slot is allocated (referenced or cached).
    fn in_use(&self, slot: SwapSlot) -> bool {
        let dev = &self.devices[slot.device.0 as usize];
        slot.offset != 0 && !dev.is_free(slot.offset)
    }
}

proptest! {
    /// The four-at-a-time scan finds the slot a test of one word at a time finds, over
    /// words of every kind: free, cached, counted, zero-marked, shadows.
    #[test]
    fn first_free_is_the_first_free_word(kinds in proptest::collection::vec(0u8..5, 0..40)) {
        let words: Vec<u64> = kinds
            .iter()
            .map(|k| match k {
                0 => 0,
                1 => u64::from(TAG_FRAME | 7),
                2 => 3 << COUNT_SHIFT,
                3 => ZERO_BIT | u64::from(TAG_SHADOW | 5),
                _ => (1 << COUNT_SHIFT) | u64::from(TAG_FRAME),
            })
            .collect();
        let one_by_one = words.iter().position(|&w| (w >> COUNT_SHIFT) as u8 == 0 && w as u32 & TAG_FRAME == 0);
        prop_assert_eq!(first_free(&words), one_by_one);
    }

    /// A block scan finds the first aligned run of `nr` free slots at or after `from` in
    /// a cluster, as testing each aligned offset slot by slot does, on a device whose
    /// last cluster is cut short.
    #[test]
    fn a_block_scan_finds_the_first_aligned_free_run(
        busy in proptest::collection::vec(any::<bool>(), 61),
        c in 0u32..8,
        from in 0u32..64,
        order in 1u8..4,
    ) {
        let spec = SwaponSpec { blkdev: true, slots: 61, priority: None, rotational: false, cluster_slots: 8, cpus: 1 };
        let mut dev = SwapDevice::new(&spec, 0, ClusterLists::PerOrder);
        for (off, &b) in busy.iter().enumerate().skip(1) {
            if b {
                dev.set_slot_count(off as u32, 1);
            }
        }
        let nr = 1u32 << order;
        let end = ((c + 1) * 8).min(61);
        let first = from.max(c * 8).next_multiple_of(nr);
        let slot_by_slot = (first..end.saturating_sub(nr - 1))
            .step_by(nr as usize)
            .find(|&off| (off..off + nr).all(|s| dev.is_free(s)));
        prop_assert_eq!(dev.take_in_cluster(c, from, nr), slot_by_slot);
    }
}

fn swap_with(devs: &[(u32, Option<i16>, bool)]) -> Swap {
    let mut s = Swap::default();
    for &(slots, priority, rotational) in devs {
        s.swapon(SwaponSpec { blkdev: true, slots, priority, rotational, cluster_slots: 8, cpus: 2 });
    }
    s
}

/// One device of `slots` slots in clusters of 8, for `cpus` CPUs.
fn one_device(slots: u32, rotational: bool, cpus: usize) -> Swap {
    let mut s = Swap::default();
    s.swapon(SwaponSpec { blkdev: true, slots, priority: None, rotational, cluster_slots: 8, cpus });
    s
}

/// Offsets of `n` folios of `order` allocated on `cpu`, checking every slot's cache word.
fn take_order(s: &mut Swap, cpu: usize, order: u8, n: usize) -> Vec<Option<u32>> {
    (0..n)
        .map(|i| {
            let head = Pfn(1000 * (i as u32 + 1));
            let slot = s.alloc_folio(CpuId::from_index(cpu), order, head)?;
            for k in 0..1 << order {
                let at = SwapSlot { offset: slot.offset + k, ..slot };
                assert_eq!((s.cached_frame(at), s.count(at)), (Some(Pfn(head.0 + k)), 0));
            }
            s.check_invariants();
            Some(slot.offset)
        })
        .collect()
}

/// Drops the swap-cache folio of each slot, releasing it.
fn release(s: &mut Swap, offsets: impl IntoIterator<Item = u32>) {
    for offset in offsets {
        s.cache_delete(SwapSlot { device: DeviceId(0), offset }, None);
    }
    s.check_invariants();
}

fn take(s: &mut Swap, cpu: usize, n: usize) -> Vec<(u8, u32)> {
    (0..n)
        .map(|i| s.alloc(CpuId::from_index(cpu), Pfn(i as u32)).map(|x| (x.device.0, x.offset)).unwrap())
        .collect()
}

#[test]
fn consecutive_allocations_are_contiguous_and_skip_the_header() {
    let mut s = swap_with(&[(32, None, false)]);
    assert_eq!(take(&mut s, 0, 9), [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7), (0, 8), (0, 9)]);
    // A second CPU takes its own cluster on an SSD.
    assert_eq!(take(&mut s, 1, 2), [(0, 16), (0, 17)]);
    s.check_invariants();
}

#[test]
fn rotational_devices_share_one_cluster_between_cpus() {
    let mut s = swap_with(&[(32, None, true)]);
    assert_eq!(take(&mut s, 0, 2), [(0, 1), (0, 2)]);
    assert_eq!(take(&mut s, 1, 2), [(0, 3), (0, 4)]);
}

#[test]
fn equal_priorities_round_robin_and_higher_priority_wins() {
    let mut s = swap_with(&[(32, Some(5), false), (32, Some(5), false), (32, Some(1), false)]);
    let devs: Vec<u8> = take(&mut s, 0, 4).into_iter().map(|(d, _)| d).collect();
    assert_eq!(devs, [0, 1, 0, 1]);
}

#[test]
fn freed_slots_are_reused_and_full_devices_refuse() {
    let mut s = swap_with(&[(8, None, false)]);
    let slots: Vec<SwapSlot> = (0..7).map(|i| s.alloc(CpuId(0), Pfn(i)).unwrap()).collect();
    assert!(s.alloc(CpuId(0), Pfn(99)).is_none());
    assert!(s.vm_swap_full());
    // Slot referenced by a PTE, then the cache drops it with a shadow: still allocated.
    s.inc_count(slots[3]);
    s.cache_delete(slots[3], Some(Shadow(5 | 1 << 29)));
    assert_eq!(s.cache_entry(slots[3]), CacheEntry::Shadow(Shadow(5 | 1 << 29)));
    assert!(s.in_use(slots[3]));
    // The last reference goes: slot released and its shadow cleared.
    s.dec_count(slots[3]);
    assert!(!s.in_use(slots[3]));
    assert_eq!(s.cache_entry(slots[3]), CacheEntry::Empty);
    assert_eq!(s.alloc(CpuId(0), Pfn(50)), Some(slots[3]));
    s.check_invariants();
}

#[test]
fn every_order_gets_aligned_contiguous_slots_in_its_own_cluster() {
    let mut s = one_device(64, false, 1);
    // The header's cluster is left to order 0; each order opens a cluster of its own.
    assert_eq!(take_order(&mut s, 0, 3, 1), [Some(8)]);
    assert_eq!(take_order(&mut s, 0, 2, 2), [Some(16), Some(20)]);
    assert_eq!(take_order(&mut s, 0, 1, 2), [Some(24), Some(26)]);
    assert_eq!(take_order(&mut s, 0, 0, 2), [Some(1), Some(2)]);
    assert_eq!(take_order(&mut s, 0, 1, 1), [Some(28)]);
    assert_eq!(s.used_slots(), 8 + 8 + 6 + 2);
    // Order 2 never continues in the order-1 cluster, though 30..32 is free there.
    assert_eq!(take_order(&mut s, 0, 2, 1), [Some(32)]);
}

#[test]
fn order0_through_alloc_folio_is_alloc() {
    let mut a = swap_with(&[(32, Some(1), false), (32, Some(1), true)]);
    let mut b = swap_with(&[(32, Some(1), false), (32, Some(1), true)]);
    for i in 0..40 {
        assert_eq!(
            a.alloc(CpuId::from_index(i % 2), Pfn(i as u32)),
            b.alloc_folio(CpuId::from_index(i % 2), 0, Pfn(i as u32))
        );
    }
}

#[test]
fn holes_in_large_order_clusters_serve_only_order0() {
    let mut s = one_device(32, false, 1);
    let order1: Vec<Option<u32>> = (8..32).step_by(2).map(Some).collect();
    assert_eq!(take_order(&mut s, 0, 1, 12), order1);
    assert_eq!(take_order(&mut s, 0, 1, 1), [None]);
    assert_eq!(take_order(&mut s, 0, 2, 1), [None]);
    assert_eq!(s.free_slots(), 7);
    // Freeing one slot of a pair leaves a hole no order-1 folio fits in.
    release(&mut s, [9, 17]);
    assert_eq!(take_order(&mut s, 0, 1, 1), [None]);
    // Order 0 fills the header's cluster, then steals the holes.
    let order0: Vec<Option<u32>> = (1..8).chain([9, 17]).map(Some).collect();
    assert_eq!(take_order(&mut s, 0, 0, 9), order0);
    assert_eq!(take_order(&mut s, 0, 0, 1), [None]);
}

#[test]
fn an_emptied_cluster_loses_its_order() {
    let mut s = one_device(32, false, 1);
    assert_eq!(take_order(&mut s, 0, 1, 4), [Some(8), Some(10), Some(12), Some(14)]);
    assert_eq!(take_order(&mut s, 0, 2, 4), [Some(16), Some(20), Some(24), Some(28)]);
    release(&mut s, 8..16);
    assert_eq!(s.used_slots(), 16);
    assert_eq!(take_order(&mut s, 0, 2, 2), [Some(8), Some(12)]);
    // A freed block of the cluster's own order is reused through the non-full list.
    release(&mut s, 20..24);
    assert_eq!(take_order(&mut s, 0, 2, 1), [Some(20)]);
}

#[test]
fn large_order_hints_are_per_cpu_on_ssds_and_shared_on_disks() {
    let mut ssd = one_device(64, false, 2);
    assert_eq!(take_order(&mut ssd, 0, 1, 1), [Some(8)]);
    assert_eq!(take_order(&mut ssd, 1, 1, 1), [Some(16)]);
    assert_eq!(take_order(&mut ssd, 0, 1, 1), [Some(10)]);
    // Each order has its own hint: order 2 on CPU 0 opens another cluster.
    assert_eq!(take_order(&mut ssd, 0, 2, 1), [Some(24)]);
    let mut hdd = one_device(64, true, 2);
    assert_eq!(take_order(&mut hdd, 0, 1, 1), [Some(8)]);
    assert_eq!(take_order(&mut hdd, 1, 1, 1), [Some(10)]);
    assert_eq!(take_order(&mut hdd, 0, 2, 1), [Some(16)]);
    assert_eq!(take_order(&mut hdd, 1, 2, 1), [Some(20)]);
}

#[test]
fn large_folios_go_to_the_next_device_with_room() {
    let mut s = swap_with(&[(16, Some(5), false), (64, Some(5), false), (64, Some(1), false)]);
    // Device 0 holds one order-3 folio, then only the header's cluster is left.
    let at = |s: &mut Swap, order| s.alloc_folio(CpuId(0), order, Pfn(0)).map(|x| (x.device.0, x.offset));
    assert_eq!(at(&mut s, 3), Some((0, 8)));
    assert_eq!(at(&mut s, 3), Some((1, 8)));
    assert_eq!(at(&mut s, 3), Some((1, 16)));
    assert_eq!(at(&mut s, 0), Some((0, 1)));
    // A swap file takes no large folio at all.
    s.devices[1].blkdev = false;
    assert_eq!(at(&mut s, 1), Some((2, 8)));
    assert_eq!(at(&mut s, 0), Some((1, 1)));
    s.check_invariants();
}

#[test]
fn random_orders_and_releases_keep_the_bookkeeping() {
    let mut s = swap_with(&[(200, Some(1), false), (120, Some(1), true)]);
    let mut held: Vec<SwapSlot> = Vec::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..20_000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let r = (x >> 33) as usize;
        if r % 5 < 2 || held.is_empty() {
            let order = [0, 0, 1, 2, 3][r / 5 % 5];
            if let Some(slot) = s.alloc_folio(CpuId::from_index(r / 25 % 3), order, Pfn(i)) {
                held.extend((0..1 << order).map(|k| SwapSlot { offset: slot.offset + k, ..slot }));
            }
        } else {
            let slot = held.swap_remove(r / 5 % held.len());
            s.cache_delete(slot, None);
        }
        s.check_invariants();
    }
    assert_eq!(s.used_slots(), held.len() as u64);
}

/// A slot allocator of fixed plans, standing for every variant: the sources for order 0,
/// for large folios and for hibernation, what becomes of a cluster, and the lists kept.
#[derive(Clone, Debug)]
struct FixedPlans {
    order0: &'static [SlotSource],
    large: &'static [SlotSource],
    hibernation: &'static [SlotSource],
    then: AfterAlloc,
    lists: ClusterLists,
}

impl SlotAllocator for FixedPlans {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn cluster_lists(&self) -> ClusterLists {
        self.lists
    }
    fn plan(&self, request: &SlotRequest) -> SlotPlan {
        match (request.purpose, request.order) {
            (SlotPurpose::Hibernation, _) => SlotPlan::new(self.hibernation, self.then),
            (_, 0) => SlotPlan::new(self.order0, AfterAlloc::KeepCurrent),
            _ => SlotPlan::new(self.large, AfterAlloc::KeepCurrent),
        }
    }
}

use SlotSource::{Current, Frag, Free, Nonfull, Scan, Steal};

/// Source lists the property test draws from: the 6.18 ones, the pre-6.12 ones, the
/// hibernation slow path's, and mixes no kernel had.
const SOURCE_LISTS: [&[SlotSource]; 8] = [
    &[Current, Nonfull, Free, Steal],
    &[Current, Nonfull, Free],
    &[Current, Free, Scan],
    &[Current, Free],
    &[Nonfull, Free, Frag, Steal],
    &[Scan],
    &[Frag, Free, Current, Scan, Nonfull],
    &[],
];

fn fixed_swap(plans: FixedPlans, devs: &[(u32, bool)]) -> Swap {
    let mut s = Swap::new(Box::new(plans));
    for &(slots, rotational) in devs {
        s.swapon(SwaponSpec {
            blkdev: true,
            slots,
            priority: Some(1),
            rotational,
            cluster_slots: 16,
            cpus: 3,
        });
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the plan, every allocation hands out slots that were free, aligned to the
    /// folio, inside one cluster and on the device; the bookkeeping recounts right after
    /// every step, and the slots in use are exactly those held.
    #[test]
    fn every_plan_hands_out_free_aligned_slots_and_conserves_them(
        lists in prop::sample::select(&[0usize, 1, 2, 3, 4, 5, 6, 7][..]),
        large in prop::sample::select(&[0usize, 1, 3, 6, 7][..]),
        hibernation in prop::sample::select(&[0usize, 2, 4, 5, 6][..]),
        relocate in any::<bool>(),
        free_only in any::<bool>(),
        ops in proptest::collection::vec((0u8..10, 0usize..3, any::<u16>()), 1..600),
    ) {
        let plans = FixedPlans {
            order0: SOURCE_LISTS[lists],
            large: SOURCE_LISTS[large],
            hibernation: SOURCE_LISTS[hibernation],
            then: if relocate { AfterAlloc::Relocate } else { AfterAlloc::KeepCurrent },
            lists: if free_only { ClusterLists::FreeOnly } else { ClusterLists::PerOrder },
        };
        let mut s = fixed_swap(plans, &[(150, false), (97, true)]);
        // The slots each held folio or image page took, as (slot, pages, image).
        let mut held: Vec<(SwapSlot, u32, bool)> = Vec::new();
        let mut busy = std::collections::BTreeSet::new();
        for (i, &(kind, cpu, pick)) in ops.iter().enumerate() {
            if kind < 6 || held.is_empty() {
                let (order, image) = match kind % 6 {
                    0 | 1 => (0, false),
                    2 => (1, false),
                    3 => (2, false),
                    4 => (4, false),
                    _ => (0, true),
                };
                let got = if image {
                    s.alloc_hibernation_slot(DeviceId((pick % 2) as u8))
                } else {
                    s.alloc_folio(CpuId::from_index(cpu), order, Pfn(10_000 * i as u32))
                };
                if let Some(slot) = got {
                    let nr = 1u32 << order;
                    let max = s.devices[slot.device.0 as usize].max();
                    prop_assert!(slot.offset >= 1 && slot.offset + nr <= max, "{slot} off the device");
                    prop_assert_eq!(slot.offset % nr, 0, "{} not aligned to order {}", slot, order);
                    prop_assert_eq!(slot.offset / 16, (slot.offset + nr - 1) / 16, "{} spans clusters", slot);
                    for k in 0..nr {
                        prop_assert!(busy.insert(slot.nth(k)), "{} handed out busy", slot.nth(k));
                    }
                    held.push((slot, nr, image));
                }
            } else {
                let (slot, nr, image) = held.swap_remove(usize::from(pick) % held.len());
                for k in 0..nr {
                    busy.remove(&slot.nth(k));
                    if image {
                        s.free_hibernation_slot(slot.nth(k));
                    } else {
                        s.cache_delete(slot.nth(k), None);
                    }
                }
            }
            s.check_invariants();
            prop_assert_eq!(s.used_slots(), busy.len() as u64);
        }
    }
}

/// The default plans, through `Swap::default`, against a `FixedPlans` of the same sources.
#[test]
fn the_default_allocator_is_the_cluster_plans() {
    let same = FixedPlans {
        order0: SOURCE_LISTS[0],
        large: SOURCE_LISTS[1],
        hibernation: SOURCE_LISTS[0],
        then: AfterAlloc::KeepCurrent,
        lists: ClusterLists::PerOrder,
    };
    let mut a = Swap::default();
    let mut b = Swap::new(Box::new(same));
    for s in [&mut a, &mut b] {
        s.swapon(SwaponSpec {
            blkdev: true,
            slots: 300,
            priority: None,
            rotational: false,
            cluster_slots: 16,
            cpus: 2,
        });
    }
    let mut held = Vec::new();
    for i in 0..3000u32 {
        let r = i.wrapping_mul(2_654_435_761) >> 7;
        if r % 3 < 2 || held.is_empty() {
            let order = [0, 0, 1, 2][(r / 3 % 4) as usize];
            let (x, y) =
                (a.alloc_folio(CpuId(r % 2), order, Pfn(i)), b.alloc_folio(CpuId(r % 2), order, Pfn(i)));
            assert_eq!(x, y);
            held.extend(x.map(|slot| (slot, 1u32 << order)));
        } else {
            let (slot, nr) = held.swap_remove((r as usize / 3) % held.len());
            for k in 0..nr {
                a.cache_delete(slot.nth(k), None);
                b.cache_delete(slot.nth(k), None);
            }
        }
    }
}

/// Before 6.12: with no free cluster left, a large folio finds no room although whole
/// aligned blocks are free in partly used clusters, and order 0 finds single slots by
/// scanning.
#[test]
fn free_list_plans_need_a_free_cluster_for_large_folios() {
    let plans = FixedPlans {
        order0: SOURCE_LISTS[2],
        large: SOURCE_LISTS[3],
        hibernation: SOURCE_LISTS[2],
        then: AfterAlloc::KeepCurrent,
        lists: ClusterLists::FreeOnly,
    };
    let mut s = Swap::new(Box::new(plans));
    s.swapon(SwaponSpec {
        blkdev: true,
        slots: 32,
        priority: None,
        rotational: false,
        cluster_slots: 8,
        cpus: 1,
    });
    assert_eq!(take_order(&mut s, 0, 2, 6), [Some(8), Some(12), Some(16), Some(20), Some(24), Some(28)]);
    assert_eq!(take_order(&mut s, 0, 2, 1), [None]);
    // Two aligned blocks free again, in clusters that stay partly used.
    release(&mut s, (12..16).chain(20..24));
    assert_eq!(take_order(&mut s, 0, 2, 1), [None]);
    // Order 0 fills the header's cluster through its hint, then scans into the holes.
    let order0: Vec<Option<u32>> = (1..8).chain(12..16).chain([20]).map(Some).collect();
    assert_eq!(take_order(&mut s, 0, 0, 12), order0);
}

/// From 6.15 to 6.19, hibernation's slots came from the slow path: one slot per cluster
/// in turn, free clusters first, then round the fragmented ones.
#[test]
fn the_slow_path_puts_each_image_slot_in_another_cluster() {
    let plans = FixedPlans {
        order0: SOURCE_LISTS[0],
        large: SOURCE_LISTS[1],
        hibernation: SOURCE_LISTS[4],
        then: AfterAlloc::Relocate,
        lists: ClusterLists::PerOrder,
    };
    let mut s = Swap::new(Box::new(plans));
    s.swapon(SwaponSpec {
        blkdev: true,
        slots: 32,
        priority: None,
        rotational: false,
        cluster_slots: 8,
        cpus: 1,
    });
    let image: Vec<u32> = (0..8).map(|_| s.alloc_hibernation_slot(DeviceId(0)).unwrap().offset).collect();
    assert_eq!(image, [1, 8, 16, 24, 2, 9, 17, 25]);
    s.check_invariants();
    let mut fast = Swap::default();
    fast.swapon(SwaponSpec {
        blkdev: true,
        slots: 32,
        priority: None,
        rotational: false,
        cluster_slots: 8,
        cpus: 1,
    });
    let image: Vec<u32> = (0..8).map(|_| fast.alloc_hibernation_slot(DeviceId(0)).unwrap().offset).collect();
    assert_eq!(image, [1, 2, 3, 4, 5, 6, 7, 8]);
}
