//! The event queue: a min-heap ordered by `(time, seq)`.
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
    next_seq: u64,
    now: SimTime,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0, now: SimTime::ZERO }
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
        self.heap.push(Reverse(Entry { time, seq, event }));
        Ok(())
    }

    /// Removes and returns the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Reverse(entry) = self.heap.pop()?;
        debug_assert!(entry.time >= self.now, "time went backwards");
        self.now = entry.time;
        Some((entry.time, entry.event))
    }

    /// The earliest pending event and its time, if any.
    pub fn peek(&self) -> Option<(SimTime, &E)> {
        self.heap.peek().map(|Reverse(e)| (e.time, &e.event))
    }

    /// The time of the earliest pending event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(e)| e.time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
