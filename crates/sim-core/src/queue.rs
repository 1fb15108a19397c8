//! The event queue: a min-heap ordered by `(time, seq)`.
//!
//! The entry scheduled last waits beside the heap until the next pop or schedule. Most
//! schedules are a CPU handing its turn to the earliest event (a task preempted at its
//! clock): the next pop then either returns that entry without touching the heap, or
//! puts it in the heap's top place while taking the top out, one sift instead of a push
//! and a pop. The order delivered is the heap's: `(time, seq)`, the smallest first.
//!
//! `seq` is a counter that only grows, so events scheduled for the same instant are
//! delivered in the order they were scheduled (FIFO tie rule). Scheduling an event before
//! the current time is refused with an error; only the engine schedules, so the engine
//! treats a refusal as a broken invariant.

use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// An entry waiting in the queue.
#[derive(Clone, Debug)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

/// The most events [`EventQueue::take_due_past`] looks past.
pub const PASS_MAX: usize = 4;

/// Refusal to schedule an event in the past.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event scheduled at {at} which is before the current time {now}")]
pub struct ScheduleInPast {
    /// The requested time.
    pub at: SimTime,
    /// The queue's current time.
    pub now: SimTime,
}

/// A deterministic priority queue of future events.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    /// The entry scheduled last, not yet in the heap.
    held: Option<Entry<E>>,
    /// The earliest pending time ([`SimTime::MAX`] when none), kept for [`Self::peek_time`],
    /// which the engine reads at every access.
    first_time: SimTime,
    next_seq: u64,
    now: SimTime,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            held: None,
            first_time: SimTime::MAX,
            next_seq: 0,
            now: SimTime::ZERO,
        }
    }
}

impl<E> EventQueue<E> {
    /// The time of the last event popped (the simulation's "now").
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `time`, which must not be before `now`.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: E) -> Result<(), ScheduleInPast> {
        if time < self.now {
            return Err(ScheduleInPast { at: time, now: self.now });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.first_time = self.first_time.min(time);
        if let Some(earlier) = self.held.replace(Entry { time, seq, event }) {
            self.heap.push(Reverse(earlier));
        }
        Ok(())
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let entry = self.pop_entry()?;
        debug_assert!(entry.time >= self.now, "time went backwards");
        self.now = entry.time;
        Some((entry.time, entry.event))
    }

    /// Removes and returns the earliest event without advancing `now`: an event taken
    /// ahead of its turn by a context whose clock runs ahead of the queue (reclaim taking
    /// the completions that fell due while it scanned), which leaves the other contexts
    /// free to schedule events between `now` and its time.
    pub fn take_first(&mut self) -> Option<(SimTime, E)> {
        let entry = self.pop_entry()?;
        Some((entry.time, entry.event))
    }

    #[inline]
    fn pop_entry(&mut self) -> Option<Entry<E>> {
        let entry = match self.held.take() {
            None => self.heap.pop()?.0,
            Some(held) => match self.heap.peek_mut() {
                // The top comes first: the held entry takes its place (sifted down as the
                // guard drops) and the top is delivered.
                Some(mut top) if top.0 < held => std::mem::replace(&mut top.0, held),
                _ => held,
            },
        };
        self.first_time = self.heap.peek().map_or(SimTime::MAX, |Reverse(e)| e.time);
        Some(entry)
    }

    /// The earliest pending event and its time, if any.
    pub fn peek(&self) -> Option<(SimTime, &E)> {
        self.first().map(|e| (e.time, &e.event))
    }

    /// The time of the earliest pending event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        (!self.is_empty()).then_some(self.first_time)
    }

    /// The time of the earliest pending event, [`SimTime::MAX`] when none.
    #[inline]
    pub fn next_time(&self) -> SimTime {
        self.first_time
    }

    /// The earliest pending entry: the held one or the heap's top.
    #[inline]
    fn first(&self) -> Option<&Entry<E>> {
        match (&self.held, self.heap.peek()) {
            (Some(held), Some(Reverse(top))) => Some(if top < held { top } else { held }),
            (Some(held), None) => Some(held),
            (None, top) => top.map(|Reverse(e)| e),
        }
    }

    /// Removes the earliest pending event due at or before `limit` for which `take` holds,
    /// looking past earlier ones for which `pass` holds; those stay pending in their order
    /// (at most [`PASS_MAX`] of them). `None` when nothing due is taken: the earliest
    /// event is neither, or is later than `limit`. Unlike [`Self::pop`], `now` does not
    /// move: the events passed over are still to come.
    pub fn take_due_past(
        &mut self,
        limit: SimTime,
        take: impl Fn(&E) -> bool,
        pass: impl Fn(&E) -> bool,
    ) -> Option<(SimTime, E)> {
        if let Some(held) = self.held.take() {
            self.heap.push(Reverse(held));
        }
        let mut passed: [Option<Entry<E>>; PASS_MAX] = std::array::from_fn(|_| None);
        let mut n = 0;
        let mut found = None;
        while let Some(Reverse(top)) = self.heap.peek() {
            if top.time > limit {
                break;
            }
            if take(&top.event) {
                found = self.heap.pop().map(|Reverse(e)| e);
                break;
            }
            if n == PASS_MAX || !pass(&top.event) {
                break;
            }
            passed[n] = self.heap.pop().map(|Reverse(e)| e);
            n += 1;
        }
        for e in passed.into_iter().flatten() {
            self.heap.push(Reverse(e));
        }
        self.first_time = self.heap.peek().map_or(SimTime::MAX, |Reverse(e)| e.time);
        found.map(|e| (e.time, e.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + usize::from(self.held.is_some())
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_are_fifo_and_past_is_refused() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(10), "b").unwrap();
        q.schedule(SimTime(5), "a").unwrap();
        q.schedule(SimTime(10), "c").unwrap();
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, ["a", "b", "c"]);
        assert_eq!(q.now(), SimTime(10));
        assert_eq!(q.schedule(SimTime(9), "late"), Err(ScheduleInPast { at: SimTime(9), now: SimTime(10) }));
    }

    #[test]
    fn taking_past_events_leaves_them_pending_in_order_and_time_unmoved() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(5), "pass-a").unwrap();
        q.schedule(SimTime(6), "pass-b").unwrap();
        q.schedule(SimTime(7), "take").unwrap();
        q.schedule(SimTime(8), "stop").unwrap();
        q.schedule(SimTime(9), "take-late").unwrap();
        let take = |e: &&str| e.starts_with("take");
        let pass = |e: &&str| e.starts_with("pass");
        // Not due by 6: nothing is taken.
        assert_eq!(q.take_due_past(SimTime(6), take, pass), None);
        assert_eq!(q.take_due_past(SimTime(10), take, pass), Some((SimTime(7), "take")));
        // "stop" is neither: the later one stays where it is.
        assert_eq!(q.take_due_past(SimTime(10), take, pass), None);
        assert_eq!(q.now(), SimTime::ZERO);
        assert_eq!(q.take_first(), Some((SimTime(5), "pass-a")));
        assert_eq!(q.now(), SimTime::ZERO);
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(rest, ["pass-b", "stop", "take-late"]);
        assert_eq!(q.now(), SimTime(9));
    }

    proptest::proptest! {
        /// Any mix of schedules and pops delivers what a plain sorted list of `(time, seq)`
        /// would: the held entry changes the work, never the order.
        #[test]
        fn delivers_in_time_then_schedule_order(ops in proptest::collection::vec((0u64..6, 0u8..3), 1..200)) {
            let mut q = EventQueue::default();
            let mut reference: Vec<(SimTime, u64)> = Vec::new();
            let mut seq = 0u64;
            for (delay, what) in ops {
                if what == 0 {
                    let got = q.pop();
                    reference.sort();
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    proptest::prop_assert_eq!(got, want);
                } else {
                    let at = SimTime(q.now().0 + delay);
                    q.schedule(at, seq).unwrap();
                    reference.push((at, seq));
                    seq += 1;
                }
                reference.sort();
                proptest::prop_assert_eq!(q.len(), reference.len());
                proptest::prop_assert_eq!(q.peek_time(), reference.first().map(|r| r.0));
                proptest::prop_assert_eq!(q.peek().map(|p| p.0), reference.first().map(|r| r.0));
            }
        }
    }
}
