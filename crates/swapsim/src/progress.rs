//! What a long call tells its caller while it runs: the accesses a run has replayed, the
//! runs an experiment has finished, the cases a validation has replayed.
//!
//! The library draws nothing and reads no clock. A caller that wants a progress bar
//! passes a [`Progress`] and turns the counts into a bar, a rate and an estimate of the
//! time left. Progress is told counts and nothing else, so watching a call never changes
//! what it returns.
//!
//! Sweeps report through [`crate::sweep::Progress`] instead, which also names the variant
//! each thread is running.

/// Told how far a long call has got. `&()` reports nothing.
///
/// The calls that take one say what they count: [`crate::Prepared::run_with_progress`]
/// counts accesses, [`crate::experiment::run_with_progress`] runs and
/// [`crate::validate::run_with_progress`] cases. Each first reports `done` 0 with the
/// total, as soon as the total is known, and last reports the final count.
pub trait Progress: Sync {
    /// `done` units of `total` are finished; `total` is `None` when it is not known.
    ///
    /// Called on the threads that do the work: the calls of a parallel call can arrive
    /// out of order, so a caller that draws should keep the largest `done` it has seen.
    /// Keep it cheap; a run calls it every [`swapsim_core::PROGRESS_ACCESSES`] accesses.
    fn advanced(&self, _done: u64, _total: Option<u64>) {}
}

impl Progress for () {}
