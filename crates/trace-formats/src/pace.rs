//! How a replay's tasks spend time between accesses, and the stable names of the choices.
//!
//! This is a leaf module: the replay ([`crate::demux`]) reads the choice, and scenario files
//! and the command line name it, so the enum lives apart from all of them and imports
//! nothing. It knows no serialisation or argument-parsing library: callers map the names
//! [`Pace::name`] gives.

/// How the records of a trace become the accesses of tasks: where a task's think time
/// before each access comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pace {
    /// A task's think time before each access is the time since its thread's previous
    /// record (a thread's first access waits the time since the trace's first record, so
    /// threads start at their real offsets). Records without time are charged the CPU cost
    /// profile's `access_ns` instead.
    #[default]
    Timestamps,
    /// Every access is charged the CPU cost profile's `access_ns` (`think_ns: None`);
    /// timestamps are ignored.
    Cpu,
}

impl Pace {
    /// Every pace, in the order help texts list them.
    pub const ALL: [Pace; 2] = [Pace::Timestamps, Pace::Cpu];

    /// The stable name scenario files, the command line and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Pace::Timestamps => "timestamps",
            Pace::Cpu => "cpu",
        }
    }

    /// The pace named `name` ([`Pace::name`]), or `None`.
    pub fn from_name(name: &str) -> Option<Pace> {
        Pace::ALL.into_iter().find(|pace| pace.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for pace in Pace::ALL {
            assert_eq!(Pace::from_name(pace.name()), Some(pace));
        }
        assert_eq!(Pace::from_name("cpu-cost"), None);
        assert_eq!(Pace::default(), Pace::Timestamps);
    }
}
