//! Counters and distributions, named as the kernel and blkparse name them.
//!
//! `Vmstat` fields are spelled exactly as in /proc/vmstat so that a report can be compared
//! line by line with a real machine. Block figures use the blkparse per-device summary
//! vocabulary (Queued, Merges, Dispatches, Completed, unplugs).

use hdrhistogram::Histogram;
use serde::Serialize;

/// Declares [`Vmstat`] from one list of counter names, with the field-wise difference
/// that operation reports need, so that the two can never disagree.
macro_rules! vmstat_counters {
    ($($name:ident),* $(,)?) => {
        /// Event counters with /proc/vmstat names.
        ///
        /// Only counters the model produces are here: a counter of a mechanism that is not
        /// modelled yet (kswapd's `*_wmark_hit_quickly`, file-page counters) is absent
        /// rather than reported as a real zero, and joins the list with the model that
        /// moves it.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
        pub struct Vmstat {
            $(pub $name: u64,)*
        }

        impl Vmstat {
            /// Counts between `earlier` and `self` (field by field).
            pub fn since(&self, earlier: &Vmstat) -> Vmstat {
                Vmstat { $($name: self.$name - earlier.$name,)* }
            }

            /// `self` and `other` added field by field.
            pub fn plus(&self, other: &Vmstat) -> Vmstat {
                Vmstat { $($name: self.$name + other.$name,)* }
            }

            /// Every counter as (its /proc/vmstat name, its value), in the declared order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}

vmstat_counters!(
    pgfault,
    pgmajfault,
    pswpin,
    pswpout,
    pgpgin,
    pgpgout,
    swap_ra,
    swap_ra_hit,
    pgscan_kswapd,
    pgscan_direct,
    pgsteal_kswapd,
    pgsteal_direct,
    pgscan_anon,
    pgsteal_anon,
    pgrefill,
    pgactivate,
    pgdeactivate,
    pgrotated,
    workingset_refault_anon,
    workingset_activate_anon,
    workingset_restore_anon,
    allocstall_normal,
    pageoutrun,
    oom_kill,
    thp_swpout,
    thp_swpout_fallback,
    swpin_zero,
    swpout_zero,
    zswpin,
    zswpout,
    zswpwb,
);

/// Memory state at the end of the run, with /proc/vmstat and /proc/meminfo names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Gauges {
    pub nr_free_pages: u64,
    pub nr_inactive_anon: u64,
    pub nr_active_anon: u64,
    pub nr_anon_pages: u64,
    pub nr_swapcached: u64,
    pub nr_writeback: u64,
    /// Resident pages charged to the memory cgroup.
    pub memcg_usage_pages: u64,
    /// Pages of the tasks' address spaces that are resident (VmRSS / 4 KiB).
    pub rss_pages: u64,
    /// Pages of the tasks' address spaces that are swapped out (VmSwap / 4 KiB).
    pub swap_pages: u64,
    /// Allocated swap slots over all devices, swap-cache-only slots included.
    pub swap_slots_used: u64,
}

/// Samples a [`LatencyHistogram`] holds before adding them to its counts.
const PENDING_MAX: usize = 256;

/// A latency distribution in nanoseconds, summarised for reports.
///
/// The counts are laid out as an HDR histogram of values from 1 ns to one hour at three
/// significant digits lays out its counts (`hdrhistogram`'s `Histogram::new_with_bounds(1,
/// 3_600_000_000_000, 3)`), and the summary is computed by that crate from them. Only
/// recording is done here: finding a value's count is a few shifts, where the crate's
/// general `record` (any bounds, any precision, resizing) took about sixty instructions,
/// and the count vector grows only as far as the largest latency seen, so that a
/// simulation's histograms stay small to clone when it is forked.
///
/// Samples are added to the counts a batch at a time. The counts are mostly out of the
/// host's cache between two faults, so adding one sample per fault waited on a memory load
/// each time; a batch's loads are independent and overlap. The order in which samples are
/// added changes no count, so the summary is the same.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    /// Samples per HDR index (see [`hdr_index`]), up to the largest index seen.
    counts: Vec<u64>,
    /// Samples not yet in `counts`, at most [`PENDING_MAX`].
    pending: Vec<u64>,
}

/// The largest latency kept; longer ones count as this (one hour).
const HDR_HIGHEST: u64 = 3_600_000_000_000;
/// log2 of half the values per power-of-two bucket: 2,048 values resolve three
/// significant digits (2 × 10³ ≤ 2¹¹).
const HDR_HALF_MAGNITUDE: u32 = 10;
/// Index of the first count past the histogram of [`HDR_HIGHEST`]: 33 half-buckets of 1,024.
const HDR_LEN: usize = 33 << HDR_HALF_MAGNITUDE;

/// Where an HDR histogram of values from 1 at three significant digits counts `value`
/// (1 ≤ value): bucket `b` holds the values of `2^(10 + b)` up to `2^(11 + b)` in steps of
/// `2^b`, after the 2,048 values below them one by one.
#[inline]
fn hdr_index(value: u64) -> usize {
    let bucket = 53 - (value | 2047).leading_zeros();
    let sub = value >> bucket;
    (((u64::from(bucket) + 1) << HDR_HALF_MAGNITUDE) + sub - (1 << HDR_HALF_MAGNITUDE)) as usize
}

/// The smallest value counted at `index` (the inverse of [`hdr_index`]).
fn hdr_value(index: usize) -> u64 {
    let half = 1u64 << HDR_HALF_MAGNITUDE;
    let i = index as u64;
    match (i >> HDR_HALF_MAGNITUDE).checked_sub(1) {
        Some(bucket) => ((i & (half - 1)) + half) << bucket,
        None => i & (half - 1),
    }
}

impl LatencyHistogram {
    /// Records one sample.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.pending.len() == PENDING_MAX {
            self.add_pending();
        }
        self.pending.push(ns);
    }

    /// Adds the pending samples to the counts. A sample of 0 counts as 1 ns, and one the
    /// histogram cannot hold as an hour, as `Histogram::saturating_record` does.
    #[inline(never)]
    fn add_pending(&mut self) {
        for &ns in &self.pending {
            let mut i = hdr_index(ns.max(1));
            if i >= HDR_LEN {
                i = hdr_index(HDR_HIGHEST);
            }
            if i >= self.counts.len() {
                self.counts.resize(i + 1, 0);
            }
            self.counts[i] += 1;
        }
        self.pending.clear();
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.pending.len() as u64
    }

    /// True when no sample was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Mean, percentiles and maximum in microseconds (zero when empty).
    pub fn summary(&self) -> LatencySummary {
        if self.is_empty() {
            return LatencySummary::default();
        }
        let mut h =
            Histogram::<u64>::new_with_bounds(1, HDR_HIGHEST, 3).expect("bounds and precision are valid");
        for (i, &n) in self.counts.iter().enumerate().filter(|&(_, &n)| n > 0) {
            h.record_n(hdr_value(i), n).expect("an index of the histogram's own layout");
        }
        // The samples still waiting, straight into the crate's histogram, as
        // `add_pending` would have counted them.
        for &ns in &self.pending {
            h.saturating_record(ns.max(1));
        }
        summarise(&h)
    }
}

/// The report's figures of a non-empty histogram of nanoseconds.
fn summarise(h: &Histogram<u64>) -> LatencySummary {
    let us = |ns: u64| round3(ns as f64 / 1000.0);
    LatencySummary {
        count: h.len(),
        mean_us: round3(h.mean() / 1000.0),
        p50_us: us(h.value_at_quantile(0.5)),
        p90_us: us(h.value_at_quantile(0.9)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

/// Percentiles of a [`LatencyHistogram`], in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// Rounds to three decimals so that reports print stable, readable numbers.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Per-direction request counters of one device, as blkparse totals them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DirStats {
    /// Bios that entered the block layer (Q).
    pub queued: u64,
    /// KiB in those bios.
    pub queued_kib: u64,
    /// Bios merged into an existing request, back (M) plus front (F).
    pub merges: u64,
    /// Of `merges`, the front merges.
    pub front_merges: u64,
    /// Requests issued to the driver (D).
    pub dispatches: u64,
    /// Requests completed (C).
    pub completed: u64,
    /// KiB in completed requests.
    pub completed_kib: u64,
    /// Sum of issue-to-completion times of completed requests, in nanoseconds (for means
    /// over a phase of a run).
    pub service_ns_total: u64,
}

impl DirStats {
    /// Counts between `earlier` and `self`.
    pub fn since(&self, earlier: &DirStats) -> DirStats {
        DirStats {
            queued: self.queued - earlier.queued,
            queued_kib: self.queued_kib - earlier.queued_kib,
            merges: self.merges - earlier.merges,
            front_merges: self.front_merges - earlier.front_merges,
            dispatches: self.dispatches - earlier.dispatches,
            completed: self.completed - earlier.completed,
            completed_kib: self.completed_kib - earlier.completed_kib,
            service_ns_total: self.service_ns_total - earlier.service_ns_total,
        }
    }

    /// Adds `other` into `self` (summing devices).
    pub fn add(&mut self, other: &DirStats) {
        self.queued += other.queued;
        self.queued_kib += other.queued_kib;
        self.merges += other.merges;
        self.front_merges += other.front_merges;
        self.dispatches += other.dispatches;
        self.completed += other.completed;
        self.completed_kib += other.completed_kib;
        self.service_ns_total += other.service_ns_total;
    }
}

/// Block figures summed over all devices, for the span of a timeline operation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BlockTotals {
    pub reads: DirStats,
    pub writes: DirStats,
    /// Plug flushes that dispatched requests, explicit and on sleep.
    pub unplugs: u64,
}

impl BlockTotals {
    /// Counts between `earlier` and `self`.
    pub fn since(&self, earlier: &BlockTotals) -> BlockTotals {
        BlockTotals {
            reads: self.reads.since(&earlier.reads),
            writes: self.writes.since(&earlier.writes),
            unplugs: self.unplugs - earlier.unplugs,
        }
    }
}

/// Block statistics of one swap device.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BlockStats {
    /// Device name as given in the scenario.
    pub device: String,
    /// Latency model in use.
    pub model: String,
    pub reads: DirStats,
    pub writes: DirStats,
    /// Explicit plug flushes that dispatched to this device (blkparse "IO unplugs").
    pub io_unplugs: u64,
    /// Flushes because the plugging task blocked (blkparse "Timer unplugs").
    pub timer_unplugs: u64,
    /// Requests by size: `request_kib[i]` counts requests of `4 << i` KiB or less (after
    /// the previous bucket), the last bucket holding everything larger.
    pub request_kib_histogram: Vec<(u64, u64)>,
    /// Issue-to-completion times of reads.
    pub read_service: LatencySummary,
    /// Issue-to-completion times of writes.
    pub write_service: LatencySummary,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference() -> Histogram<u64> {
        Histogram::new_with_bounds(1, HDR_HIGHEST, 3).unwrap()
    }

    #[test]
    fn the_layout_is_the_crates_own() {
        let h = reference();
        assert_eq!(h.distinct_values(), HDR_LEN);
        for i in 0..HDR_LEN {
            let v = hdr_value(i);
            assert_eq!(hdr_index(v), i, "index {i}, value {v}");
            if i > 0 {
                assert_eq!(h.lowest_equivalent(v), v, "index {i}");
                assert_eq!(h.highest_equivalent(v) + 1, hdr_value(i + 1), "index {i}");
            }
        }
    }

    proptest! {
        /// The summary equals that of the crate's histogram fed every sample, saturated,
        /// whatever the samples and however many wait in the batch.
        #[test]
        fn summaries_match_the_crates_histogram(
            samples in prop::collection::vec(
                prop_oneof![0u64..3, 0u64..5_000, 0u64..50_000_000, any::<u64>(), Just(HDR_HIGHEST)],
                0..700,
            )
        ) {
            let mut ours = LatencyHistogram::default();
            let mut theirs = reference();
            for &ns in &samples {
                ours.record(ns);
                theirs.saturating_record(ns.max(1));
            }
            prop_assert_eq!(ours.len(), samples.len() as u64);
            let s = ours.summary();
            if samples.is_empty() {
                prop_assert_eq!(s, LatencySummary::default());
            } else {
                prop_assert_eq!(s, summarise(&theirs));
            }
        }
    }
}
