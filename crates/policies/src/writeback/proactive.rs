//! The rest of Takero Funaki's 2024 series, posted and not merged: the pool-limit worker
//! starts before the pool is full and pauses while the swap device is busy paging.

use swapsim_core::{MemcgVisit, SimDuration, SimTime, WritebackEvent, ZswapPoolView, ZswapWriteback};

/// `ZSWAP_GLOBAL_SHRINK_DELAY`: how long the worker holds writeback back after a refused
/// store or a disk swap-in, 500 ms ("aligning with the mq-deadline target latency").
pub const SHRINK_DELAY_NS: u64 = 500_000_000;

/// The 6.12 worker (cgroups without entries skipped) with the series' patches 3 and 6:
/// a store that takes the pool above the accept threshold plus 1 % of the limit queues
/// the worker, which writes back down to the accept threshold; stores are refused only at
/// the limit itself (the hysteresis is gone); and the worker sleeps until 500 ms after the
/// last store refused on a full pool or swap-in read from the disk.
///
/// Simplified: the series' other patches are not modelled (patch 4 takes the worker off
/// the memory-reclaim workqueue, which the model has not got; patch 5, storing
/// incompressible pages as they are, is the model's default, `incompressible = "store"`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProactiveWriteback {
    /// The last refused store or disk swap-in.
    last_io: Option<SimTime>,
}

impl ZswapWriteback for ProactiveWriteback {
    fn name(&self) -> &'static str {
        "proactive"
    }
    fn hysteresis(&self) -> bool {
        false
    }
    fn shrink_start_pages(&self, pool: &ZswapPoolView) -> Option<u64> {
        Some(pool.accept_pages + pool.max_pages / 100)
    }
    fn counts_failure(&mut self, visit: MemcgVisit) -> bool {
        match visit {
            MemcgVisit::NoEntries | MemcgVisit::Written | MemcgVisit::Offline => false,
            MemcgVisit::Failed => true,
            MemcgVisit::EndOfWalk { attempts } => attempts == 0,
        }
    }
    fn observe(&mut self, event: WritebackEvent) {
        let at = match event {
            WritebackEvent::StoreRefused { at } | WritebackEvent::DiskSwapin { at } => at,
            _ => return,
        };
        self.last_io = Some(self.last_io.map_or(at, |last| last.max(at)));
    }
    fn writeback_delay(&mut self, now: SimTime) -> SimDuration {
        match self.last_io {
            Some(last) if now.0 < last.0.saturating_add(SHRINK_DELAY_NS) => {
                SimDuration(last.0 + SHRINK_DELAY_NS - now.0)
            }
            _ => SimDuration(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_starts_early_refuses_only_at_the_limit_and_waits_out_disk_io() {
        let mut p = ProactiveWriteback::default();
        assert!(!p.hysteresis());
        assert_eq!(p.shrink_start_pages(&ZswapPoolView::new(0, 1000, 500)), Some(510));
        assert_eq!(p.writeback_delay(SimTime(7)), SimDuration(0), "nothing heard yet");
        p.observe(WritebackEvent::DiskSwapin { at: SimTime(1_000) });
        p.observe(WritebackEvent::StoreRefused { at: SimTime(400) });
        assert_eq!(p.writeback_delay(SimTime(1_000)), SimDuration(SHRINK_DELAY_NS), "the later event counts");
        assert_eq!(p.writeback_delay(SimTime(SHRINK_DELAY_NS)), SimDuration(1_000));
        assert_eq!(p.writeback_delay(SimTime(SHRINK_DELAY_NS + 1_000)), SimDuration(0));
        assert!(p.counts_failure(MemcgVisit::EndOfWalk { attempts: 0 }));
        assert!(!p.counts_failure(MemcgVisit::NoEntries));
    }
}
