//! Simulated time.
//!
//! Time is an integer count of nanoseconds since the start of a run. Floating point never
//! enters the engine's clock; it appears only in derived statistics of reports. The wall
//! clock is never read here.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, in nanoseconds since the run started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The end of time: later than any instant a run reaches.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Time elapsed since `earlier`, saturating at zero.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }

    /// Seconds as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A duration of `us` microseconds.
    pub const fn from_micros(us: u64) -> SimDuration {
        SimDuration(us.saturating_mul(1_000))
    }

    /// Seconds as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

/// Adding to a time saturates at [`SimTime::MAX`], the end of time, about 584 years in:
/// a trace whose clock jumps that far, repeated, must not wrap the clock back to the
/// start. No run reaches it: the engine stops at `limits.max_sim_seconds`, which lies
/// before it, and reports the run as stopped there.
impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, rhs: SimDuration) {
        *self = *self + rhs;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, rhs: SimDuration) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    fn sub(self, rhs: SimTime) -> SimDuration {
        self.since(rhs)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_saturates_at_its_end_instead_of_wrapping_or_panicking() {
        let late = SimTime(u64::MAX - 5);
        assert_eq!(late + SimDuration(10), SimTime::MAX);
        let mut t = SimTime(1 << 63);
        t += SimDuration(1 << 63);
        assert_eq!(t, SimTime::MAX);
        assert_eq!(SimDuration(u64::MAX) + SimDuration(1), SimDuration(u64::MAX));
        assert_eq!(SimDuration::from_micros(u64::MAX), SimDuration(u64::MAX));
        assert_eq!(SimTime(5) - SimTime(9), SimDuration::ZERO);
    }
}
