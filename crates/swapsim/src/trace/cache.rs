//! First passes over traces, shared by the runs of one command that replay the same trace.
//!
//! The runs sharing a pass run in parallel, and a run may panic (a bug in a reader or in
//! the model) while it holds one of the cache's locks, for instance while it computes the
//! pass the others wait for; the commands that run many scenarios catch such a panic and go
//! on with the other runs. Every lock here guards state that stays consistent at any point
//! a panic can leave it (a count of runs updated in one step, a pass that is either there
//! or not), so the cache takes its locks whatever a panic left them in ([`lock`]): the next
//! run of the trace computes the pass the panicking one did not, instead of every later
//! run panicking on the poisoned lock with a message about the cache.

use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use swapsim_trace_formats::FirstPass;

/// First passes over traces, shared by the runs of one command that replay the same trace
/// (validate's cases), so that each trace is read once. An entry goes when the last run
/// that announced it ([`TraceCache::expect`]) has taken it.
#[derive(Default)]
pub(crate) struct TraceCache {
    entries: Mutex<HashMap<String, CacheEntry>>,
}

#[derive(Default)]
struct CacheEntry {
    /// Runs announced and not yet served.
    waiting: usize,
    /// Filled by the first run to read the trace; later ones wait on the lock.
    pass: Arc<Mutex<Option<FirstPass>>>,
}

/// Locks `mutex`, also when a panic of another run poisoned it (see the module
/// documentation for why what it guards is still consistent).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl std::fmt::Debug for TraceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceCache").finish_non_exhaustive()
    }
}

impl TraceCache {
    /// Announces one more run of the trace `key`.
    pub(crate) fn expect(&self, key: &str) {
        lock(&self.entries).entry(key.to_string()).or_default().waiting += 1;
    }

    /// Whether no trace is held: every announced run has been served.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        lock(&self.entries).is_empty()
    }

    /// Whether the run asking is the only one announced for trace `key` that has not been
    /// served, with no first pass computed for it: then it is served here (it will read the
    /// trace on its own, and nothing is kept for others), and true is returned.
    pub(super) fn serve_sole(&self, key: &str) -> bool {
        let mut entries = lock(&self.entries);
        let sole = match entries.get(key) {
            None => true,
            // A pass being computed holds its lock: then it is not the sole reader's to skip.
            Some(entry) => {
                entry.waiting <= 1
                    && match entry.pass.try_lock() {
                        Ok(pass) => pass.is_none(),
                        Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner().is_none(),
                        Err(TryLockError::WouldBlock) => false,
                    }
            }
        };
        if sole {
            entries.remove(key);
        }
        sole
    }

    /// The first pass over trace `key`, computed by `read` if no run has yet; the entry is
    /// dropped once every announced run has been served.
    pub(super) fn first_pass(
        &self,
        key: &str,
        read: impl FnOnce() -> Result<FirstPass>,
    ) -> Result<FirstPass> {
        let pass = {
            let mut entries = lock(&self.entries);
            let entry = entries.entry(key.to_string()).or_default();
            entry.waiting = entry.waiting.saturating_sub(1);
            let pass = Arc::clone(&entry.pass);
            if entry.waiting == 0 {
                entries.remove(key);
            }
            pass
        };
        let mut pass = lock(&pass);
        if let Some(first) = &*pass {
            return Ok(first.clone());
        }
        let first = read()?;
        *pass = Some(first.clone());
        Ok(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim_trace_formats::{FirstPassSource, KeepRecords, OpenOptions, Pace, ReplayBuilder};

    /// The first pass over a text trace of `text`, as a run would read it.
    fn read_text(text: &'static str) -> Result<FirstPass> {
        let open = move || swapsim_trace_formats::open(Box::new(text.as_bytes()), OpenOptions::default());
        let builder = ReplayBuilder::new(open, "t", Pace::Cpu);
        Ok(builder.first_pass(FirstPassSource::Stream(KeepRecords::IfShort))?)
    }

    /// Announced runs share one read of the trace; once all are served the entry goes.
    #[test]
    fn a_trace_cache_reads_each_trace_once_for_the_runs_announced() {
        let cache = TraceCache::default();
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            read_text("R 1\nW 2\n")
        };
        cache.expect("k");
        cache.expect("k");
        let first = cache.first_pass("k", read).unwrap();
        let second = cache.first_pass("k", read).unwrap();
        assert_eq!((reads.get(), first.summary(), first.summary().records), (1, second.summary(), 2));
        assert!(cache.is_empty(), "served runs leave nothing behind");
        cache.first_pass("k", read).unwrap();
        assert_eq!(reads.get(), 2, "an unannounced run reads the trace itself");
    }

    /// A run that panics while it reads the trace, caught as the commands that run many
    /// scenarios catch it, leaves the cache usable: the next run reads the trace itself and
    /// shares its pass, and a run left alone is still served as the sole reader.
    #[test]
    fn a_run_that_panics_while_reading_leaves_the_cache_usable() {
        let cache = TraceCache::default();
        let panicking = || -> Result<FirstPass> { panic!("a bug while reading the trace") };
        for _ in 0..3 {
            cache.expect("k");
        }
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cache.first_pass("k", panicking)));
        assert!(caught.is_err(), "the panic reaches the run that panicked");
        let second =
            cache.first_pass("k", || read_text("R 1\nW 2\n")).expect("a healthy run reads the trace");
        let third = cache.first_pass("k", panicking).expect("the pass is shared, not read again");
        assert_eq!((second.summary().records, third.summary()), (2, second.summary()));
        assert!(cache.is_empty(), "served runs leave nothing behind");

        cache.expect("j");
        cache.expect("j");
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cache.first_pass("j", panicking)));
        assert!(caught.is_err());
        assert!(cache.serve_sole("j"), "the one run left reads the trace on its own");
        assert!(cache.is_empty());
    }
}
