//! Folio lists kept as sequences, for the classic LRU: each list is a ring buffer of frame
//! numbers from its tail (the oldest folio) to its head (the youngest), with holes where
//! folios left from the middle.
//!
//! A linked list threaded through the frames, as the kernel threads `folio->lru`, makes
//! every step from the tail a load whose address the previous load gives: isolating a
//! batch of 32 from a list of a million random frames waits on 32 cache misses one after
//! another. Here the tail's folios lie next to each other in the ring, so the host's
//! prefetcher streams them and the frames they name can be loaded together, and the
//! folios the next isolation will take can be looked at in advance ([`SeqLists::entry`]).
//!
//! The order of folios is exactly a linked list's: every operation has the same effect on
//! it. Each frame records where its entry is ([`Positions`]: the frame table keeps it in
//! the frame's metadata, which the list's users touch anyway), so taking a folio out of
//! the middle is O(1) and leaves a hole; holes at either end are dropped at once (so both
//! ends are always folios), and the ring is rebuilt without holes when they outnumber the
//! folios, which costs O(1) per hole over time. Inserting in the middle (a split folio's
//! tail pages beside its head) shifts the shorter side of the ring: O(n), but only splits
//! do it.

use std::collections::VecDeque;

use crate::ids::Pfn;
use crate::mm::frames::Frames;

/// Where each frame records the absolute position of its entry on the list it is on.
pub(crate) trait Positions {
    fn position(&self, pfn: u32) -> u32;
    fn set_position(&mut self, pfn: u32, pos: u32);
}

impl Positions for Frames {
    #[inline]
    fn position(&self, pfn: u32) -> u32 {
        self.lru_pos(Pfn(pfn))
    }

    #[inline]
    fn set_position(&mut self, pfn: u32, pos: u32) {
        self.set_lru_pos(Pfn(pfn), pos);
    }
}

/// A ring entry whose folio left.
const HOLE: u32 = u32::MAX;

/// Holes a ring may always keep before it is rebuilt, whatever its folios' number.
const MIN_HOLES: usize = 64;

/// One list: `ring[i]` is at absolute position `base + i` (wrapping), index 0 the tail.
#[derive(Clone, Debug, Default)]
struct Ring {
    ring: VecDeque<u32>,
    base: u32,
    holes: usize,
}

impl Ring {
    fn index(&self, pos: u32) -> usize {
        pos.wrapping_sub(self.base) as usize
    }

    /// Drops holes at both ends, so that both ends are folios.
    fn trim(&mut self) {
        while self.ring.back() == Some(&HOLE) {
            self.ring.pop_back();
            self.holes -= 1;
        }
        self.trim_tail();
    }

    /// Drops holes at the tail end (the front), after a folio left from there.
    fn trim_tail(&mut self) {
        while self.ring.front() == Some(&HOLE) {
            self.ring.pop_front();
            self.base = self.base.wrapping_add(1);
            self.holes -= 1;
        }
    }
}

/// `N` folio lists whose frames record their positions in one table (`pos`, passed to
/// every operation that needs it); a frame is on one list at most. What a list holds is
/// counted by its owner.
#[derive(Clone, Debug)]
pub(crate) struct SeqLists<const N: usize> {
    rings: [Ring; N],
}

impl<const N: usize> Default for SeqLists<N> {
    fn default() -> Self {
        SeqLists { rings: std::array::from_fn(|_| Ring::default()) }
    }
}

impl<const N: usize> SeqLists<N> {
    #[cfg(test)]
    fn is_empty(&self, which: usize) -> bool {
        self.rings[which].ring.is_empty()
    }

    /// The folio at the tail of `which`.
    #[cfg(test)]
    fn tail(&self, which: usize) -> Option<Pfn> {
        self.rings[which].ring.front().map(|&p| Pfn(p))
    }

    /// The folio `i` entries from the tail of `which` toward its head, if that entry is
    /// a folio: one the next isolations will meet, unless the list changes first.
    pub(crate) fn entry(&self, which: usize, i: usize) -> Option<Pfn> {
        self.rings[which].ring.get(i).filter(|&&p| p != HOLE).map(|&p| Pfn(p))
    }

    pub(crate) fn push_head(&mut self, pos: &mut impl Positions, which: usize, pfn: Pfn) {
        let r = &mut self.rings[which];
        pos.set_position(pfn.0, r.base.wrapping_add(r.ring.len() as u32));
        r.ring.push_back(pfn.0);
    }

    pub(crate) fn push_tail(&mut self, pos: &mut impl Positions, which: usize, pfn: Pfn) {
        let r = &mut self.rings[which];
        r.base = r.base.wrapping_sub(1);
        r.ring.push_front(pfn.0);
        pos.set_position(pfn.0, r.base);
    }

    /// Takes the folio at the tail of `which` off it.
    pub(crate) fn pop_tail(&mut self, which: usize) -> Option<Pfn> {
        let r = &mut self.rings[which];
        let pfn = r.ring.pop_front()?;
        r.base = r.base.wrapping_add(1);
        // The head end was a folio and still is: only the tail end can show a hole now.
        r.trim_tail();
        Some(Pfn(pfn))
    }

    /// Takes `pfn`, which is on `which`, off it.
    pub(crate) fn unlink(&mut self, pos: &mut impl Positions, which: usize, pfn: Pfn) {
        let r = &mut self.rings[which];
        let i = r.index(pos.position(pfn.0));
        debug_assert_eq!(r.ring.get(i), Some(&pfn.0), "frame {} is not where it was put", pfn.0);
        r.ring[i] = HOLE;
        r.holes += 1;
        r.trim();
        if r.holes > MIN_HOLES && r.holes > r.ring.len() - r.holes {
            self.squeeze(pos, which);
        }
    }

    /// Rebuilds the ring of `which` without holes.
    fn squeeze(&mut self, pos: &mut impl Positions, which: usize) {
        let r = &mut self.rings[which];
        r.ring.retain(|&p| p != HOLE);
        r.holes = 0;
        for (i, &p) in r.ring.iter().enumerate() {
            pos.set_position(p, r.base.wrapping_add(i as u32));
        }
    }

    /// Puts `pfns` right on the head side of `anchor`, which is on `which`, as linking
    /// each in turn right before `anchor` does: toward the head come `anchor`, the last of
    /// `pfns`, ..., the first, then what followed `anchor`. Shifts the shorter side of the
    /// ring.
    pub(crate) fn insert_before(
        &mut self,
        pos: &mut impl Positions,
        which: usize,
        anchor: Pfn,
        pfns: &[Pfn],
    ) {
        let k = pfns.len();
        let r = &mut self.rings[which];
        let a = r.index(pos.position(anchor.0));
        let len = r.ring.len();
        let moved = if a + 1 < len - (a + 1) {
            // The tail side, `0..=a`, moves `k` places toward the tail.
            for _ in 0..k {
                r.ring.push_front(HOLE);
            }
            r.base = r.base.wrapping_sub(k as u32);
            for i in 0..=a {
                r.ring[i] = r.ring[i + k];
            }
            0..a + 1
        } else {
            // The head side, `a + 1..len`, moves `k` places toward the head.
            r.ring.extend(std::iter::repeat_n(HOLE, k));
            for i in (a + 1..len).rev() {
                r.ring[i + k] = r.ring[i];
            }
            a + 1 + k..len + k
        };
        for (j, pfn) in pfns.iter().rev().enumerate() {
            r.ring[a + 1 + j] = pfn.0;
        }
        for i in moved.chain(a + 1..a + 1 + k) {
            let p = r.ring[i];
            if p != HOLE {
                pos.set_position(p, r.base.wrapping_add(i as u32));
            }
        }
    }

    /// Walks `which` from head to tail, checking that every folio's recorded position is
    /// its entry's and that both ends are folios, and calls `visit` on each folio; `visit`
    /// returns false to stop a walk that went on too long. `name` identifies the list in a
    /// failed check.
    pub(crate) fn walk(
        &self,
        pos: &impl Positions,
        which: usize,
        name: &str,
        mut visit: impl FnMut(Pfn) -> bool,
    ) {
        let r = &self.rings[which];
        assert_ne!(r.ring.front(), Some(&HOLE), "{name}: a hole at the tail");
        assert_ne!(r.ring.back(), Some(&HOLE), "{name}: a hole at the head");
        let holes = r.ring.iter().filter(|&&p| p == HOLE).count();
        assert_eq!(holes, r.holes, "{name}: hole counter");
        for (i, &p) in r.ring.iter().enumerate().rev() {
            if p == HOLE {
                continue;
            }
            assert_eq!(pos.position(p), r.base.wrapping_add(i as u32), "{name}: frame {p}'s position");
            assert!(visit(Pfn(p)), "{name}: list longer than its counter");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A plain table of positions.
    #[derive(Default)]
    struct Table(Vec<u32>);

    impl Positions for Table {
        fn position(&self, pfn: u32) -> u32 {
            self.0[pfn as usize]
        }

        fn set_position(&mut self, pfn: u32, pos: u32) {
            let i = pfn as usize;
            if self.0.len() <= i {
                self.0.resize(i + 1, 0);
            }
            self.0[i] = pos;
        }
    }

    /// A list's folios from head to tail, as `walk` gives them.
    fn order(lists: &SeqLists<2>, pos: &Table, which: usize) -> Vec<u32> {
        let mut out = Vec::new();
        lists.walk(pos, which, "test", |p| {
            out.push(p.0);
            true
        });
        out
    }

    #[derive(Clone, Debug)]
    enum Op {
        Head(u32),
        Tail(u32),
        Pop,
        Unlink(usize),
        Insert(usize, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u32..200).prop_map(Op::Head),
            1 => (0u32..200).prop_map(Op::Tail),
            2 => Just(Op::Pop),
            3 => any::<usize>().prop_map(Op::Unlink),
            1 => (any::<usize>(), 1u32..6).prop_map(|(i, k)| Op::Insert(i, k)),
        ]
    }

    proptest! {
        /// Two lists sharing one position table keep the order of two plain vectors (head
        /// first) through every operation, however many holes they collect.
        #[test]
        fn order_is_a_lists(ops in prop::collection::vec((0usize..2, op()), 0..600)) {
            let mut seq = SeqLists::<2>::default();
        let mut pos = Table::default();
            let mut model: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
            let mut next_new = 200u32;
            for (w, op) in ops {
                match op {
                    Op::Head(p) | Op::Tail(p) => {
                        if model.iter().any(|m| m.contains(&p)) {
                            continue;
                        }
                        if matches!(op, Op::Head(_)) {
                            seq.push_head(&mut pos, w, Pfn(p));
                            model[w].insert(0, p);
                        } else {
                            seq.push_tail(&mut pos, w, Pfn(p));
                            model[w].push(p);
                        }
                    }
                    Op::Pop => prop_assert_eq!(seq.pop_tail(w).map(|p| p.0), model[w].pop()),
                    Op::Unlink(i) | Op::Insert(i, _) => {
                        if model[w].is_empty() {
                            continue;
                        }
                        let at = i % model[w].len();
                        let anchor = model[w][at];
                        if let Op::Insert(_, k) = op {
                            let new: Vec<Pfn> = (next_new..next_new + k).map(Pfn).collect();
                            next_new += k;
                            seq.insert_before(&mut pos, w, Pfn(anchor), &new);
                            // Each in turn goes right before the anchor, on its head side.
                            for n in &new {
                                let a = model[w].iter().position(|&p| p == anchor).unwrap();
                                model[w].insert(a, n.0);
                            }
                        } else {
                            seq.unlink(&mut pos, w, Pfn(anchor));
                            model[w].remove(at);
                        }
                    }
                }
                for (w, want) in model.iter().enumerate() {
                    prop_assert_eq!(&order(&seq, &pos, w), want);
                    prop_assert_eq!(seq.tail(w).map(|p| p.0), want.last().copied());
                    prop_assert_eq!(seq.is_empty(w), want.is_empty());
                    let entries: Vec<u32> =
                        (0..seq.rings[w].ring.len()).filter_map(|i| seq.entry(w, i)).map(|p| p.0).collect();
                    let tail_first: Vec<u32> = want.iter().rev().copied().collect();
                    prop_assert_eq!(entries, tail_first);
                }
            }
        }
    }

    #[test]
    fn holes_are_squeezed_out() {
        let mut seq = SeqLists::<2>::default();
        let mut pos = Table::default();
        for p in 0..1000 {
            seq.push_head(&mut pos, 0, Pfn(p));
        }
        // Every folio but the two ends leaves from the middle.
        for p in 1..999 {
            seq.unlink(&mut pos, 0, Pfn(p));
        }
        assert!(seq.rings[0].ring.len() <= 2 + 2 * MIN_HOLES, "{}", seq.rings[0].ring.len());
        assert_eq!(order(&seq, &pos, 0), [999, 0]);
        assert_eq!(seq.entry(0, 0), Some(Pfn(0)));
        assert_eq!(seq.entry(0, 1), None);
    }
}
