//! Workingset detection for anonymous folios (`mm/workingset.c`).
//!
//! Reclaim leaves a shadow entry in the swap-cache word of a freed folio's slot. Its
//! encoding belongs to the LRU policy that evicted the folio: the classic lists store the
//! lruvec's nonresident age at eviction and the folio's workingset bit (this module's
//! [`ClassicShadow`]); MGLRU stores its own generation and tier token. The swap cache
//! keeps the encoded bits without interpreting them.

use super::frames::flag;
use super::swap::{Shadow, SHADOW_BITS};
use super::Mm;
use crate::ids::Pfn;

/// Bits of eviction timestamp a classic shadow keeps; distances are computed modulo this.
pub(crate) const EVICTION_BITS: u32 = SHADOW_BITS - 1;
const WORKINGSET_BIT: u32 = 1 << EVICTION_BITS;

/// The classic LRU's shadow entry (`workingset_eviction`): the eviction clock and whether
/// the folio was in the workingset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClassicShadow {
    pub(crate) eviction: u32,
    pub(crate) workingset: bool,
}

impl ClassicShadow {
    pub(crate) fn encode(self) -> Shadow {
        let eviction = self.eviction & (WORKINGSET_BIT - 1);
        Shadow(eviction | if self.workingset { WORKINGSET_BIT } else { 0 })
    }

    pub(crate) fn decode(shadow: Shadow) -> ClassicShadow {
        ClassicShadow {
            eviction: shadow.0 & (WORKINGSET_BIT - 1),
            workingset: shadow.0 & WORKINGSET_BIT != 0,
        }
    }
}

impl Mm {
    /// `workingset_age_nonresident`.
    pub(crate) fn workingset_age(&mut self, n: u64) {
        self.nonresident_age += n;
    }

    /// `workingset_eviction` for the classic lists: the shadow a freed folio leaves, which
    /// ages the nonresident clock by the folio's pages.
    pub(crate) fn workingset_eviction(&mut self, pfn: Pfn) -> Shadow {
        let shadow = ClassicShadow {
            eviction: (self.nonresident_age & ((1 << EVICTION_BITS) - 1)) as u32,
            workingset: self.frames.test(pfn, flag::WORKINGSET),
        };
        self.workingset_age(u64::from(self.frames.nr_pages(pfn)));
        shadow.encode()
    }

    /// `workingset_refault` for an anonymous folio whose slot held the classic `shadow`,
    /// with `active_anon` pages on the active list: true when the refault distance says
    /// the folio belongs to the workingset and must be activated.
    pub(crate) fn workingset_refault(&mut self, pfn: Pfn, shadow: Shadow, active_anon: u64) -> bool {
        let shadow = ClassicShadow::decode(shadow);
        let nr = u64::from(self.frames.nr_pages(pfn));
        self.vmstat.workingset_refault_anon += nr;
        let mask = (1u64 << EVICTION_BITS) - 1;
        let distance = (self.nonresident_age.wrapping_sub(u64::from(shadow.eviction))) & mask;
        // workingset_test_recent: anon refaults compete with the file lists (empty here)
        // and with active anon while swap has room.
        let workingset_size = if self.can_reclaim_anon() { active_anon } else { 0 };
        if distance > workingset_size {
            return false;
        }
        self.workingset_age(nr);
        self.vmstat.workingset_activate_anon += nr;
        if shadow.workingset {
            self.frames.set(pfn, flag::WORKINGSET);
            self.vmstat.workingset_restore_anon += nr;
        }
        true
    }
}
