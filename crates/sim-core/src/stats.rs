//! Counters and distributions, named as the kernel and blkparse name them.
//!
//! `Vmstat` fields are spelled exactly as in /proc/vmstat so that a report can be compared
//! line by line with a real machine. Block figures use the blkparse per-device summary
//! vocabulary (Queued, Merges, Dispatches, Completed, unplugs).

use hdrhistogram::Histogram;
use serde::Serialize;

/// Event counters with /proc/vmstat names. Only events modelled by the simulator move.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Vmstat {
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub pswpin: u64,
    pub pswpout: u64,
    pub pgpgin: u64,
    pub pgpgout: u64,
    pub swap_ra: u64,
    pub swap_ra_hit: u64,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    pub pgscan_anon: u64,
    pub pgsteal_anon: u64,
    pub pgrefill: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    pub pgrotated: u64,
    pub workingset_refault_anon: u64,
    pub workingset_activate_anon: u64,
    pub workingset_restore_anon: u64,
    pub allocstall_normal: u64,
    pub pageoutrun: u64,
    pub kswapd_low_wmark_hit_quickly: u64,
    pub kswapd_high_wmark_hit_quickly: u64,
    pub oom_kill: u64,
    pub swpin_zero: u64,
    pub swpout_zero: u64,
    pub zswpin: u64,
    pub zswpout: u64,
    pub zswpwb: u64,
    pub thp_swpout: u64,
    pub thp_swpout_fallback: u64,
}

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

/// A latency distribution in nanoseconds, summarised for reports.
#[derive(Clone, Debug)]
pub struct LatencyHistogram(Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram(
            Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("bounds and precision are valid"),
        )
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
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// True when no sample was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Mean, percentiles and maximum in microseconds (zero when empty).
    pub fn summary(&self) -> LatencySummary {
        if self.0.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| round3(ns as f64 / 1000.0);
        LatencySummary {
            count: self.0.len(),
            mean_us: round3(self.0.mean() / 1000.0),
            p50_us: us(self.0.value_at_quantile(0.5)),
            p90_us: us(self.0.value_at_quantile(0.9)),
            p99_us: us(self.0.value_at_quantile(0.99)),
            p999_us: us(self.0.value_at_quantile(0.999)),
            max_us: us(self.0.max()),
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
