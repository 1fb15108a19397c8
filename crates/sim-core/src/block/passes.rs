//! Completion in passes, for a device whose host serves its queue in a loop
//! ([`BlockDevice::pass_signal`](crate::device::BlockDevice::pass_signal)).
//!
//! A virtual disk's host takes the requests the guest has queued one after another and,
//! once its loop finds the queue empty, signals the guest once for all of them: a request
//! queued while the host is still in its loop is served in the same pass, and none of the
//! pass's requests completes before the last is served. The block layer keeps the passes
//! whose signal has not come yet; each has one completion event, for its first request
//! (the handle), which is put off while the pass grows.

use super::ReqId;
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// One pass: its requests are the next `members` of [`Passes::members`].
#[derive(Clone, Copy, Debug)]
struct Pass {
    /// The request whose completion event stands for the pass.
    handle: ReqId,
    /// When the host has served the pass's last request so far.
    end: SimTime,
    /// How long after `end` the guest sees the pass's completions.
    signal: SimDuration,
    /// Just after the previous pass is signalled: passes are signalled one after another,
    /// never two at one time, so that their events come in order.
    not_before: SimTime,
    members: u32,
}

impl Pass {
    fn due(&self) -> SimTime {
        (self.end + self.signal).max(self.not_before)
    }
}

/// The passes of one device not yet signalled, oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct Passes {
    passes: VecDeque<Pass>,
    /// The requests of those passes, in dispatch order.
    members: VecDeque<ReqId>,
}

impl Passes {
    /// A request dispatched at `at`, served by `served`, joins the pass the host is still
    /// in, if there is one (it is, until the time its last request is served); returns
    /// whether it did.
    pub(super) fn join(&mut self, id: ReqId, at: SimTime, served: SimTime) -> bool {
        match self.passes.back_mut() {
            Some(pass) if at <= pass.end => {
                pass.end = pass.end.max(served);
                pass.members += 1;
                self.members.push_back(id);
                true
            }
            _ => false,
        }
    }

    /// A request finding the host idle opens a pass, to be signalled `signal` after its
    /// last request is served; returns when that is, as far as it is known now.
    pub(super) fn open(&mut self, id: ReqId, served: SimTime, signal: SimDuration) -> SimTime {
        let not_before = self.passes.back().map_or(SimTime::ZERO, |prev| prev.due() + SimDuration(1));
        let pass = Pass { handle: id, end: served, signal, not_before, members: 1 };
        self.passes.push_back(pass);
        self.members.push_back(id);
        pass.due()
    }

    /// The completion event of `handle`'s pass fell due at `now`: `Ok` with the number of
    /// the pass's requests when it is signalled now (take them with [`next_member`]), or
    /// `Err` with the later time the pass, grown since, is signalled at.
    ///
    /// [`next_member`]: Passes::next_member
    pub(super) fn signal(&mut self, handle: ReqId, now: SimTime) -> Result<u32, SimTime> {
        let pass = *self.passes.front().expect("a pass's event with no pass pending");
        assert_eq!(pass.handle, handle, "passes are signalled in order");
        let due = pass.due();
        if now < due {
            return Err(due);
        }
        self.passes.pop_front();
        Ok(pass.members)
    }

    /// The next request of the pass being signalled.
    pub(super) fn next_member(&mut self) -> ReqId {
        self.members.pop_front().expect("a signalled pass's request")
    }

    /// True while any pass waits for its signal.
    pub(super) fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_grows_while_the_host_serves_it_and_is_signalled_once() {
        let mut p = Passes::default();
        let us = |n: u64| SimTime(n * 1000);
        let signal = SimDuration(10_000);
        // Opened at 0, served by 7 us: due at 17 us.
        assert_eq!(p.open(ReqId(0), us(7), signal), us(17));
        // Dispatched at 5 us, while the host serves the first: it joins, the pass now ends at 14.
        assert!(p.join(ReqId(1), us(5), us(14)));
        // Its event, due at 17, is put off to 24.
        assert_eq!(p.signal(ReqId(0), us(17)), Err(us(24)));
        // A request at 15 us finds the host idle: a pass of its own, not before 24 us.
        assert!(!p.join(ReqId(2), us(15), us(16)));
        assert_eq!(p.open(ReqId(2), us(16), signal), us(26));
        assert_eq!(p.signal(ReqId(0), us(24)), Ok(2));
        assert_eq!((p.next_member(), p.next_member()), (ReqId(0), ReqId(1)));
        assert_eq!(p.signal(ReqId(2), us(26)), Ok(1));
        assert_eq!(p.next_member(), ReqId(2));
        assert!(p.is_empty());
        // A signal shorter than the previous pass's leaves it after that one.
        p.open(ReqId(3), us(30), SimDuration(50_000));
        assert!(!p.join(ReqId(4), us(31), us(32)));
        assert_eq!(p.open(ReqId(4), us(32), SimDuration(1_000)), SimTime(80_001));
    }
}
