//! Miss-ratio curves of a trace: how many of its accesses miss in a memory of each size,
//! under a strict LRU and under Belady's optimal policy (OPT), in one pass over the trace
//! for LRU and one per size for OPT.
//!
//! A page is a (process, page) pair, so the address spaces of a multi-process trace stay
//! apart. Every first access to a page is a miss at every size (a compulsory miss).
//!
//! LRU: the stack distance of an access is the number of distinct pages touched since the
//! previous access to the same page, that page included; the access hits in an LRU memory
//! of `C` pages exactly when its distance is at most `C` (Mattson et al., 1970). Distances
//! come from a Fenwick tree over access times that marks each page's latest access, so the
//! pass costs O(n log n) time and 4 bytes per access plus 8 per distinct page.
//!
//! OPT: on a miss with the memory full, evict the resident page whose next access lies
//! furthest in the future (never counts as furthest); the missing page is always brought
//! in. Next accesses come from a backward pass over the trace; a max-heap with lazy
//! deletion finds the victim, O(n log C) per size.
//!
//! These are cache models, not the kernel's: no readahead, no reclaim batches, no
//! watermarks. `lru = "exact"` with `readahead = "none"` takes as many page faults in a
//! memory cgroup of `C` pages as the LRU curve says misses at `C`, and `lru = "opt"` as
//! many as the OPT curve says.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::{BinaryHeap, HashMap};
use swapsim_trace_formats::OpenOptions;

use crate::trace::TraceSource;

/// One memory size of a miss-ratio curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MrcPoint {
    /// The memory, in pages.
    pub pages: u64,
    /// Accesses that miss under a strict LRU (compulsory misses included).
    pub lru_misses: u64,
    /// `lru_misses` over all accesses.
    pub lru_miss_ratio: f64,
    /// Accesses that miss under Belady's optimal policy (compulsory misses included).
    pub opt_misses: u64,
    /// `opt_misses` over all accesses.
    pub opt_miss_ratio: f64,
}

/// A trace's miss-ratio curves.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Mrc {
    /// The trace, as named on the command line.
    pub trace: String,
    /// Accesses read.
    pub accesses: u64,
    /// Distinct pages among them (each one compulsory miss).
    pub distinct_pages: u64,
    /// One point per size asked for, in increasing order.
    pub points: Vec<MrcPoint>,
}

/// Reads `source` and computes the LRU and OPT miss counts at each size in `sizes`
/// (pages, each at least 1).
pub fn compute(source: &TraceSource, options: OpenOptions, sizes: &[u64]) -> Result<Mrc> {
    if sizes.is_empty() {
        bail!("--sizes: give at least one memory size");
    }
    if let Some(zero) = sizes.iter().find(|&&s| s == 0) {
        bail!("--sizes: {zero} pages is not a memory size; each must be at least one page");
    }
    let ids = page_ids(source, options)?;
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    Ok(curves(source.name(), &ids, &sizes))
}

/// The curves of an access sequence already turned into dense page ids.
fn curves(trace: String, ids: &[u32], sizes: &[u64]) -> Mrc {
    let n = ids.len() as u64;
    let distinct = ids.iter().map(|&id| id as usize + 1).max().unwrap_or(0);
    let histogram = stack_distances(ids, distinct);
    let next = next_accesses(ids, distinct);
    let ratio = |misses: u64| if n == 0 { 0.0 } else { misses as f64 / n as f64 };
    let points = sizes
        .iter()
        .map(|&pages| {
            let lru_misses = lru_misses(&histogram, pages);
            let opt_misses = opt_misses(ids, &next, distinct, pages);
            MrcPoint {
                pages,
                lru_misses,
                lru_miss_ratio: ratio(lru_misses),
                opt_misses,
                opt_miss_ratio: ratio(opt_misses),
            }
        })
        .collect();
    Mrc { trace, accesses: n, distinct_pages: distinct as u64, points }
}

/// The trace's accesses as dense page ids, numbered in order of first access.
fn page_ids(source: &TraceSource, options: OpenOptions) -> Result<Vec<u32>> {
    let mut records = source.records(options)?;
    let mut dense: HashMap<(u32, u64), u32> = HashMap::new();
    let mut ids = Vec::new();
    while let Some(record) = records.next_record().with_context(|| format!("trace {}", source.name()))? {
        let next = dense.len();
        let id = *dense.entry((record.pid, record.page)).or_insert_with(|| next as u32);
        if dense.len() > u32::MAX as usize {
            bail!("trace {}: more than {} distinct pages", source.name(), u32::MAX);
        }
        ids.push(id);
    }
    Ok(ids)
}

/// `histogram[d]`: accesses at stack distance `d` (1-based; index 0 counts compulsory
/// misses).
fn stack_distances(ids: &[u32], distinct: usize) -> Vec<u64> {
    let mut histogram = vec![0u64; distinct + 1];
    // last[id]: 1 + the time of the page's latest access, 0 before its first.
    let mut last = vec![0u32; distinct];
    let mut marks = Fenwick::new(ids.len());
    for (t, &id) in ids.iter().enumerate() {
        let previous = last[id as usize];
        if previous == 0 {
            histogram[0] += 1;
        } else {
            let at = previous as usize - 1;
            // Pages whose latest access lies after `at`, plus this page itself.
            let between = marks.prefix(t) - marks.prefix(at + 1);
            histogram[between as usize + 1] += 1;
            marks.add(at, -1);
        }
        marks.add(t, 1);
        last[id as usize] = t as u32 + 1;
    }
    histogram
}

/// Misses of an LRU memory of `pages` pages, from the distance histogram.
fn lru_misses(histogram: &[u64], pages: u64) -> u64 {
    let beyond: u64 = histogram.iter().skip(1).skip(pages as usize).sum();
    histogram[0] + beyond
}

/// For each access, the time of the next access to the same page (`u32::MAX`: none).
fn next_accesses(ids: &[u32], distinct: usize) -> Vec<u32> {
    let mut seen = vec![u32::MAX; distinct];
    let mut next = vec![u32::MAX; ids.len()];
    for (t, &id) in ids.iter().enumerate().rev() {
        next[t] = seen[id as usize];
        seen[id as usize] = t as u32;
    }
    next
}

/// Misses of Belady's optimal policy with `pages` pages of memory.
fn opt_misses(ids: &[u32], next: &[u32], distinct: usize, pages: u64) -> u64 {
    // The next access of each resident page; u64::MAX when not resident.
    const ABSENT: u64 = u64::MAX;
    let mut resident_next = vec![ABSENT; distinct];
    let mut heap: BinaryHeap<(u32, u32)> = BinaryHeap::new();
    let (mut resident, mut misses) = (0u64, 0u64);
    for (t, &id) in ids.iter().enumerate() {
        let slot = &mut resident_next[id as usize];
        if *slot == ABSENT {
            misses += 1;
            if resident == pages {
                // Pop stale entries (pages since evicted or accessed again) until one is
                // current: it is the resident page used furthest in the future.
                while let Some((when, victim)) = heap.pop() {
                    if resident_next[victim as usize] == u64::from(when) {
                        resident_next[victim as usize] = ABSENT;
                        resident -= 1;
                        break;
                    }
                }
            }
            resident += 1;
        }
        resident_next[id as usize] = u64::from(next[t]);
        heap.push((next[t], id));
        // Keep the heap from growing without bound on hit-heavy traces.
        if heap.len() > 4 * pages.max(1) as usize + 1024 {
            heap.retain(|&(when, page)| resident_next[page as usize] == u64::from(when));
        }
    }
    misses
}

/// A Fenwick (binary indexed) tree of counts over positions 0..n.
struct Fenwick {
    tree: Vec<i32>,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick { tree: vec![0; n + 1] }
    }

    fn add(&mut self, at: usize, delta: i32) {
        let mut i = at + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over positions `0..end`.
    fn prefix(&self, end: usize) -> i64 {
        let (mut i, mut sum) = (end, 0i64);
        while i > 0 {
            sum += i64::from(self.tree[i]);
            i &= i - 1;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A textbook LRU of `capacity` pages, most recent last.
    fn naive_lru(ids: &[u32], capacity: u64) -> u64 {
        let mut lru: Vec<u32> = Vec::new();
        let mut misses = 0;
        for &id in ids {
            if let Some(i) = lru.iter().position(|&x| x == id) {
                lru.remove(i);
            } else {
                misses += 1;
                if lru.len() as u64 == capacity {
                    lru.remove(0);
                }
            }
            lru.push(id);
        }
        misses
    }

    /// Belady by brute force: on a full miss, scan the residents for the furthest next use.
    fn naive_opt(ids: &[u32], capacity: u64) -> u64 {
        let mut resident: Vec<u32> = Vec::new();
        let mut misses = 0;
        for (t, &id) in ids.iter().enumerate() {
            if resident.contains(&id) {
                continue;
            }
            misses += 1;
            if resident.len() as u64 == capacity {
                let next_use = |p: u32| ids[t + 1..].iter().position(|&x| x == p).unwrap_or(usize::MAX);
                let (i, _) = resident.iter().enumerate().max_by_key(|&(_, &p)| next_use(p)).expect("full");
                resident.remove(i);
            }
            resident.push(id);
        }
        misses
    }

    fn dense(raw: &[u32]) -> Vec<u32> {
        let mut map = HashMap::new();
        raw.iter()
            .map(|&p| {
                let next = map.len() as u32;
                *map.entry(p).or_insert(next)
            })
            .collect()
    }

    #[test]
    fn a_cycle_one_page_too_long_always_misses_under_lru_but_not_opt() {
        let ids: Vec<u32> = (0..30).map(|i| i % 3).collect();
        let mrc = curves("cycle".into(), &ids, &[1, 2, 3]);
        let lru: Vec<u64> = mrc.points.iter().map(|p| p.lru_misses).collect();
        let opt: Vec<u64> = mrc.points.iter().map(|p| p.opt_misses).collect();
        assert_eq!(lru, [30, 30, 3]);
        // Two pages: a miss at every other access after the first two (a b c a b c ...).
        assert_eq!(opt, [30, 16, 3]);
        assert_eq!((mrc.accesses, mrc.distinct_pages), (30, 3));
    }

    proptest! {
        #[test]
        fn curves_match_the_textbook_policies(
            raw in prop::collection::vec(0u32..40, 0..300),
            sizes in prop::collection::btree_set(1u64..50, 1..6),
        ) {
            let ids = dense(&raw);
            let sizes: Vec<u64> = sizes.into_iter().collect();
            let mrc = curves("random".into(), &ids, &sizes);
            let mut previous = (u64::MAX, u64::MAX);
            for p in &mrc.points {
                prop_assert_eq!(p.lru_misses, naive_lru(&ids, p.pages));
                prop_assert_eq!(p.opt_misses, naive_opt(&ids, p.pages));
                prop_assert!(p.opt_misses <= p.lru_misses);
                // More memory never misses more (LRU and OPT are stack policies).
                prop_assert!(p.lru_misses <= previous.0 && p.opt_misses <= previous.1);
                previous = (p.lru_misses, p.opt_misses);
            }
        }
    }
}
