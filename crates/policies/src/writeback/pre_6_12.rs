//! zswap's pool-limit worker before Takero Funaki's fixes of 6.12 ("fix global shrinker
//! memcg iteration", "fix global shrinker error handling logic"), as in 6.8 to 6.11.

use swapsim_core::{MemcgVisit, ZswapWriteback};

/// Memory cgroups without zswap entries the walk passes before the one with entries, by
/// default: a small systemd host (root, `init.scope`, `system.slice` and a service cgroup
/// each for a couple of dozen units, `user.slice` and a session). An estimate, not a
/// published figure: the published machine's hierarchy is not described.
pub const DEFAULT_EMPTY_MEMCGS: u32 = 30;

/// Where the default walk meets an offline cgroup: half way. Systemd removes the cgroup
/// of every unit that ends, and one whose memory (zswap entries included) is still
/// charged stays offline until that is freed. The position does not matter: any offline
/// cgroup before the group stops the walk from ever reaching it. That one is there is
/// read from the publication, whose pre-fix kernel wrote back no page at all
/// (`written_back_pages` unchanged) over 44,060 disk writes; without it the persisting
/// cursor would reach the group every other run and write back thousands.
pub const DEFAULT_OFFLINE_AT: u32 = DEFAULT_EMPTY_MEMCGS / 2;

/// `shrink_worker` of 6.8 to 6.11: every cgroup where `shrink_memcg` wrote nothing back
/// (an empty list, or a rotation) is a failure (`-EAGAIN`), and so is each return of
/// `mem_cgroup_iter` to the start of the hierarchy; 16 end the run. An offline cgroup
/// met on the walk resets the cursor to the root (`zswap_next_shrink = NULL`) and is a
/// failure too. The stores' hysteresis and the worker's start are the kernel's.
///
/// The hierarchy is given as a count of cgroups without entries walked before the group,
/// with optionally one of them offline: on such a walk the worker writes back little or,
/// past an offline cgroup, nothing, and the pool stays at its limit.
#[derive(Clone, Copy, Debug)]
pub struct PreFixWriteback {
    empty_memcgs: u32,
    offline_at: Option<u32>,
}

impl Default for PreFixWriteback {
    /// [`DEFAULT_EMPTY_MEMCGS`] cgroups without entries, the one at
    /// [`DEFAULT_OFFLINE_AT`] offline.
    fn default() -> PreFixWriteback {
        PreFixWriteback { empty_memcgs: DEFAULT_EMPTY_MEMCGS, offline_at: Some(DEFAULT_OFFLINE_AT) }
    }
}

impl PreFixWriteback {
    /// A walk over `empty_memcgs` cgroups without entries before the group, the one at
    /// `offline_at` (if any, and if below `empty_memcgs`) offline.
    pub fn new(empty_memcgs: u32, offline_at: Option<u32>) -> PreFixWriteback {
        PreFixWriteback { empty_memcgs, offline_at: offline_at.filter(|&p| p < empty_memcgs) }
    }
}

impl ZswapWriteback for PreFixWriteback {
    fn name(&self) -> &'static str {
        "pre-6.12"
    }
    fn empty_memcgs(&self) -> u32 {
        self.empty_memcgs
    }
    fn restarting_offline_memcg(&self) -> Option<u32> {
        self.offline_at
    }
    fn counts_failure(&mut self, visit: MemcgVisit) -> bool {
        visit != MemcgVisit::Written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_but_a_writeback_is_a_failure() {
        let mut p = PreFixWriteback::default();
        let visits = [
            MemcgVisit::NoEntries,
            MemcgVisit::Written,
            MemcgVisit::Failed,
            MemcgVisit::Offline,
            MemcgVisit::EndOfWalk { attempts: 3 },
        ];
        let failures: Vec<bool> = visits.iter().map(|&v| p.counts_failure(v)).collect();
        assert_eq!(failures, [true, false, true, true, true]);
        assert_eq!((p.empty_memcgs(), p.restarting_offline_memcg()), (30, Some(15)));
        assert_eq!(PreFixWriteback::new(4, Some(2)).restarting_offline_memcg(), Some(2));
        assert_eq!(PreFixWriteback::new(4, Some(4)).restarting_offline_memcg(), None, "past the walk");
    }
}
