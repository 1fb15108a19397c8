//! Turning a task's records into accesses on a thread of its own, ahead of their use.
//!
//! The task of a one-thread trace checks every record it hands out (its thread, its time)
//! and converts it to an access. Done between accesses, on the engine's thread, that pass
//! over records decoded on another core cost a replay of mostly resident hits a tenth of
//! its time, most of it waiting for the records' cache lines to come over. [`AccessesAhead`]
//! runs such a stream on a thread of its own, which hands the accesses back in batches over
//! a bounded channel, so that on a machine with a spare core the work overlaps the
//! simulation.
//!
//! Nothing observable changes: the accesses, and the error that ends them (delivered after
//! every access before it, and again on every later call, as the stream delivers it), are
//! those of the wrapped stream, which runs exactly as it would on the engine's thread. The
//! thread starts on the first call, so a stream that is never read costs none. Memory stays
//! bounded: at most [`BATCHES_IN_FLIGHT`] batches of [`BATCH_ACCESSES`] accesses are made
//! ahead, and their vectors are reused. Dropping the stream early stops the thread at its
//! next batch.

use crate::pipe::Pipe;
use swapsim_core::{Access, AccessSource, TraceError};

/// Accesses per batch (512 KiB). Fewer, larger batches wake the other thread less often,
/// which in a virtual machine costs tens of microseconds each time.
pub(crate) const BATCH_ACCESSES: usize = 16384;
/// Batches made ahead of the reader, besides the one being read.
const BATCHES_IN_FLIGHT: usize = 2;

/// Accesses made together, and what the stream said after them.
struct Batch {
    accesses: Vec<Access>,
    result: Result<(), TraceError>,
}

impl Default for Batch {
    fn default() -> Batch {
        Batch { accesses: Vec::new(), result: Ok(()) }
    }
}

/// A stream read on a thread of its own; see the module doc.
pub(crate) struct AccessesAhead {
    /// The stream, until the first call moves it to its thread.
    source: Option<Box<dyn AccessSource>>,
    /// Batches from the thread, once it started.
    pipe: Option<Pipe<Batch>>,
    /// The current batch; its result is taken once it is in hand.
    batch: Batch,
    /// Index in `batch.accesses` of the next access to hand out.
    at: usize,
    /// The error that ended the current batch, handed out once its accesses are.
    error: Option<TraceError>,
    /// The stream ended after the current batch.
    ended: bool,
}

impl AccessesAhead {
    /// Wraps `source`; its thread starts on the first call.
    pub(crate) fn new(source: Box<dyn AccessSource>) -> AccessesAhead {
        AccessesAhead {
            source: Some(source),
            pipe: None,
            batch: Batch::default(),
            at: 0,
            error: None,
            ended: false,
        }
    }

    /// Takes the next batch; false at the end of the stream.
    fn next_batch(&mut self) -> Result<bool, TraceError> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        if self.ended {
            return Ok(false);
        }
        if let Some(mut source) = self.source.take() {
            let pipe = Pipe::spawn("trace-accesses", BATCHES_IN_FLIGHT, move |batch: &mut Batch| {
                batch.accesses.clear();
                batch.result = source.next_accesses(&mut batch.accesses, BATCH_ACCESSES);
                // After an error the thread goes on asking, so that the reader gets the
                // error again as often as it asks.
                batch.result.is_err() || batch.accesses.len() == BATCH_ACCESSES
            });
            self.pipe = Some(pipe.map_err(|err| stopped(&format!("its thread could not start: {err}")))?);
        }
        let Some(pipe) = &self.pipe else { return Err(stopped("its thread did not start")) };
        // The thread ends only after the stream's end: no batch before it means the
        // thread panicked.
        if !pipe.next(&mut self.batch) {
            return Err(stopped("its thread stopped"));
        }
        self.at = 0;
        match std::mem::replace(&mut self.batch.result, Ok(())) {
            Ok(()) => self.ended = self.batch.accesses.len() < BATCH_ACCESSES,
            Err(err) => self.error = Some(err),
        }
        Ok(true)
    }
}

/// The error of a stream whose thread is gone.
fn stopped(why: &str) -> TraceError {
    TraceError::Malformed { line: 0, column: None, message: format!("the trace's reader stopped: {why}") }
}

impl AccessSource for AccessesAhead {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        loop {
            if let Some(&access) = self.batch.accesses.get(self.at) {
                self.at += 1;
                return Ok(Some(access));
            }
            if !self.next_batch()? {
                return Ok(None);
            }
        }
    }

    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        let mut wanted = max;
        while wanted > 0 {
            let rest = &self.batch.accesses[self.at..];
            if !rest.is_empty() {
                let k = rest.len().min(wanted);
                out.extend_from_slice(&rest[..k]);
                self.at += k;
                wanted -= k;
                continue;
            }
            if !self.next_batch()? {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim_core::VirtPage;

    /// A stream of `n` accesses that fails after them, and again on every later call, as
    /// the trace's task streams do; without `fail`, it just ends.
    struct Counted {
        n: u64,
        next: u64,
        fail: bool,
        calls_after_end: u32,
    }

    impl AccessSource for Counted {
        fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
            if self.next < self.n {
                self.next += 1;
                let write = self.next.is_multiple_of(3);
                return Ok(Some(Access { vpage: VirtPage(self.next * 7), write, think_ns: Some(self.next) }));
            }
            self.calls_after_end += 1;
            if self.fail {
                let message = format!("bad record, asked {} times", self.calls_after_end);
                return Err(TraceError::Malformed { line: self.n + 1, column: None, message });
            }
            Ok(None)
        }
    }

    /// What a stream yields when asked `asks` times for up to `max` accesses (0: one at a
    /// time), as text.
    fn drain(source: &mut dyn AccessSource, max: usize, asks: usize) -> Vec<String> {
        let mut seen = Vec::new();
        for _ in 0..asks {
            if max == 0 {
                match source.next_access() {
                    Ok(Some(a)) => seen.push(format!("{a:?}")),
                    Ok(None) => seen.push("end".into()),
                    Err(err) => seen.push(format!("error: {err}")),
                }
                continue;
            }
            let mut out = Vec::new();
            let res = source.next_accesses(&mut out, max);
            seen.extend(out.iter().map(|a| format!("{a:?}")));
            match res {
                Ok(()) if out.len() < max => seen.push("end".into()),
                Ok(()) => {}
                Err(err) => seen.push(format!("error: {err}")),
            }
        }
        seen
    }

    #[test]
    fn yields_what_the_stream_yields_across_batches_and_after_its_end() {
        for n in [0, 1, BATCH_ACCESSES as u64 - 1, BATCH_ACCESSES as u64, 2 * BATCH_ACCESSES as u64 + 17] {
            for fail in [false, true] {
                for (max, asks) in [(0, n as usize + 3), (128, n as usize / 128 + 4), (BATCH_ACCESSES + 5, 5)]
                {
                    let counted = || Counted { n, next: 0, fail, calls_after_end: 0 };
                    let direct = drain(&mut counted(), max, asks);
                    let ahead = drain(&mut AccessesAhead::new(Box::new(counted())), max, asks);
                    assert_eq!(ahead, direct, "n {n} fail {fail} max {max}");
                }
            }
        }
    }

    #[test]
    fn a_stream_never_read_starts_no_thread() {
        let unread =
            AccessesAhead::new(Box::new(Counted { n: 10, next: 0, fail: false, calls_after_end: 0 }));
        assert!(unread.pipe.is_none());
    }
}
