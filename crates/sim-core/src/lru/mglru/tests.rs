//! Tests of the tiers and the refault feedback controller.

use super::feedback::{tier_from_refs, Ctrl};
use super::MAX_NR_TIERS;

#[test]
fn tiers_follow_log2_of_references() {
    assert_eq!(tier_from_refs(0, false), 0);
    assert_eq!(tier_from_refs(1, false), 0);
    assert_eq!(tier_from_refs(2, false), 1);
    assert_eq!(tier_from_refs(3, false), 2);
    assert_eq!(tier_from_refs(4, false), 2);
    assert_eq!(tier_from_refs(0, true), MAX_NR_TIERS - 1);
}

#[test]
fn the_controller_protects_only_a_tier_that_refaults_more() {
    let mut c = Ctrl::default();
    // No refaults anywhere: nothing is protected.
    assert_eq!(c.tier_idx(), MAX_NR_TIERS - 1);
    // The working-set tier refaults at 50%, tier 0 at 10%: protect it.
    c.evicted[0] = 10_000;
    c.refaulted[0] = 1_000;
    c.evicted[3] = 1_000;
    c.refaulted[3] = 500;
    assert_eq!(c.tier_idx(), 2);
    // The same rate as tier 0 is within the 2:3 margin: no protection.
    c.refaulted[3] = 100;
    assert_eq!(c.tier_idx(), MAX_NR_TIERS - 1);
    // Fewer than MIN_LRU_BATCH refaults never engage it.
    c.refaulted[3] = 63;
    c.refaulted[0] = 0;
    assert_eq!(c.tier_idx(), MAX_NR_TIERS - 1);
}

#[test]
fn averages_halve_at_each_carry_over() {
    let mut c = Ctrl::default();
    c.refaulted[0] = 100;
    c.evicted[0] = 300;
    c.protected[0] = 100;
    c.carry_over();
    assert_eq!((c.avg_refaulted[0], c.avg_total[0]), (50, 200));
    assert_eq!((c.refaulted[0], c.evicted[0], c.protected[0]), (0, 0, 0));
    c.carry_over();
    assert_eq!((c.avg_refaulted[0], c.avg_total[0]), (25, 100));
}
