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
/// Samples are added to the counts a batch at a time. The counts (a quarter of a MiB for
/// the range and precision kept) are mostly out of the host's cache between two faults, so
/// adding one sample per fault waited on a memory load each time; a batch's loads are
/// independent and overlap. The order in which samples are added changes no count, so the
/// summary is the same.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Histogram<u64>,
    /// Samples not yet in `counts`, at most [`PENDING_MAX`].
    pending: Vec<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("bounds and precision are valid"),
            pending: Vec::new(),
        }
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

impl LatencyHistogram {
    /// Records one sample.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.pending.len() == PENDING_MAX {
            self.add_pending();
        }
        self.pending.push(ns);
    }

    /// Adds the pending samples to the counts.
    #[inline(never)]
    fn add_pending(&mut self) {
        for &ns in &self.pending {
            self.counts.saturating_record(ns.max(1));
        }
        self.pending.clear();
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.counts.len() + self.pending.len() as u64
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
        let mut all = self.clone();
        all.add_pending();
        let h = &all.counts;
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
