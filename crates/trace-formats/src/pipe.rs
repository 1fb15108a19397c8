//! Batches made on a thread of their own and handed over a bounded channel, their vectors
//! going back to the thread for reuse: the mechanism of [`crate::readahead`] (records
//! decoded ahead) and [`crate::access_ahead`] (accesses converted ahead).

use std::sync::mpsc::{self, Receiver, Sender};

/// The reading end of a thread that makes batches of type `B`.
pub(crate) struct Pipe<B> {
    full: Receiver<B>,
    /// Spent batches, back to the thread.
    empty: Sender<B>,
}

impl<B: Default + Send + 'static> Pipe<B> {
    /// Starts thread `name`. It calls `fill` on a batch (one the reader gave back, as it
    /// left it, or a new one) and hands it over, at most `in_flight` batches ahead of the
    /// reader, until `fill` returns false (that batch was the last) or the reader is gone.
    pub(crate) fn spawn(
        name: &str,
        in_flight: usize,
        mut fill: impl FnMut(&mut B) -> bool + Send + 'static,
    ) -> std::io::Result<Pipe<B>> {
        let (full_tx, full) = mpsc::sync_channel::<B>(in_flight);
        let (empty, empty_rx) = mpsc::channel::<B>();
        std::thread::Builder::new().name(name.into()).spawn(move || loop {
            let mut batch = empty_rx.try_recv().unwrap_or_default();
            let more = fill(&mut batch);
            if full_tx.send(batch).is_err() || !more {
                return;
            }
        })?;
        Ok(Pipe { full, empty })
    }

    /// Replaces `current` with the next batch, giving the spent one back; false when the
    /// thread is gone without handing over another (it panicked, or was asked past its
    /// last batch).
    pub(crate) fn next(&self, current: &mut B) -> bool {
        let Ok(batch) = self.full.recv() else { return false };
        let spent = std::mem::replace(current, batch);
        // The thread may be gone after its last batch; the batch is then just freed.
        let _ = self.empty.send(spent);
        true
    }
}
