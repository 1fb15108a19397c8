//! A user task's access stream: its source and the accesses taken from it ahead of the one
//! being simulated. Kept apart from the task (`super::task::Task`) because a source may not
//! be copyable: the rest of a simulation is a plain clone, and a fork copies the streams
//! through [`AccessSource::fork`], which may refuse.

use crate::error::TraceError;
use crate::mm::pagetable::PageId;
use crate::workload::{Access, AccessSource};

/// Whether a refill reads each access's next use from the source (only the OPT reference
/// LRU wants them, and reading them takes the accesses one at a time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextUses {
    Read,
    Skip,
}

/// One user task's stream: where its accesses come from, and those taken ahead.
pub(crate) struct Stream {
    pub(crate) source: Box<dyn AccessSource>,
    pub(crate) ahead: Lookahead,
}

impl Stream {
    pub(crate) fn new(source: Box<dyn AccessSource>) -> Stream {
        Stream { source, ahead: Lookahead::default() }
    }

    /// A copy for a forked simulation, or `None` when the source cannot be copied or the
    /// stream holds a read error not handed out yet.
    pub(crate) fn fork(&self) -> Option<Stream> {
        Some(Stream { source: self.source.fork()?, ahead: self.ahead.fork()? })
    }

    /// The stream of a task that has ended and reads no more: nothing.
    pub(crate) fn ended() -> Stream {
        Stream::new(Box::new(std::iter::empty()))
    }
}

/// Accesses a task took from its source and has not simulated yet: `accesses[at..]`,
/// then, once the source gave it, the stream's end or the error that ended it.
///
/// The engine takes them [`Lookahead::BATCH`] at a time, in one call to the source
/// ([`AccessSource::next_accesses`]), and keeps at least `user::LOOKAHEAD` of them
/// ahead of the one it simulates so that their page-table entries can be loaded early.
#[derive(Debug, Default)]
pub(crate) struct Lookahead {
    pub(crate) accesses: Vec<Access>,
    /// The next use of each access (`AccessSource::next_use`), when the LRU wants next
    /// uses; empty otherwise.
    pub(crate) next_uses: Vec<Option<u64>>,
    /// The page of each access whose PTE was prefetched, when the page existed then.
    pub(crate) pages: Vec<Option<PageId>>,
    /// Index of the next access to simulate.
    pub(crate) at: usize,
    /// How the stream ended after `accesses`, once the source said: `Ok` at its end, or
    /// the error that ended it (handed out once, then `Ok`).
    pub(crate) end: Option<Result<(), TraceError>>,
}

impl Lookahead {
    /// Accesses taken from the source at once.
    pub(crate) const BATCH: usize = 128;

    /// Accesses taken and not simulated yet.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.accesses.len() - self.at
    }

    /// Drops the accesses already simulated and takes the next batch from `source`, with
    /// each access's next use when `next_uses` is set. Does nothing once the stream ended.
    #[inline(never)]
    pub(crate) fn refill(&mut self, source: &mut dyn AccessSource, next_uses: NextUses) {
        let next_uses = next_uses == NextUses::Read;
        if self.end.is_some() {
            return;
        }
        self.accesses.drain(..self.at);
        self.pages.drain(..self.at);
        if next_uses {
            self.next_uses.drain(..self.at);
        }
        self.at = 0;
        let before = self.accesses.len();
        let read = if next_uses {
            // The next use answers for the access last returned: one at a time.
            (|| {
                for _ in 0..Self::BATCH {
                    let Some(access) = source.next_access()? else { break };
                    self.accesses.push(access);
                    self.next_uses.push(source.next_use());
                }
                Ok(())
            })()
        } else {
            source.next_accesses(&mut self.accesses, Self::BATCH)
        };
        let n_read = self.accesses.len() - before;
        match read {
            Ok(()) if n_read == Self::BATCH => {}
            Ok(()) => self.end = Some(Ok(())),
            Err(err) => self.end = Some(Err(err)),
        }
        self.pages.resize(self.accesses.len(), None);
    }

    /// A copy for a forked task, or `None` while it holds an error not handed out yet.
    fn fork(&self) -> Option<Lookahead> {
        let end = match &self.end {
            None => None,
            Some(Ok(())) => Some(Ok(())),
            Some(Err(_)) => return None,
        };
        Some(Lookahead {
            accesses: self.accesses.clone(),
            next_uses: self.next_uses.clone(),
            pages: self.pages.clone(),
            at: self.at,
            end,
        })
    }
}
