//! A generated job's stream whose forks share what any of them generated.
//!
//! Forked simulations (`Simulation::fork`) that differ only in the kernel's settings (the
//! zswap settings of one build, say) replay the same job streams: a job's accesses depend
//! on the seed and its index, never on what the simulation did. Drawing them is a large
//! part of a build's cost (a power-law age per re-reference), so the forks of a stream do
//! not each draw it again: the first fork to reach a stretch of the stream draws it into a
//! store they all hold, packed four bytes an access, and the others copy it from there.
//!
//! A stream that is never forked reads its generator directly and stores nothing. Once
//! forked, the store keeps every access drawn after the fork until the last fork is
//! dropped: four bytes per access, about 60 MB for the 14 million accesses of a 60-job
//! build, which is the price of drawing them once.

use std::sync::{Arc, Mutex, PoisonError};

use crate::error::TraceError;
use crate::ids::VirtPage;
use crate::workload::{Access, AccessSource};

/// Accesses drawn into the store at a time.
pub(super) const CHUNK: usize = 1 << 14;
/// The write bit of a packed access; the page is in the bits below.
const WRITE: u32 = 1 << 31;

/// `access` in four bytes. A job's pages are below 2^28 (its region is at most 1 TiB) and
/// its accesses carry no think time; a generator that broke this would be copied wrong,
/// so it is checked where each access is drawn, once for all the forks.
fn pack(access: Access) -> u32 {
    assert!(
        access.vpage.0 < u64::from(WRITE) && access.think_ns.is_none(),
        "a shared job stream holds pages below 2^31 without think time, not {access:?}"
    );
    access.vpage.0 as u32 | if access.write { WRITE } else { 0 }
}

fn unpack(word: u32) -> Access {
    Access { vpage: VirtPage(u64::from(word & !WRITE)), write: word & WRITE != 0, think_ns: None }
}

/// A job's stream as the engine reads it: its generator `G` until it is first forked.
pub(super) struct JobSource<G> {
    gen: G,
    /// Accesses `gen` has given.
    given: u64,
    /// The store this stream's forks read, and how many accesses `gen` had given when it
    /// was made: forks taken at the same point share it.
    forks: Mutex<Option<(u64, Arc<Store<G>>)>>,
}

impl<G> JobSource<G> {
    pub(super) fn new(gen: G) -> JobSource<G> {
        JobSource { gen, given: 0, forks: Mutex::new(None) }
    }
}

impl<G> AccessSource for JobSource<G>
where
    G: Iterator<Item = Access> + Clone + Send + 'static,
{
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let next = self.gen.next();
        self.given += u64::from(next.is_some());
        Ok(next)
    }

    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        let before = out.len();
        out.extend(self.gen.by_ref().take(max));
        self.given += (out.len() - before) as u64;
        Ok(())
    }

    fn fork(&self) -> Option<Box<dyn AccessSource>> {
        let mut forks = self.forks.lock().unwrap_or_else(PoisonError::into_inner);
        let store = match &*forks {
            Some((at, store)) if *at == self.given => Arc::clone(store),
            _ => {
                let store = Arc::new(Store { drawn: Mutex::new(Drawn::new(self.gen.clone())) });
                *forks = Some((self.given, Arc::clone(&store)));
                store
            }
        };
        Some(Box::new(SharedReader { store, chunk: Arc::from([]), next_chunk: 0, at: 0 }))
    }
}

/// The accesses a stream's forks share, drawn a chunk at a time by whichever fork first
/// needs the chunk.
struct Store<G> {
    drawn: Mutex<Drawn<G>>,
}

struct Drawn<G> {
    /// The generator, past the last chunk drawn.
    gen: G,
    chunks: Vec<Arc<[u32]>>,
    /// The generator has ended: no chunk comes after the last.
    ended: bool,
}

impl<G> Drawn<G> {
    fn new(gen: G) -> Drawn<G> {
        Drawn { gen, chunks: Vec::new(), ended: false }
    }
}

impl<G: Iterator<Item = Access>> Store<G> {
    /// Chunk `k`, drawn now if no fork has needed it yet; `None` past the stream's end.
    fn chunk(&self, k: usize) -> Option<Arc<[u32]>> {
        let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
        while drawn.chunks.len() <= k && !drawn.ended {
            let words: Vec<u32> = drawn.gen.by_ref().take(CHUNK).map(pack).collect();
            drawn.ended = words.len() < CHUNK;
            if !words.is_empty() {
                drawn.chunks.push(words.into());
            }
        }
        drawn.chunks.get(k).cloned()
    }
}

/// A fork of a job's stream, reading the shared store.
struct SharedReader<G> {
    store: Arc<Store<G>>,
    /// The chunk being read, and the position in it.
    chunk: Arc<[u32]>,
    at: usize,
    /// The index of the chunk after it.
    next_chunk: usize,
}

impl<G> Clone for SharedReader<G> {
    fn clone(&self) -> Self {
        SharedReader {
            store: Arc::clone(&self.store),
            chunk: Arc::clone(&self.chunk),
            at: self.at,
            next_chunk: self.next_chunk,
        }
    }
}

impl<G: Iterator<Item = Access>> SharedReader<G> {
    /// Whether an access is left to read, moving on to the next chunk when this one is
    /// read to its end.
    fn has_next(&mut self) -> bool {
        if self.at == self.chunk.len() {
            let Some(chunk) = self.store.chunk(self.next_chunk) else { return false };
            self.chunk = chunk;
            self.next_chunk += 1;
            self.at = 0;
        }
        true
    }
}

impl<G> AccessSource for SharedReader<G>
where
    G: Iterator<Item = Access> + Send + 'static,
{
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        if !self.has_next() {
            return Ok(None);
        }
        self.at += 1;
        Ok(Some(unpack(self.chunk[self.at - 1])))
    }

    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        let mut left = max;
        while left > 0 && self.has_next() {
            let take = left.min(self.chunk.len() - self.at);
            out.extend(self.chunk[self.at..self.at + take].iter().map(|&w| unpack(w)));
            self.at += take;
            left -= take;
        }
        Ok(())
    }

    fn fork(&self) -> Option<Box<dyn AccessSource>> {
        Some(Box::new(self.clone()))
    }
}
