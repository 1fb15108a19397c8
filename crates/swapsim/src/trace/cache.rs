//! First passes over traces, shared by the runs of one command that replay the same trace.

use anyhow::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
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

impl std::fmt::Debug for TraceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceCache").finish_non_exhaustive()
    }
}

impl TraceCache {
    /// Announces one more run of the trace `key`.
    pub(crate) fn expect(&self, key: &str) {
        self.entries.lock().expect("no cache user panicked").entry(key.to_string()).or_default().waiting += 1;
    }

    /// Whether no trace is held: every announced run has been served.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.entries.lock().expect("no cache user panicked").is_empty()
    }

    /// Whether the run asking is the only one announced for trace `key` that has not been
    /// served, with no first pass computed for it: then it is served here (it will read the
    /// trace on its own, and nothing is kept for others), and true is returned.
    pub(super) fn serve_sole(&self, key: &str) -> bool {
        let mut entries = self.entries.lock().expect("no cache user panicked");
        let sole = match entries.get(key) {
            None => true,
            // A pass being computed holds its lock: then it is not the sole reader's to skip.
            Some(entry) => entry.waiting <= 1 && entry.pass.try_lock().is_ok_and(|pass| pass.is_none()),
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
            let mut entries = self.entries.lock().expect("no cache user panicked");
            let entry = entries.entry(key.to_string()).or_default();
            entry.waiting = entry.waiting.saturating_sub(1);
            let pass = Arc::clone(&entry.pass);
            if entry.waiting == 0 {
                entries.remove(key);
            }
            pass
        };
        let mut pass = pass.lock().expect("no cache user panicked");
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
}
