//! The verdicts: each experiment's simulated figures checked, one published figure at a
//! time, against a tolerance stated with the check.
//!
//! A check is "reproduced" only when the simulated figure is within its tolerance; the
//! verdict as a whole is reproduced only when every check is. Absolute times are not
//! judged: the publications do not describe their disks well enough to model them, so
//! only shapes and ratios (which the disk's speed largely cancels out of) are compared.
//!
//! Tolerances: a ratio of two published times must be matched within ±25 %, since the
//! swapoff study's own times for one setting vary that much (pre-5.8 scaling runs the same
//! window at every page-cluster and took 21.5 to 28.3 s); a minimum's position within one
//! page-cluster, since the published fixed curve is within 2 % between page-cluster 4 and
//! 5; a published range, within that range. The mTHP swap-in study publishes one run
//! per setting, so the same ±25 % is applied to its ratios of counters.
//!
//! The zswap study publishes two runs of each comparison that disagree (58 % and 64 %
//! fewer disk swap-ins, 7.2 % and 10.3 % less build time), so each figure is a range,
//! widened by the same ±25 % at both ends. The build time is judged by its reduction
//! rather than by the ratio of times: ±25 % around a ratio of 0.9 would reach past 1 and
//! accept a slower build as reproducing a faster one.
//!
//! The hibernation study is the exception to "no absolute times": it names its disk (100
//! MB/s) and its guest, and its times are dominated by that disk, so each of its eight
//! times is judged within ±30 %, with the ordering of every pair of clearly different
//! (more than 10 % apart) published times.

use super::{Check, HibernateRow, MthpRow, SwapoffRow, Verdict, ZswapBuild, ZswapRow};

/// How far a ratio may be from the published one, relative to it.
const RATIO_TOLERANCE: f64 = 0.25;

/// How many page-clusters a curve's minimum may be from the published one.
const MINIMUM_TOLERANCE: f64 = 1.0;

/// Swapoff study, pre-5.8 scaling readahead: 22.09 s at page-cluster 3, and 21.5 to 28.3 s
/// over page-cluster 1..8.
const SCALING_PRE_5_8_PC3_S: f64 = 22.09;
const SCALING_PRE_5_8_RANGE_S: (f64, f64) = (21.5, 28.3);
/// Swapoff study, fixed readahead at page-cluster 3, and where its curve is lowest.
const FIXED_PC3_S: f64 = 8.77;
const FIXED_MINIMUM_PAGE_CLUSTER: u32 = 4;
/// Swapoff study: scaling readahead at page-cluster 3 once swapoff credited its hits.
const SCALING_CREDITED_PC3_S: f64 = 12.19;

/// Plug study, one disk: read dispatches and MiB read without and with the plug.
const PLUG_OFF_DISPATCHES_PER_MIB: f64 = 544_701.0 / 2243.0;
const PLUG_ON_DISPATCHES_PER_MIB: f64 = 214_972.0 / 2937.0;
/// Plug study: the swap-in throughput gain with the plug, as a range.
const PLUG_THROUGHPUT_GAIN: (f64, f64) = (0.10, 0.40);

/// mTHP swap-in study, classic LRU: 16 kB swap-ins and pages swapped in and out, without
/// and with the refault throttle, and the build's wall time in seconds.
const MTHP_KERNEL_SWPIN_16K: f64 = 106_333.0;
const MTHP_THROTTLED_SWPIN_16K: f64 = 22_899.0;
const MTHP_KERNEL_PSWPIN: f64 = 474_036.0;
const MTHP_THROTTLED_PSWPIN: f64 = 294_050.0;
const MTHP_KERNEL_PSWPOUT: f64 = 1_434_853.0;
const MTHP_THROTTLED_PSWPOUT: f64 = 1_265_556.0;
const MTHP_KERNEL_WALL_S: f64 = 387.9;
const MTHP_THROTTLED_WALL_S: f64 = 387.2;
/// The same study's MGLRU build without the throttle.
const MTHP_MGLRU_SWPIN_16K: f64 = 286_881.0;
const MTHP_MGLRU_PSWPIN: f64 = 1_286_081.0;
const MTHP_MGLRU_PSWPOUT: f64 = 3_147_936.0;

/// zswap second-chance study, kernel build in a 2 GiB cgroup: disk swap-ins and real time
/// under the decaying protection and under second chance, averages of 5 runs; and the
/// cover letter's other run, given only as reductions.
const ZSWAP_DECAY_PSWPIN: f64 = 227_300.0;
const ZSWAP_SECOND_CHANCE_PSWPIN: f64 = 94_663.0;
const ZSWAP_DECAY_REAL_S: f64 = 263.89;
const ZSWAP_SECOND_CHANCE_REAL_S: f64 = 244.85;
const ZSWAP_OTHER_RUN_SWAPIN_CUT: f64 = 0.6412;
const ZSWAP_OTHER_RUN_TIME_CUT: f64 = 0.1032;

/// What a check accepts.
enum Tolerance {
    /// Within this fraction of the published value, either way.
    Relative(f64),
    /// Within this distance of the published value, either way.
    Absolute(f64, &'static str),
    /// At most the published value.
    AtMost,
    /// Within the published range of fractions (shown as percentages).
    PercentRange(f64, f64),
    /// Within a published range widened by a fraction of its ends, `low × (1 − rel)` to
    /// `high × (1 + rel)`; shown as percentages when `percent` is set.
    RelativeRange { low: f64, high: f64, rel: f64, percent: bool },
}

/// Checks `simulated` against `published` and words the result as
/// "{curve}: reproduced|not reproduced: {what} {simulated}, published {published} ({tolerance})".
fn check(curve: &str, what: &str, simulated: f64, published: f64, tolerance: Tolerance) -> Check {
    let mut simulated_text = format!("{simulated:.2}");
    let (reproduced, published_text, tolerance_text, published_max) = match tolerance {
        Tolerance::Relative(rel) => (
            (simulated / published - 1.0).abs() <= rel,
            format!("{published:.2}"),
            format!("tolerance ±{:.0} %", rel * 100.0),
            None,
        ),
        Tolerance::Absolute(dist, unit) => {
            // A position, such as a page-cluster, is a whole number.
            simulated_text = format!("{simulated}");
            (
                (simulated - published).abs() <= dist,
                format!("{published}"),
                format!("tolerance ±{dist} {unit}"),
                None,
            )
        }
        Tolerance::AtMost => (
            simulated <= published,
            format!("{published:.2}"),
            "tolerance: at most the published".to_string(),
            None,
        ),
        Tolerance::PercentRange(low, high) => {
            simulated_text = format!("{:+.0} %", simulated * 100.0);
            (
                (low..=high).contains(&simulated),
                format!("{:+.0} % to {:+.0} %", low * 100.0, high * 100.0),
                "tolerance: the published range".to_string(),
                Some(high),
            )
        }
        Tolerance::RelativeRange { low, high, rel, percent } => {
            let published_text = if percent {
                simulated_text = format!("{:.1} %", simulated * 100.0);
                format!("{:.1} % to {:.1} %", low * 100.0, high * 100.0)
            } else {
                format!("{low:.2} to {high:.2}")
            };
            (
                (low * (1.0 - rel)..=high * (1.0 + rel)).contains(&simulated),
                published_text,
                format!("tolerance ±{:.0} %", rel * 100.0),
                Some(high),
            )
        }
    };
    let status = if reproduced { "reproduced" } else { "not reproduced" };
    Check {
        curve: curve.to_string(),
        criterion: what.to_string(),
        simulated: round3(simulated),
        published: round3(match tolerance {
            Tolerance::PercentRange(low, _) | Tolerance::RelativeRange { low, .. } => low,
            _ => published,
        }),
        published_max: published_max.map(round3),
        tolerance: tolerance_text.clone(),
        reproduced,
        text: format!(
            "{curve}: {status}: {what} {simulated_text}, published {published_text} ({tolerance_text})"
        ),
    }
}

/// The swapoff-readahead verdict from its 32 rows (four policies, page-cluster 1..8).
pub(super) fn swapoff(rows: &[SwapoffRow]) -> Verdict {
    let time = |policy: &str, pc: u32| {
        rows.iter()
            .find(|r| r.policy == policy && r.page_cluster == pc)
            .map(|r| r.swapoff_s)
            .unwrap_or(f64::NAN)
    };
    let published = SCALING_PRE_5_8_PC3_S / FIXED_PC3_S;
    let simulated = time("scaling-pre-5.8", 3) / time("fixed", 3);
    let min_ratio_3_5 =
        (3..=5).map(|pc| time("scaling-pre-5.8", pc) / time("fixed", pc)).fold(f64::INFINITY, f64::min);
    let best_fixed = (1..=8).min_by(|&a, &b| time("fixed", a).total_cmp(&time("fixed", b))).unwrap_or(0);
    let old = (1..=8).map(|pc| time("scaling-pre-5.8", pc));
    let (old_min, old_max) = old.fold((f64::INFINITY, 0f64), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let current3 = time("scaling", 3);
    let direction_matches = simulated > 1.0 && current3 < time("scaling-pre-5.8", 3);
    let checks = vec![
        check(
            "scaling-pre-5.8",
            "flat over page-cluster 1-8: slowest / fastest",
            old_max / old_min,
            SCALING_PRE_5_8_RANGE_S.1 / SCALING_PRE_5_8_RANGE_S.0,
            Tolerance::AtMost,
        ),
        check(
            "scaling",
            "at page-cluster 3, faster than pre-5.8 scaling by",
            time("scaling-pre-5.8", 3) / current3,
            SCALING_PRE_5_8_PC3_S / SCALING_CREDITED_PC3_S,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "fixed",
            "at page-cluster 3, faster than pre-5.8 scaling by",
            simulated,
            published,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "fixed",
            "minimum at page-cluster",
            f64::from(best_fixed),
            f64::from(FIXED_MINIMUM_PAGE_CLUSTER),
            Tolerance::Absolute(MINIMUM_TOLERANCE, "page-cluster"),
        ),
    ];
    let text = format!(
        "fixed readahead is {simulated:.2}x faster than pre-5.8 scaling at page-cluster 3 (published {published:.2}x); \
         at least {min_ratio_3_5:.2}x over page-cluster 3-5; old scaling spans {old_min:.1}-{old_max:.1} s \
         (published {}-{} s); credited scaling at page-cluster 3 takes {current3:.2} s (published \
         {SCALING_CREDITED_PC3_S} s); fixed is fastest at page-cluster {best_fixed} (published \
         {FIXED_MINIMUM_PAGE_CLUSTER}); vma: nothing published, not judged; absolute times are not judged",
        SCALING_PRE_5_8_RANGE_S.0, SCALING_PRE_5_8_RANGE_S.1,
    );
    Verdict {
        metric: "swapoff time, pre-5.8 scaling / fixed, page-cluster 3".into(),
        simulated: round3(simulated),
        published: round3(published),
        direction_matches,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text,
        details: vec![
            ("min_ratio_page_cluster_3_to_5".into(), round3(min_ratio_3_5)),
            ("best_fixed_page_cluster".into(), f64::from(best_fixed)),
            ("scaling_credited_page_cluster_3_s".into(), current3),
            ("scaling_pre_5_8_min_s".into(), old_min),
            ("scaling_pre_5_8_max_s".into(), old_max),
        ],
    }
}

/// The plug-merge verdict from the read dispatches per MiB and the swap-in throughput
/// (MiB per simulated second), each without and with the plug.
pub(super) fn plug(per_mib: [f64; 2], throughput: [f64; 2]) -> Verdict {
    let published = PLUG_OFF_DISPATCHES_PER_MIB / PLUG_ON_DISPATCHES_PER_MIB;
    let simulated = per_mib[0] / per_mib[1];
    let gain = throughput[1] / throughput[0] - 1.0;
    let checks = vec![
        check(
            "dispatches",
            "read dispatches per MiB cut by",
            simulated,
            published,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "throughput",
            "swap-in throughput gain",
            gain,
            PLUG_THROUGHPUT_GAIN.0,
            Tolerance::PercentRange(PLUG_THROUGHPUT_GAIN.0, PLUG_THROUGHPUT_GAIN.1),
        ),
    ];
    Verdict {
        metric: "read dispatches per MiB, plug off / plug on, all 16 disks".into(),
        simulated: round3(simulated),
        published: round3(published),
        direction_matches: simulated > 1.0 && gain > 0.0,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text: format!(
            "plugging cuts read dispatches per MiB {simulated:.2}x (published {published:.2}x) and changes \
             swap-in throughput by {:+.0}% (published +{:.0}% to +{:.0}%)",
            gain * 100.0,
            PLUG_THROUGHPUT_GAIN.0 * 100.0,
            PLUG_THROUGHPUT_GAIN.1 * 100.0
        ),
        details: vec![("throughput_gain".into(), round3(gain))],
    }
}

/// The mthp-swapin verdict from its rows (classic "order0", "kernel", "throttled", and
/// MGLRU "kernel").
///
/// Judged: how many times fewer 16 kB swap-ins the throttle leaves than the kernel's
/// policy, and the throttled run's pswpin as a fraction of the kernel's; MGLRU's pswpin
/// and 16 kB swap-ins as multiples of the classic LRU's (both without the throttle);
/// each within ±25 % of the published ratio. The direction also requires the published
/// order, MGLRU above classic above classic with the throttle in both pswpin and 16 kB
/// swap-ins, `order0` to swap in no large folio, and every run to finish without an OOM
/// kill. pswpout and wall time are reported beside the published ratios, not judged: the
/// publication's wall times are within 0.2 % of each other (4 % for MGLRU), and the
/// absolute speed of the model's zram and CPU is this machine's rather than the arm64
/// build's.
pub(super) fn mthp(rows: &[MthpRow]) -> Verdict {
    // "mglru" names MGLRU's run; the others are the classic LRU's swap-in policies.
    let row = |name: &str| {
        rows.iter().find(|r| {
            if name == "mglru" {
                r.lru == "mglru"
            } else {
                r.lru == "classic" && r.swapin == name
            }
        })
    };
    let get = |name: &str, f: fn(&MthpRow) -> f64| row(name).map(f).unwrap_or(f64::NAN);
    let mglru_pswpin = get("mglru", |r| r.pswpin as f64) / get("kernel", |r| r.pswpin as f64);
    let mglru_swpin =
        get("mglru", |r| r.swpin_16k as f64) / get("kernel", |r| r.swpin_16k as f64).max(f64::MIN_POSITIVE);
    let mglru_pswpout = get("mglru", |r| r.pswpout as f64) / get("kernel", |r| r.pswpout as f64);
    let ordered =
        |f: fn(&MthpRow) -> f64| get("mglru", f) > get("kernel", f) && get("kernel", f) > get("throttled", f);
    let mglru_order = ordered(|r| r.pswpin as f64) && ordered(|r| r.swpin_16k as f64);
    let swpin_cut = get("kernel", |r| r.swpin_16k as f64)
        / get("throttled", |r| r.swpin_16k as f64).max(f64::MIN_POSITIVE);
    let pswpin_ratio = get("throttled", |r| r.pswpin as f64) / get("kernel", |r| r.pswpin as f64);
    let pswpout_ratio = get("throttled", |r| r.pswpout as f64) / get("kernel", |r| r.pswpout as f64);
    let wall_ratio = get("throttled", |r| r.wall_s) / get("kernel", |r| r.wall_s);
    let order0_large = get("order0", |r| r.swpin_16k as f64);
    let published_cut = MTHP_KERNEL_SWPIN_16K / MTHP_THROTTLED_SWPIN_16K;
    let published_pswpin = MTHP_THROTTLED_PSWPIN / MTHP_KERNEL_PSWPIN;
    let published_pswpout = MTHP_THROTTLED_PSWPOUT / MTHP_KERNEL_PSWPOUT;
    let published_wall = MTHP_THROTTLED_WALL_S / MTHP_KERNEL_WALL_S;
    let killed: Vec<String> = rows
        .iter()
        .filter(|r| r.jobs_oom_killed > 0 || r.outcome != "completed")
        .map(|r| format!("{} {}: {} ({} jobs OOM-killed)", r.lru, r.swapin, r.outcome, r.jobs_oom_killed))
        .collect();
    let checks = vec![
        check(
            "throttled",
            "16 kB swap-ins cut against kernel by",
            swpin_cut,
            published_cut,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "throttled",
            "pswpin as a fraction of kernel's",
            pswpin_ratio,
            published_pswpin,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "mglru",
            "pswpin as a multiple of classic's",
            mglru_pswpin,
            MTHP_MGLRU_PSWPIN / MTHP_KERNEL_PSWPIN,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "mglru",
            "16 kB swap-ins as a multiple of classic's",
            mglru_swpin,
            MTHP_MGLRU_SWPIN_16K / MTHP_KERNEL_SWPIN_16K,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
    ];
    let direction_matches =
        swpin_cut > 1.0 && pswpin_ratio < 1.0 && mglru_order && order0_large == 0.0 && killed.is_empty();
    let oom_text = if killed.is_empty() {
        "no run was OOM-killed".to_string()
    } else {
        format!("OOM kills: {}", killed.join("; "))
    };
    let order_text = if mglru_order {
        "in the published order (MGLRU > classic > classic throttled, in pswpin and in 16 kB swap-ins)"
    } else {
        "NOT in the published order MGLRU > classic > classic throttled"
    };
    let text = format!(
        "throttling cuts 16 kB swap-ins {swpin_cut:.2}x against kernel (published {published_cut:.2}x) and \
         changes pswpin by {:+.0}% (published {:+.0}%); MGLRU swaps in {mglru_pswpin:.2}x classic's pages \
         (published {:.2}x) and {mglru_swpin:.2}x its 16 kB folios (published {:.2}x), {order_text}; order0 \
         swaps in {order0_large} 16 kB folios (expected 0); not judged: pswpout {:+.0}% (published {:+.0}%), \
         MGLRU's pswpout {mglru_pswpout:.2}x classic's (published {:.2}x), build wall time {:+.1}% (published \
         {:+.1}%); {oom_text}",
        (pswpin_ratio - 1.0) * 100.0,
        (published_pswpin - 1.0) * 100.0,
        MTHP_MGLRU_PSWPIN / MTHP_KERNEL_PSWPIN,
        MTHP_MGLRU_SWPIN_16K / MTHP_KERNEL_SWPIN_16K,
        (pswpout_ratio - 1.0) * 100.0,
        (published_pswpout - 1.0) * 100.0,
        MTHP_MGLRU_PSWPOUT / MTHP_KERNEL_PSWPOUT,
        (wall_ratio - 1.0) * 100.0,
        (published_wall - 1.0) * 100.0,
    );
    Verdict {
        metric: "16 kB swap-ins, kernel / throttled".into(),
        simulated: round3(swpin_cut),
        published: round3(published_cut),
        direction_matches,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text,
        details: vec![
            ("pswpin_throttled_over_kernel".into(), round3(pswpin_ratio)),
            ("pswpout_throttled_over_kernel".into(), round3(pswpout_ratio)),
            ("wall_throttled_over_kernel".into(), round3(wall_ratio)),
            ("order0_swpin_16k".into(), order0_large),
            ("pswpin_mglru_over_classic".into(), round3(mglru_pswpin)),
            ("swpin_16k_mglru_over_classic".into(), round3(mglru_swpin)),
            ("pswpout_mglru_over_classic".into(), round3(mglru_pswpout)),
        ],
    }
}

/// The zswap-second-chance verdict from its rows ("off", "no-shrinker", "decay",
/// "second-chance").
///
/// Judged, second chance against decay over the builds both finished: the disk swap-ins
/// (`pswpin`) as a fraction of decay's, against the published 0.36 (the cover letter's
/// run) to 0.42 (the averaged runs); and the cut in the build's wall time, against the
/// published 7.2 % to 10.3 %; each range widened by ±25 % at both ends. The direction
/// requires fewer disk swap-ins and a shorter build under second chance, and every build
/// of the two rows to finish without an OOM kill. The rows without zswap and without the
/// shrinker have nothing published to compare with; they are reported, as are the
/// per-build ratios, and not judged.
pub(super) fn zswap(rows: &[ZswapRow]) -> Verdict {
    let row = |name: &str| rows.iter().find(|r| r.zswap == name);
    // Builds of one seed that finished under both protections, decay's first.
    let mut pairs: Vec<(&ZswapBuild, &ZswapBuild)> = Vec::new();
    if let (Some(decay), Some(chance)) = (row("decay"), row("second-chance")) {
        for d in decay.builds.iter().filter(|b| b.finished) {
            if let Some(c) = chance.builds.iter().find(|c| c.seed == d.seed && c.finished) {
                pairs.push((d, c));
            }
        }
    }
    let ratio = |f: fn(&ZswapBuild) -> f64| {
        let (d, c) = pairs.iter().fold((0.0, 0.0), |(d, c), (bd, bc)| (d + f(bd), c + f(bc)));
        c / d
    };
    let pswpin_ratio = ratio(|b| b.figures.pswpin as f64);
    let wall_ratio = ratio(|b| b.figures.wall_s);
    let wall_cut = 1.0 - wall_ratio;
    let zswpwb_ratio = ratio(|b| b.figures.zswpwb as f64);
    let scanned_ratio = ratio(|b| b.figures.shrinker_scanned as f64);
    let published_pswpin = ZSWAP_SECOND_CHANCE_PSWPIN / ZSWAP_DECAY_PSWPIN;
    let other_pswpin = 1.0 - ZSWAP_OTHER_RUN_SWAPIN_CUT;
    let published_cut = 1.0 - ZSWAP_SECOND_CHANCE_REAL_S / ZSWAP_DECAY_REAL_S;
    let troubled = |r: &ZswapRow| r.figures.jobs_oom_killed > 0 || r.outcome != "completed";
    let killed: Vec<String> = rows
        .iter()
        .filter(|r| troubled(r))
        .map(|r| format!("{}: {} ({} jobs OOM-killed)", r.zswap, r.outcome, r.figures.jobs_oom_killed))
        .collect();
    let judged_troubled = ["decay", "second-chance"]
        .iter()
        .any(|name| !matches!(row(name), Some(r) if !troubled(r) && !r.builds.is_empty()));
    let checks = vec![
        check(
            "second-chance",
            "pswpin as a fraction of decay's",
            pswpin_ratio,
            published_pswpin,
            Tolerance::RelativeRange {
                low: other_pswpin,
                high: published_pswpin,
                rel: RATIO_TOLERANCE,
                percent: false,
            },
        ),
        check(
            "second-chance",
            "build wall time cut against decay by",
            wall_cut,
            published_cut,
            Tolerance::RelativeRange {
                low: published_cut,
                high: ZSWAP_OTHER_RUN_TIME_CUT,
                rel: RATIO_TOLERANCE,
                percent: true,
            },
        ),
    ];
    let direction_matches = pswpin_ratio < 1.0 && wall_ratio < 1.0 && !judged_troubled;
    let oom_text = if killed.is_empty() {
        "every build completed without an OOM kill".to_string()
    } else {
        format!("not every build completed: {}", killed.join("; "))
    };
    let per_build: Vec<(u64, f64, f64)> = pairs
        .iter()
        .map(|(d, c)| {
            (d.seed, c.figures.pswpin as f64 / d.figures.pswpin as f64, c.figures.wall_s / d.figures.wall_s)
        })
        .collect();
    let spread = |pick: fn(&(u64, f64, f64)) -> f64| {
        per_build
            .iter()
            .map(pick)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
    };
    let (pswpin_lo, pswpin_hi) = spread(|b| b.1);
    let (wall_lo, wall_hi) = spread(|b| b.2);
    let text = format!(
        "second chance leaves {pswpin_ratio:.2} of decay's disk swap-ins (published {other_pswpin:.2} to \
         {published_pswpin:.2}) and changes the build's wall time by {:+.1}% (published {:+.1}% to {:+.1}%), \
         over {} build{}; build by build the pswpin ratio spans {pswpin_lo:.2}-{pswpin_hi:.2} and the \
         wall-time ratio {wall_lo:.2}-{wall_hi:.2}; not judged: zswap writeback (zswpwb) {:+.0}%, entries \
         the shrinker visited {:+.0}%, and the rows without zswap and without the shrinker; {oom_text}",
        -wall_cut * 100.0,
        -published_cut * 100.0,
        -ZSWAP_OTHER_RUN_TIME_CUT * 100.0,
        pairs.len(),
        if pairs.len() == 1 { "" } else { "s" },
        (zswpwb_ratio - 1.0) * 100.0,
        (scanned_ratio - 1.0) * 100.0,
    );
    let mut details = vec![
        ("builds_compared".into(), pairs.len() as f64),
        ("wall_second_chance_over_decay".into(), round3(wall_ratio)),
        ("zswpwb_second_chance_over_decay".into(), round3(zswpwb_ratio)),
        ("shrinker_scanned_second_chance_over_decay".into(), round3(scanned_ratio)),
    ];
    for (seed, pswpin, wall) in &per_build {
        details.push((format!("pswpin_second_chance_over_decay_seed{seed}"), round3(*pswpin)));
        details.push((format!("wall_second_chance_over_decay_seed{seed}"), round3(*wall)));
    }
    Verdict {
        metric: "disk swap-ins (pswpin), second-chance / decay".into(),
        simulated: round3(pswpin_ratio),
        published: round3(published_pswpin),
        direction_matches,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text,
        details,
    }
}

/// hibernate-reclaim's published times: (kernel, image_size, hibernate s, resume s).
const HIBERNATE_PUBLISHED: [(&str, &str, f64, f64); 4] = [
    ("vanilla", "default", 51.56, 26.34),
    ("mm_reclaim", "default", 4.19, 5.01),
    ("vanilla", "0", 73.22, 5.32),
    ("mm_reclaim", "0", 5.36, 5.26),
];
/// The issue's target: every simulated time within this fraction of the published one.
const HIBERNATE_TOLERANCE: f64 = 0.30;
/// Two published times closer than this fraction are a tie: the ordering check skips them
/// (the four resume times of the reclaimed guests differ by a few percent, within the
/// spread of ten runs).
const HIBERNATE_TIE: f64 = 0.10;

/// The hibernate-reclaim verdict: each published time within 30 %, and every pair of
/// published times that differ by more than 10 % ordered the same way.
pub(super) fn hibernate(rows: &[HibernateRow]) -> Verdict {
    let find = |kernel: &str, image: &str| rows.iter().find(|r| r.kernel == kernel && r.image_size == image);
    let mut checks = Vec::new();
    // (name, simulated, published) of every time, for the ordering.
    let mut times: Vec<(String, f64, f64)> = Vec::new();
    for &(kernel, image, hibernate_s, resume_s) in &HIBERNATE_PUBLISHED {
        let Some(row) = find(kernel, image) else { continue };
        let curve = format!("{kernel}, image_size {image}");
        let tolerance = || Tolerance::Relative(HIBERNATE_TOLERANCE);
        checks.push(check(&curve, "hibernate s", row.hibernate_s, hibernate_s, tolerance()));
        checks.push(check(&curve, "resume s", row.resume_s, resume_s, tolerance()));
        times.push((format!("{curve} hibernate"), row.hibernate_s, hibernate_s));
        times.push((format!("{curve} resume"), row.resume_s, resume_s));
    }
    let mut misordered = Vec::new();
    let mut n_pairs = 0;
    for (i, a) in times.iter().enumerate() {
        for b in &times[i + 1..] {
            let (hi, lo) = if a.2 >= b.2 { (a, b) } else { (b, a) };
            if hi.2 < lo.2 * (1.0 + HIBERNATE_TIE) {
                continue;
            }
            n_pairs += 1;
            if hi.1 <= lo.1 {
                misordered.push(format!("{} ({:.2} s) not longer than {} ({:.2} s)", hi.0, hi.1, lo.0, lo.1));
            }
        }
    }
    let speedup = |image: &str| match (find("vanilla", image), find("mm_reclaim", image)) {
        (Some(v), Some(m)) if m.hibernate_s > 0.0 => v.hibernate_s / m.hibernate_s,
        _ => f64::NAN,
    };
    let simulated = speedup("default");
    let published = HIBERNATE_PUBLISHED[0].2 / HIBERNATE_PUBLISHED[1].2;
    let complete = times.len() == 2 * HIBERNATE_PUBLISHED.len();
    let direction_matches = complete && misordered.is_empty();
    let reproduced = direction_matches && checks.iter().all(|c| c.reproduced);
    let order_text = if !complete {
        "some rows are missing".to_string()
    } else if misordered.is_empty() {
        format!("all {n_pairs} pairs of clearly different published times keep their order")
    } else {
        format!("{} of {n_pairs} pairs change order: {}", misordered.len(), misordered.join("; "))
    };
    let text = format!(
        "opportunistic reclaim makes hibernation {simulated:.1}x faster with the default image_size \
         (published {published:.1}x) and {:.1}x with image_size 0 (published {:.1}x); {order_text}",
        speedup("0"),
        HIBERNATE_PUBLISHED[2].2 / HIBERNATE_PUBLISHED[3].2,
    );
    Verdict {
        metric: "vanilla hibernate time over mm_reclaim's, image_size default".to_string(),
        simulated: round3(simulated),
        published: round3(published),
        direction_matches,
        reproduced,
        checks,
        text,
        details: vec![
            ("pairs compared".to_string(), n_pairs as f64),
            ("pairs misordered".to_string(), misordered.len() as f64),
        ],
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Rows with these swapoff times for page-cluster 1..8, per policy.
    fn rows(times: [(&'static str, [f64; 8]); 4]) -> Vec<SwapoffRow> {
        let mut rows = Vec::new();
        for (policy, curve) in times {
            for (pc, swapoff_s) in (1..=8).zip(curve) {
                rows.push(SwapoffRow {
                    policy,
                    page_cluster: pc,
                    swapoff_s,
                    pswpin: 1,
                    read_requests: 1,
                    swap_ra: 0,
                    swap_ra_hit: 0,
                });
            }
        }
        rows
    }

    /// Renders a verdict's checks one per line, then whether it is reproduced.
    fn check_verdict(verdict: &Verdict, expect: Expect) {
        let mut actual: String = verdict.checks.iter().map(|c| format!("{}\n", c.text)).collect();
        actual.push_str(&format!("reproduced: {}\n", verdict.reproduced));
        expect.assert_eq(&actual);
    }

    #[test]
    fn the_published_swapoff_figures_pass_every_check() {
        // The published fixed curve; pre-5.8 scaling anywhere in its published range with
        // 22.09 s at page-cluster 3; credited scaling 12.19 s at page-cluster 3.
        let verdict = swapoff(&rows([
            ("scaling-pre-5.8", [21.5, 28.3, 22.09, 24.0, 23.0, 25.0, 22.5, 26.0]),
            ("scaling", [21.5, 15.0, 12.19, 11.0, 10.5, 10.4, 10.3, 10.3]),
            ("fixed", [21.25, 12.66, 8.77, 7.60, 7.75, 8.32, 9.40, 8.93]),
            ("vma", [20.0; 8]),
        ]));
        check_verdict(
            &verdict,
            expect![[r#"
                scaling-pre-5.8: reproduced: flat over page-cluster 1-8: slowest / fastest 1.32, published 1.32 (tolerance: at most the published)
                scaling: reproduced: at page-cluster 3, faster than pre-5.8 scaling by 1.81, published 1.81 (tolerance ±25 %)
                fixed: reproduced: at page-cluster 3, faster than pre-5.8 scaling by 2.52, published 2.52 (tolerance ±25 %)
                fixed: reproduced: minimum at page-cluster 4, published 4 (tolerance ±1 page-cluster)
                reproduced: true
            "#]],
        );
        assert!(verdict.direction_matches);
    }

    /// The full-scale result before this check existed: the fixed curve falls all the way
    /// to page-cluster 8, and pre-5.8 scaling takes 35.9 s everywhere.
    #[test]
    fn a_fixed_curve_lowest_at_page_cluster_8_is_not_reproduced() {
        let verdict = swapoff(&rows([
            ("scaling-pre-5.8", [35.90; 8]),
            ("scaling", [35.90, 17.52, 17.52, 15.68, 14.76, 14.49, 14.46, 14.45]),
            ("fixed", [24.87, 17.52, 13.84, 12.00, 11.47, 11.41, 11.38, 11.37]),
            ("vma", [22.89, 18.23, 14.96, 13.36, 12.57, 12.57, 12.57, 12.57]),
        ]));
        check_verdict(
            &verdict,
            expect![[r#"
                scaling-pre-5.8: reproduced: flat over page-cluster 1-8: slowest / fastest 1.00, published 1.32 (tolerance: at most the published)
                scaling: reproduced: at page-cluster 3, faster than pre-5.8 scaling by 2.05, published 1.81 (tolerance ±25 %)
                fixed: reproduced: at page-cluster 3, faster than pre-5.8 scaling by 2.59, published 2.52 (tolerance ±25 %)
                fixed: not reproduced: minimum at page-cluster 8, published 4 (tolerance ±1 page-cluster)
                reproduced: false
            "#]],
        );
        // The direction still matches: fixed beats pre-5.8 scaling, crediting hits helps.
        assert!(verdict.direction_matches);
    }

    #[test]
    fn a_ratio_outside_a_quarter_of_the_published_one_is_not_reproduced() {
        // 22.09 s / 5.5 s = 4.02x at page-cluster 3, 59 % above the published 2.52x; the
        // curve's minimum moves to page-cluster 3, still within one of the published 4.
        let verdict = swapoff(&rows([
            ("scaling-pre-5.8", [22.09; 8]),
            ("scaling", [12.19; 8]),
            ("fixed", [21.25, 12.66, 5.5, 7.60, 7.75, 8.32, 9.40, 8.93]),
            ("vma", [20.0; 8]),
        ]));
        let failed: Vec<&str> =
            verdict.checks.iter().filter(|c| !c.reproduced).map(|c| c.text.as_str()).collect();
        assert_eq!(
            failed,
            ["fixed: not reproduced: at page-cluster 3, faster than pre-5.8 scaling by 4.02, published 2.52 \
              (tolerance ±25 %)"]
        );
        assert!(!verdict.reproduced);
    }

    #[test]
    fn plug_merge_is_judged_on_the_dispatch_cut_and_the_throughput_range() {
        // Read dispatches per MiB and MiB/s, plug off then on.
        check_verdict(
            &plug([255.9, 70.3], [11.89, 15.45]),
            expect![[r#"
                dispatches: reproduced: read dispatches per MiB cut by 3.64, published 3.32 (tolerance ±25 %)
                throughput: reproduced: swap-in throughput gain +30 %, published +10 % to +40 % (tolerance: the published range)
                reproduced: true
            "#]],
        );
        check_verdict(
            &plug([255.9, 70.3], [11.89, 18.0]),
            expect![[r#"
                dispatches: reproduced: read dispatches per MiB cut by 3.64, published 3.32 (tolerance ±25 %)
                throughput: not reproduced: swap-in throughput gain +51 %, published +10 % to +40 % (tolerance: the published range)
                reproduced: false
            "#]],
        );
    }

    /// A row with these counters and a completed run.
    fn mthp_row(swapin: &'static str, pswpin: u64, pswpout: u64, swpin_16k: u64) -> MthpRow {
        MthpRow {
            lru: if swapin == "mglru" { "mglru" } else { "classic" },
            swapin: if swapin == "mglru" { "kernel" } else { swapin },
            pswpin,
            pswpout,
            swpout_16k: 0,
            swpin_16k,
            swpin_fallback_charge_16k: 0,
            wall_s: 1.0,
            jobs_exited: 60,
            jobs_oom_killed: 0,
            outcome: "completed".into(),
        }
    }

    #[test]
    fn the_published_mthp_figures_pass_and_an_oom_kill_breaks_the_direction() {
        let mut rows = vec![
            mthp_row("order0", 300_000, 1_300_000, 0),
            mthp_row("kernel", 474_036, 1_434_853, 106_333),
            mthp_row("throttled", 294_050, 1_265_556, 22_899),
            mthp_row("mglru", 1_286_081, 3_147_936, 286_881),
        ];
        check_verdict(
            &mthp(&rows),
            expect![[r#"
                throttled: reproduced: 16 kB swap-ins cut against kernel by 4.64, published 4.64 (tolerance ±25 %)
                throttled: reproduced: pswpin as a fraction of kernel's 0.62, published 0.62 (tolerance ±25 %)
                mglru: reproduced: pswpin as a multiple of classic's 2.71, published 2.71 (tolerance ±25 %)
                mglru: reproduced: 16 kB swap-ins as a multiple of classic's 2.70, published 2.70 (tolerance ±25 %)
                reproduced: true
            "#]],
        );
        assert!(mthp(&rows).direction_matches);
        rows[2].jobs_oom_killed = 1;
        let verdict = mthp(&rows);
        assert!(!verdict.direction_matches);
        assert!(
            verdict.text.contains("classic throttled: completed (1 jobs OOM-killed)"),
            "{}",
            verdict.text
        );
        // MGLRU swapping in less than classic breaks the published order.
        rows[2].jobs_oom_killed = 0;
        rows[3].pswpin = 400_000;
        let verdict = mthp(&rows);
        assert!(!verdict.direction_matches);
        assert!(verdict.text.contains("NOT in the published order"), "{}", verdict.text);
    }

    /// A finished build of `seed` with these disk swap-ins and wall time.
    fn zswap_build(seed: u64, pswpin: u64, wall_s: f64) -> ZswapBuild {
        ZswapBuild {
            seed,
            finished: true,
            figures: crate::experiment::ZswapFigures {
                pswpin,
                zswpwb: pswpin * 3,
                shrinker_scanned: pswpin * 4,
                wall_s,
                ..crate::experiment::ZswapFigures::default()
            },
            outcome: "completed".into(),
        }
    }

    /// The four rows, decay and second chance from these builds.
    fn zswap_rows(decay: Vec<ZswapBuild>, chance: Vec<ZswapBuild>) -> Vec<ZswapRow> {
        vec![
            super::super::zswap_row("off", vec![zswap_build(1, 50_000, 300.0)]),
            super::super::zswap_row("no-shrinker", vec![zswap_build(1, 0, 200.0)]),
            super::super::zswap_row("decay", decay),
            super::super::zswap_row("second-chance", chance),
        ]
    }

    #[test]
    fn the_published_zswap_figures_pass_both_checks() {
        // The averaged runs, then the cover letter's run (64.12 % and 10.32 % less).
        let verdict = zswap(&zswap_rows(
            vec![zswap_build(1, 227_300, 263.89), zswap_build(2, 100_000, 100.0)],
            vec![zswap_build(1, 94_663, 244.85), zswap_build(2, 35_880, 89.68)],
        ));
        check_verdict(
            &verdict,
            expect![[r#"
                second-chance: reproduced: pswpin as a fraction of decay's 0.40, published 0.36 to 0.42 (tolerance ±25 %)
                second-chance: reproduced: build wall time cut against decay by 8.1 %, published 7.2 % to 10.3 % (tolerance ±25 %)
                reproduced: true
            "#]],
        );
        assert!(verdict.direction_matches);
        assert_eq!(verdict.checks[0].published_max, Some(0.416));
    }

    #[test]
    fn a_small_swapin_cut_is_not_reproduced_and_a_slower_build_breaks_the_direction() {
        // 18 % fewer disk swap-ins is outside 0.27..0.52; a 6 % cut in time is inside
        // 5.4 %..12.9 %.
        let verdict =
            zswap(&zswap_rows(vec![zswap_build(1, 100_000, 10.0)], vec![zswap_build(1, 82_000, 9.4)]));
        check_verdict(
            &verdict,
            expect![[r#"
                second-chance: not reproduced: pswpin as a fraction of decay's 0.82, published 0.36 to 0.42 (tolerance ±25 %)
                second-chance: reproduced: build wall time cut against decay by 6.0 %, published 7.2 % to 10.3 % (tolerance ±25 %)
                reproduced: false
            "#]],
        );
        assert!(verdict.direction_matches);
        // A ratio of times of 1.05 is within ±25 % of 0.93, but it is a slower build: as a
        // cut it is -5 %, far outside the published range.
        let verdict =
            zswap(&zswap_rows(vec![zswap_build(1, 100_000, 10.0)], vec![zswap_build(1, 40_000, 10.5)]));
        assert!(verdict.checks[0].reproduced);
        assert!(!verdict.checks[1].reproduced, "{}", verdict.checks[1].text);
        assert!(!verdict.direction_matches);
    }

    #[test]
    fn zswap_builds_are_compared_seed_by_seed_and_a_failed_build_breaks_the_direction() {
        let mut failed =
            ZswapBuild { seed: 2, outcome: "simulator panic: double free".into(), ..ZswapBuild::default() };
        let rows = zswap_rows(
            vec![zswap_build(1, 100_000, 10.0), zswap_build(2, 500_000, 50.0)],
            vec![zswap_build(1, 40_000, 9.2), failed.clone()],
        );
        // Seed 2 finished under decay only, so only seed 1 is compared.
        let verdict = zswap(&rows);
        assert_eq!(verdict.simulated, 0.4);
        assert!(verdict.checks.iter().all(|c| c.reproduced));
        assert!(!verdict.direction_matches, "a judged row lost a build");
        assert!(
            verdict.text.contains("second-chance: seed 2: simulator panic: double free"),
            "{}",
            verdict.text
        );
        assert_eq!(rows[3].builds_finished, 1);
        assert_eq!(rows[3].figures.pswpin, 40_000, "the mean leaves the failed build out");
        // An OOM kill in a judged row breaks the direction too; one in the row without
        // the shrinker does not.
        failed = zswap_build(2, 200_000, 45.0);
        failed.figures.jobs_oom_killed = 1;
        let rows = zswap_rows(vec![zswap_build(1, 100_000, 10.0)], vec![zswap_build(1, 40_000, 9.2), failed]);
        assert!(!zswap(&rows).direction_matches);
        let mut rows = zswap_rows(vec![zswap_build(1, 100_000, 10.0)], vec![zswap_build(1, 40_000, 9.2)]);
        let mut killed = zswap_build(1, 0, 1.0);
        killed.figures.jobs_oom_killed = 30;
        rows[1] = super::super::zswap_row("no-shrinker", vec![killed]);
        let verdict = zswap(&rows);
        assert!(verdict.direction_matches);
        assert!(verdict.text.contains("no-shrinker: completed (30 jobs OOM-killed)"), "{}", verdict.text);
    }
}
