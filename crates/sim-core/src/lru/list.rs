//! Folio lists for MGLRU's generations: doubly linked lists threaded through one dense
//! array of links indexed by frame, as the kernel threads `folio->lru`. A list keeps only
//! its two ends; what it holds is counted by its owner. (The classic LRU keeps its lists
//! as sequences instead, [`super::seq`], whose tails can be read without a chase from
//! link to link.)

use crate::ids::Pfn;

/// End of a list.
pub(crate) const NIL: u32 = u32::MAX;

/// The two ends of a list; the head is where the youngest folios go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct List {
    pub(crate) head: u32,
    pub(crate) tail: u32,
}

impl List {
    pub(crate) const EMPTY: List = List { head: NIL, tail: NIL };

    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// (prev, next) per frame; prev points toward the head.
#[derive(Clone, Debug, Default)]
pub(crate) struct Links {
    links: Vec<(u32, u32)>,
}

impl Links {
    fn ensure(&mut self, pfn: Pfn) {
        let need = pfn.0 as usize + 1;
        if self.links.len() < need {
            self.links.resize(need.max(self.links.len() * 2), (NIL, NIL));
        }
    }

    /// Links `pfn` between `prev` and `next` (either may be `NIL`, the list's end).
    fn link(&mut self, l: &mut List, prev: u32, next: u32, pfn: Pfn) {
        self.ensure(pfn);
        self.links[pfn.0 as usize] = (prev, next);
        match prev {
            NIL => l.head = pfn.0,
            p => self.links[p as usize].1 = pfn.0,
        }
        match next {
            NIL => l.tail = pfn.0,
            n => self.links[n as usize].0 = pfn.0,
        }
    }

    pub(crate) fn push_head(&mut self, l: &mut List, pfn: Pfn) {
        self.link(l, NIL, l.head, pfn);
    }

    pub(crate) fn push_tail(&mut self, l: &mut List, pfn: Pfn) {
        self.link(l, l.tail, NIL, pfn);
    }

    /// Links `pfn` right after `anchor` (on its tail side).
    pub(crate) fn insert_after(&mut self, l: &mut List, anchor: Pfn, pfn: Pfn) {
        let next = self.links[anchor.0 as usize].1;
        self.link(l, anchor.0, next, pfn);
    }

    pub(crate) fn unlink(&mut self, l: &mut List, pfn: Pfn) {
        let (prev, next) = self.links[pfn.0 as usize];
        match prev {
            NIL => l.head = next,
            p => self.links[p as usize].1 = next,
        }
        match next {
            NIL => l.tail = prev,
            n => self.links[n as usize].0 = prev,
        }
        self.links[pfn.0 as usize] = (NIL, NIL);
    }

    /// Walks `l` from head to tail, checking every back link and the tail, and calls
    /// `visit` on each folio; `visit` returns false to stop a walk that went on too long
    /// (a cycle). `name` identifies the list in a failed check.
    pub(crate) fn walk(&self, l: &List, name: &str, mut visit: impl FnMut(Pfn) -> bool) {
        let mut prev = NIL;
        let mut cur = l.head;
        while cur != NIL {
            assert_eq!(self.links[cur as usize].0, prev, "{name}: broken back link at frame {cur}");
            assert!(visit(Pfn(cur)), "{name}: list longer than its counter (cycle?)");
            prev = cur;
            cur = self.links[cur as usize].1;
        }
        assert_eq!(l.tail, prev, "{name}: tail pointer");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(links: &Links, l: &List) -> Vec<u32> {
        let mut out = Vec::new();
        links.walk(l, "test", |p| {
            out.push(p.0);
            true
        });
        out
    }

    #[test]
    fn links_keep_order_through_every_operation() {
        let mut links = Links::default();
        let mut l = List::EMPTY;
        links.push_head(&mut l, Pfn(1));
        links.push_head(&mut l, Pfn(2));
        links.push_tail(&mut l, Pfn(3));
        assert_eq!(order(&links, &l), [2, 1, 3]);
        links.push_head(&mut l, Pfn(4));
        links.insert_after(&mut l, Pfn(3), Pfn(5));
        links.insert_after(&mut l, Pfn(2), Pfn(6));
        assert_eq!(order(&links, &l), [4, 2, 6, 1, 3, 5]);
        for p in [4, 5, 1] {
            links.unlink(&mut l, Pfn(p));
        }
        assert_eq!(order(&links, &l), [2, 6, 3]);
        for p in [2, 6, 3] {
            links.unlink(&mut l, Pfn(p));
        }
        assert!(l.is_empty());
        assert_eq!(l.tail, NIL);
    }
}
