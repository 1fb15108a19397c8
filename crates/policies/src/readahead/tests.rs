//! Tests of what the policies share: the window formula, the configuration enum, and
//! properties every plan must have whichever policy made it.

use super::*;
use crate::readahead::test_support::fault_at;
use proptest::prelude::*;
use swapsim_core::{EntryLocation, Feedback, RegionId, VirtPage};

/// The window for `hits` hits after a miss at position 10, capped at `max_pages`, with
/// the previous miss at `prev_pos` and the previous window `prev_win`.
fn check_window(hits: u32, prev_pos: u64, max_pages: u32, prev_win: u32) -> u32 {
    window_pages(WindowInput { prev_pos, pos: 10, hits, max_pages, prev_win })
}

#[test]
fn window_formula_matches_the_reference_table() {
    // No hits: one page, or two when the miss is next to the previous one.
    assert_eq!(check_window(0, 500, 1 << 20, 0), 1);
    assert_eq!(check_window(0, 9, 1 << 20, 0), 2);
    assert_eq!(check_window(0, 11, 1 << 20, 0), 2);
    assert_eq!(check_window(0, 12, 1 << 20, 0), 1);
    // Hits h: h + 2 rounded up to a power of two, at least 4.
    let table = [(1, 4), (2, 4), (3, 8), (6, 8), (7, 16), (14, 16), (15, 32), (30, 32)];
    for (hits, pages) in table {
        assert_eq!(check_window(hits, 500, 1 << 20, 0), pages, "hits {hits}");
    }
    // Capped by max_pages, and an enormous counter does not overflow.
    assert_eq!(check_window(14, 500, 8, 0), 8);
    assert_eq!(check_window(u32::MAX, 500, 1 << 31, 0), 1 << 31);
}

#[test]
fn window_never_shrinks_faster_than_halving() {
    // After an 8-page window, no-hit misses away from the previous one get 4, 2, then 1.
    let mut prev_win = 8;
    let mut seen = Vec::new();
    for _ in 0..4 {
        prev_win = check_window(0, 500, 8, prev_win);
        seen.push(prev_win);
    }
    assert_eq!(seen, [4, 2, 1, 1]);
    // Halving beats a small fresh estimate even with hits.
    assert_eq!(check_window(1, 500, 32, 32), 16);
}

#[test]
fn resolve_follows_the_kernel_rule() {
    let cases = [
        (true, false, ReadaheadConfig::Vma),
        (true, true, ReadaheadConfig::Cluster),
        (false, false, ReadaheadConfig::Cluster),
        (false, true, ReadaheadConfig::Cluster),
    ];
    for (vma_ra_enabled, any_rotational, want) in cases {
        let ctx = ReadaheadContext { vma_ra_enabled, any_rotational };
        assert_eq!(ReadaheadConfig::Kernel.resolve(&ctx), want, "{ctx:?}");
        assert_eq!(ReadaheadConfig::Kernel.build(&ctx).kind(), want.name());
        for cfg in ReadaheadConfig::ALL.into_iter().skip(1) {
            assert_eq!(cfg.resolve(&ctx), cfg);
            assert_eq!(cfg.build(&ctx).kind(), cfg.name());
        }
    }
    assert_eq!(ReadaheadConfig::Kernel.resolve(&ReadaheadContext::default()), ReadaheadConfig::Vma);
}

#[test]
fn names_round_trip_and_unknown_names_are_rejected() {
    let names: Vec<&str> = ReadaheadConfig::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["kernel", "cluster", "fixed", "vma", "zswap-bypass", "none"]);
    for cfg in ReadaheadConfig::ALL {
        assert_eq!(ReadaheadConfig::from_name(cfg.name()), Ok(cfg));
    }
    let err = ReadaheadConfig::from_name("xyz").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"readahead: unknown policy "xyz" (expected one of kernel, cluster, fixed, vma, zswap-bypass, none)"#
    );
    assert!(matches!(err, ConfigError::Invalid { ref field, .. } if field == "readahead"));
    assert!(ReadaheadConfig::from_name("Cluster").is_err());
    assert!(ReadaheadConfig::from_name("").is_err());
}

/// A scenario section as the cli might embed the choice.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Section {
    #[serde(default)]
    readahead: ReadaheadConfig,
}

#[test]
fn toml_accepts_every_name_and_defaults_to_kernel() {
    for cfg in ReadaheadConfig::ALL {
        let text = format!("readahead = \"{}\"\n", cfg.name());
        let section: Section = toml::from_str(&text).unwrap();
        assert_eq!(section.readahead, cfg);
        assert_eq!(toml::to_string(&section).unwrap(), text);
    }
    let empty: Section = toml::from_str("").unwrap();
    assert_eq!(empty.readahead, ReadaheadConfig::Kernel);
}

#[test]
fn toml_rejects_a_misspelled_policy_naming_the_variants() {
    let err = toml::from_str::<Section>("readahead = \"fixd\"").unwrap_err();
    let message = err.to_string();
    assert!(message.contains("fixd"), "{message}");
    for cfg in ReadaheadConfig::ALL {
        assert!(message.contains(&format!("`{}`", cfg.name())), "{message}");
    }
}

/// One scripted event for the property tests.
#[derive(Clone, Debug)]
enum Event {
    /// A miss at this fraction of the usable slots / region pages (per mille), on a page
    /// held in zswap or not.
    Miss { slot_permille: u32, page_permille: u32, in_zswap: bool },
    /// A hit at this fraction of the region.
    Hit { page_permille: u32, readahead: bool },
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (0u32..1000, 0u32..1000, any::<bool>()).prop_map(|(slot_permille, page_permille, in_zswap)| {
            Event::Miss { slot_permille, page_permille, in_zswap }
        }),
        (0u32..1000, any::<bool>())
            .prop_map(|(page_permille, readahead)| Event::Hit { page_permille, readahead }),
    ]
}

/// Scales `permille` of `len` into `[0, len)`.
fn scaled(permille: u32, len: u64) -> u64 {
    len * u64::from(permille) / 1000
}

proptest! {
    #[test]
    fn every_plan_contains_the_target_and_stays_in_bounds(
        cfg in prop::sample::select(&ReadaheadConfig::ALL[1..]),
        page_cluster in 0u32..8,
        device_slots in 2u32..3000,
        region_start in 0u64..2000,
        region_pages in 1u64..2000,
        events in prop::collection::vec(event(), 1..60),
    ) {
        let mut policy = cfg.build(&ReadaheadContext::default());
        let region_end = region_start + region_pages;
        for ev in events {
            match ev {
                Event::Hit { page_permille, readahead } => {
                    policy.observe(&Feedback::SwapCacheHit {
                        region: RegionId(0),
                        vpage: VirtPage(region_start + scaled(page_permille, region_pages)),
                        readahead,
                    });
                }
                Event::Miss { slot_permille, page_permille, in_zswap } => {
                    let usable = u64::from(device_slots - 1);
                    let offset = 1 + u32::try_from(scaled(slot_permille, usable)).unwrap();
                    let vpage = region_start + scaled(page_permille, region_pages);
                    let mut fault = fault_at(offset, vpage);
                    fault.region_start = VirtPage(region_start);
                    fault.region_end = VirtPage(region_end);
                    fault.device_slots = device_slots;
                    fault.page_cluster = page_cluster;
                    if in_zswap {
                        fault.location = EntryLocation::Zswap;
                    }
                    let plan = policy.plan(&fault);
                    if in_zswap && cfg == ReadaheadConfig::ZswapBypass {
                        prop_assert_eq!(plan, ReadaheadPlan::TargetOnly, "no readahead for a zswap page");
                    }
                    match plan {
                        ReadaheadPlan::TargetOnly => {}
                        ReadaheadPlan::Slots { first, last } => {
                            prop_assert!(matches!(cfg, ReadaheadConfig::Cluster | ReadaheadConfig::Fixed));
                            prop_assert!(1 <= first && first <= offset && offset <= last);
                            prop_assert!(last < device_slots);
                            prop_assert!(first < last, "a one-slot window is TargetOnly");
                            prop_assert!(last - first < max_pages(page_cluster));
                        }
                        ReadaheadPlan::Pages { first, last } => {
                            prop_assert!(matches!(cfg, ReadaheadConfig::Vma | ReadaheadConfig::ZswapBypass));
                            prop_assert!(region_start <= first.0 && first.0 <= vpage);
                            prop_assert!(vpage <= last.0 && last.0 < region_end);
                            prop_assert!(first.0 < last.0, "a one-page window is TargetOnly");
                            prop_assert_eq!(first.0 / 512, last.0 / 512, "window crosses a PMD");
                            prop_assert!(last.0 - first.0 < u64::from(max_pages(page_cluster.min(5))));
                        }
                    }
                }
            }
        }
    }
}
