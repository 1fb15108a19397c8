//! The count of a trace's distinct pages, for `swapsim trace info` ([`super::summarize`]):
//! a bitmap per chunk of 64 pages, so that memory grows with the distinct pages, never with
//! the range they span or the number of records.

use crate::lines::IdHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Pages per chunk of [`DistinctPages`]: one bit each in a `u64`.
const CHUNK_PAGES: u64 = 64;

/// A set of `(pid, page)` pairs, counted as they are inserted, kept as one 64-bit bitmap per
/// chunk of 64 aligned pages that holds at least one of them.
///
/// A chunk costs its bitmap (8 bytes) and a hash map entry from `(pid, chunk)` to the
/// bitmap's index (24 bytes, plus the table's spare capacity), so memory grows with the
/// distinct pages, never with the range they span: at worst, when every page has a chunk of
/// its own, 40 to 70 bytes per page, and under a byte per page when pages cluster, as they
/// do in real traces. Small chunks keep that worst case low, and the one-chunk cache keeps
/// runs through a chunk off the map.
#[derive(Default)]
pub(super) struct DistinctPages {
    /// Index into `bitmaps` by `(pid, page / CHUNK_PAGES)`.
    chunk_idx_of: HashMap<(u32, u64), usize, BuildHasherDefault<IdHasher>>,
    bitmaps: Vec<u64>,
    /// The chunk of the previous insertion and its index, once there was one.
    last: Option<((u32, u64), usize)>,
    count: u64,
}

impl DistinctPages {
    #[inline]
    pub(super) fn insert(&mut self, pid: u32, page: u64) {
        let key = (pid, page / CHUNK_PAGES);
        let chunk_idx = match self.last {
            Some((last_key, chunk_idx)) if last_key == key => chunk_idx,
            _ => {
                let n_chunks = self.bitmaps.len();
                let chunk_idx = *self.chunk_idx_of.entry(key).or_insert(n_chunks);
                if chunk_idx == n_chunks {
                    self.bitmaps.push(0);
                }
                self.last = Some((key, chunk_idx));
                chunk_idx
            }
        };
        let bit = 1u64 << (page % CHUNK_PAGES);
        let bitmap = &mut self.bitmaps[chunk_idx];
        self.count += u64::from(*bitmap & bit == 0);
        *bitmap |= bit;
    }

    pub(super) fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distinct_pages_check(pairs: &[(u32, u64)]) {
        let mut pages = DistinctPages::default();
        for &(pid, page) in pairs {
            pages.insert(pid, page);
        }
        let expected: std::collections::BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(pages.count(), expected.len() as u64);
    }

    #[test]
    fn distinct_pages_count_like_a_set() {
        // Three rounds over overlapping pages of three address spaces, in scattered order.
        let pairs: Vec<(u32, u64)> = (0..3u64)
            .flat_map(|round| {
                (0..100_000u64).map(move |page| ((page % 3) as u32, (page * 7 + round) % 150_000))
            })
            .collect();
        distinct_pages_check(&pairs);
        // The ends of the page range, and one pid's chunk next to another's.
        distinct_pages_check(&[
            (0, u64::MAX),
            (0, u64::MAX - 63),
            (0, u64::MAX),
            (1, 0),
            (0, 0),
            (1, 63),
            (1, 64),
        ]);
    }

    proptest::proptest! {
        #[test]
        fn distinct_pages_match_a_btree_set(
            pairs in proptest::collection::vec(
                (
                    0u32..3,
                    proptest::prop_oneof![0u64..300, (u64::MAX - 300)..=u64::MAX, proptest::prelude::any::<u64>()],
                ),
                0..400,
            )
        ) {
            distinct_pages_check(&pairs);
        }
    }
}
