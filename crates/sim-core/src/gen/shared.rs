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

use super::jobs::JobStream;
use crate::error::TraceError;
use crate::ids::VirtPage;
use crate::workload::{Access, AccessSource};

/// Accesses drawn into the store at a time.
const CHUNK: usize = 1 << 14;
/// The write bit of a packed access; the page is in the bits below.
const WRITE: u32 = 1 << 31;

/// `access` in four bytes. A job's pages are below 2^28 (its region is at most 1 TiB) and
/// its accesses carry no think time.
fn pack(access: Access) -> u32 {
    debug_assert!(access.vpage.0 < u64::from(WRITE) && access.think_ns.is_none());
    access.vpage.0 as u32 | if access.write { WRITE } else { 0 }
}

fn unpack(word: u32) -> Access {
    Access { vpage: VirtPage(u64::from(word & !WRITE)), write: word & WRITE != 0, think_ns: None }
}

/// A job's stream as the engine reads it: its generator until it is first forked.
pub(super) struct JobSource {
    gen: JobStream,
    /// Accesses `gen` has given.
    given: u64,
    /// The store this stream's forks read, and how many accesses `gen` had given when it
    /// was made: forks taken at the same point share it.
    forks: Mutex<Option<(u64, Arc<Store>)>>,
}

impl JobSource {
    pub(super) fn new(gen: JobStream) -> JobSource {
        JobSource { gen, given: 0, forks: Mutex::new(None) }
    }
}

impl AccessSource for JobSource {
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
struct Store {
    drawn: Mutex<Drawn>,
}

struct Drawn {
    /// The generator, past the last chunk drawn.
    gen: JobStream,
    chunks: Vec<Arc<[u32]>>,
    /// The generator has ended: no chunk comes after the last.
    ended: bool,
}

impl Drawn {
    fn new(gen: JobStream) -> Drawn {
        Drawn { gen, chunks: Vec::new(), ended: false }
    }
}

impl Store {
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
#[derive(Clone)]
struct SharedReader {
    store: Arc<Store>,
    /// The chunk being read, and the position in it.
    chunk: Arc<[u32]>,
    at: usize,
    /// The index of the chunk after it.
    next_chunk: usize,
}

impl AccessSource for SharedReader {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let mut one = Vec::with_capacity(1);
        self.next_accesses(&mut one, 1)?;
        Ok(one.pop())
    }

    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        let mut left = max;
        while left > 0 {
            if self.at == self.chunk.len() {
                let Some(chunk) = self.store.chunk(self.next_chunk) else { break };
                self.chunk = chunk;
                self.next_chunk += 1;
                self.at = 0;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::JobsConfig;

    /// Every access of `source` from here on, read in batches of `batch`.
    fn drain(source: &mut dyn AccessSource, batch: usize) -> Vec<Access> {
        let mut out = Vec::new();
        loop {
            let before = out.len();
            source.next_accesses(&mut out, batch).unwrap();
            if out.len() - before < batch {
                return out;
            }
        }
    }

    /// Forks taken anywhere in a job's stream, of the stream and of each other, read on
    /// as the unforked stream does, in whatever order and batch sizes they are read.
    #[test]
    fn forks_read_what_the_stream_reads() {
        let cfg = JobsConfig {
            jobs: 3,
            size_median: crate::config::ByteSize(32 << 20),
            size_sigma: 0.2,
            lifetime_sigma: 0.0,
            link_fraction: 0.0,
            ..JobsConfig::default()
        };
        for (index, task) in cfg.tasks(7).into_iter().enumerate() {
            let whole = drain(&mut *cfg.tasks(7).swap_remove(index).accesses, 1000);
            assert!(whole.len() > 3 * CHUNK, "the stream spans several chunks");
            let mut source = task.accesses;
            let mut head = Vec::new();
            source.next_accesses(&mut head, CHUNK + 5).unwrap();
            let mut a = source.fork().unwrap();
            let mut b = source.fork().unwrap();
            // `a` runs ahead and draws; `b` and a fork of `b` taken later read the store.
            let mut rest_a = Vec::new();
            a.next_accesses(&mut rest_a, 2 * CHUNK + 3).unwrap();
            let mut rest_b = Vec::new();
            b.next_accesses(&mut rest_b, 17).unwrap();
            let mut c = b.fork().unwrap();
            rest_b.extend(drain(&mut *b, 333));
            let mut rest_c = rest_b[..17].to_vec();
            rest_c.extend(drain(&mut *c, CHUNK));
            rest_a.extend(drain(&mut *a, 1));
            // The original goes on reading its generator, and forks again further on.
            let mut rest = drain(&mut *source, 4096);
            assert_eq!(source.fork().map(|mut d| d.next_access().unwrap()), Some(None));
            for forked in [&rest_a, &rest_b, &rest_c, &rest] {
                assert_eq!(head.len() + forked.len(), whole.len());
                assert!(head.iter().chain(forked.iter()).eq(whole.iter()), "job {index}");
            }
            rest.clear();
        }
    }
}
