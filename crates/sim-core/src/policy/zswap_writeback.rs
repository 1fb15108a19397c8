//! The zswap writeback-trigger family: when zswap's pool-limit worker (`shrink_worker`)
//! starts, which stores the pool refuses on the way, how the worker counts its failures as
//! it walks the memory cgroups, and whether it holds its writeback back.
//!
//! The kernel has changed these decisions, and a 2024 series proposed more:
//!
//! - up to 6.11 the worker counted every memory cgroup it found with nothing to write back
//!   as a failure, and each return to the start of the hierarchy too, and gave up after 16
//!   (`MAX_RECLAIM_RETRIES`); on a host with a few dozen cgroups it gave up before writing
//!   much back, the pool stayed full and, by the accept hysteresis, refused every store;
//! - 6.12 (Takero Funaki's two fixes, unchanged to 6.18) skips the cgroups with nothing to
//!   write back and counts a failure only for a walk of the whole hierarchy that found no
//!   candidate, or a writeback that failed;
//! - the rest of that series, not merged, queued the worker once a store took the pool
//!   above the accept threshold plus 1 % of the limit, refused stores only at the limit
//!   itself, and held writeback back for 500 ms after a store was refused or a swap-in read
//!   the disk.
//!
//! The core owns the pool, its limit and accept threshold, the worker's runs and turns on
//! the CPUs, and the writeback itself; a policy answers the questions where the kernels
//! differ. [`KernelWriteback`], the 6.12–6.18 rule, is the built-in default.

use crate::time::{SimDuration, SimTime};
use std::fmt::Debug;

/// What a store or the worker knows about zswap's pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ZswapPoolView {
    /// Pages the pool takes (`zswap_total_pages`).
    pub pool_pages: u64,
    /// The pool limit in pages (`zswap_max_pages`).
    pub max_pages: u64,
    /// The accept threshold in pages (`zswap_accept_thr_pages`).
    pub accept_pages: u64,
}

impl ZswapPoolView {
    /// A pool of `pool_pages` pages under a limit of `max_pages` and an accept threshold of
    /// `accept_pages`.
    pub fn new(pool_pages: u64, max_pages: u64, accept_pages: u64) -> ZswapPoolView {
        ZswapPoolView { pool_pages, max_pages, accept_pages }
    }
}

/// What the worker found at one step of its walk over the memory cgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgVisit {
    /// A cgroup with no entry to write back (`shrink_memcg` found its list empty).
    NoEntries,
    /// An entry of the cgroup was written back.
    Written,
    /// The cgroup's oldest entry was rotated or its writeback failed.
    Failed,
    /// An offline (dying) cgroup, whose entries the walk does not touch.
    Offline,
    /// The walk came back to the start of the hierarchy (`mem_cgroup_iter` returned
    /// NULL), having tried `attempts` cgroups with entries since the last time.
    EndOfWalk {
        /// Cgroups with entries visited in the walk.
        attempts: u32,
    },
}

/// What a writeback-trigger policy hears besides the worker's visits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WritebackEvent {
    /// A store was refused because the pool was full (`zswap_store` returned false on
    /// `zswap_check_limits`): the page goes to the swap device.
    StoreRefused {
        /// When.
        at: SimTime,
    },
    /// A swap-in read its page from the swap device rather than from zswap.
    DiskSwapin {
        /// When.
        at: SimTime,
    },
}

/// A zswap writeback-trigger policy.
///
/// Called on every store (the hysteresis and the start threshold), at every step of the
/// pool-limit worker and on every disk swap-in: keep each method O(1). Implementors are
/// `Clone` (a `#[derive(Clone)]` does): a simulation copies its policies when forked.
pub trait ZswapWriteback: Debug + Send + dyn_clone::DynClone {
    /// Name for reports.
    fn name(&self) -> &'static str;

    /// `zswap_check_limits`' hysteresis: whether a pool that reached its limit keeps
    /// refusing stores until it falls to the accept threshold. Without it, stores are
    /// refused only at the limit. Default yes, as every merged kernel.
    fn hysteresis(&self) -> bool {
        true
    }

    /// The pool size above which a successful store queues the worker, if any. `None`
    /// (the default, every merged kernel): only a store refused on a full pool queues it.
    fn shrink_start_pages(&self, _pool: &ZswapPoolView) -> Option<u64> {
        None
    }

    /// Memory cgroups holding no zswap entry that the worker's walk visits before it
    /// reaches the one with entries; the walk's cursor persists across runs. Default 0:
    /// a kernel that skips them without counting gains nothing from walking them one by
    /// one.
    fn empty_memcgs(&self) -> u32 {
        0
    }

    /// The position (0-based, below [`ZswapWriteback::empty_memcgs`]) of an offline
    /// cgroup among those, if the walk restarts from the root when it meets one, as
    /// before 6.12. Default none.
    fn restarting_offline_memcg(&self) -> Option<u32> {
        None
    }

    /// Whether the worker counts `visit` as a failure (16 end a run).
    fn counts_failure(&mut self, visit: MemcgVisit) -> bool;

    /// Hears a refused store or a disk swap-in. Default: ignored.
    fn observe(&mut self, _event: WritebackEvent) {}

    /// How long the worker waits before its next writeback, at `now`. Default: none.
    fn writeback_delay(&mut self, _now: SimTime) -> SimDuration {
        SimDuration(0)
    }
}

dyn_clone::clone_trait_object!(ZswapWriteback);

/// The worker of 6.12 to 6.18: cgroups with nothing to write back are skipped; a failed
/// writeback is a failure, and so is a walk of the whole hierarchy that found no cgroup
/// with entries (`shrink_worker` after "fix global shrinker error handling logic").
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelWriteback;

impl ZswapWriteback for KernelWriteback {
    fn name(&self) -> &'static str {
        "kernel"
    }
    fn counts_failure(&mut self, visit: MemcgVisit) -> bool {
        match visit {
            MemcgVisit::NoEntries | MemcgVisit::Written | MemcgVisit::Offline => false,
            MemcgVisit::Failed => true,
            MemcgVisit::EndOfWalk { attempts } => attempts == 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_skips_empty_cgroups_and_fails_on_an_empty_walk() {
        let mut k = KernelWriteback;
        let visits = [
            MemcgVisit::NoEntries,
            MemcgVisit::Written,
            MemcgVisit::Failed,
            MemcgVisit::Offline,
            MemcgVisit::EndOfWalk { attempts: 0 },
            MemcgVisit::EndOfWalk { attempts: 3 },
        ];
        let failures: Vec<bool> = visits.iter().map(|&v| k.counts_failure(v)).collect();
        assert_eq!(failures, [false, false, true, false, true, false]);
        assert_eq!(k.restarting_offline_memcg(), None);
        let pool = ZswapPoolView::new(10, 100, 90);
        assert!(k.hysteresis());
        assert_eq!(k.shrink_start_pages(&pool), None);
        assert_eq!(k.empty_memcgs(), 0);
        k.observe(WritebackEvent::StoreRefused { at: SimTime(5) });
        assert_eq!(k.writeback_delay(SimTime(6)), SimDuration(0));
    }
}
