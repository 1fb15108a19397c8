//! Forking a simulation: one run's state copied into several that continue apart, so that
//! variants sharing a long common beginning (a fill, a hibernation) simulate it once.

use super::stream::Stream;
use super::{Setup, Simulation, World};
use crate::error::{ForkError, SimError};
use crate::event::Event;

impl Simulation {
    /// Runs events until the timeline's operation `i` (counted from 0) is the next event,
    /// not yet started. Returns `Ok(false)` when the run ended first.
    pub fn run_until_op(&mut self, i: usize) -> Result<bool, SimError> {
        loop {
            if matches!(self.world.mm.queue.peek(), Some((_, &Event::Timeline(j))) if j as usize == i) {
                return Ok(true);
            }
            if !self.step()? {
                return Ok(false);
            }
        }
    }

    /// A copy of the simulation as it stands, which continues on its own: stepping either
    /// leaves the other as it was, and each gives the report it would have given alone.
    /// The world is cloned; each stream is copied through [`crate::AccessSource::fork`].
    ///
    /// Fails, naming the task, when a user task still reads a stream that cannot be copied
    /// or holds a read error not yet delivered. Tasks that have ended no longer need theirs.
    pub fn fork(&self) -> Result<Simulation, SimError> {
        let streams = self
            .streams
            .iter()
            .zip(&self.world.tasks)
            .map(|(stream, task)| {
                let copy = if task.ended_at.is_some() { Some(Stream::ended()) } else { stream.fork() };
                copy.ok_or_else(|| ForkError::StreamDoesNotFork { task: task.name.clone() })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Simulation { world: self.world.clone(), streams })
    }

    /// Whether [`Simulation::retune_swapin`] may still give the simulation other swap-in
    /// knobs: no page has been swapped in yet (a swap fault or swapoff would have read
    /// them), and no timeline operation has set one (the retuned knobs would undo it).
    pub fn can_retune_swapin(&self) -> bool {
        !self.world.swapped_in && !self.world.swapin_knobs_set
    }

    /// Gives a simulation that has not swapped anything in yet the swap-in knobs of
    /// `variant`: `vm.page-cluster`, `vma_ra_enabled` (which only the choice of readahead
    /// policy reads), swapoff's readahead-hit accounting, and the readahead and swap-in
    /// size policies, and the timeline operations not started yet (whose readahead policies
    /// are the variant's own). Until the first swap-in nothing has read the knobs, so the
    /// run continues exactly as a run of `variant` from the start would, provided
    /// `variant` is otherwise this simulation's setup; its configuration and the length of
    /// its timeline are checked for that (the tasks, device models and the operations that
    /// already ran are the caller's to match).
    ///
    /// Fails unless [`Simulation::can_retune_swapin`], or when `variant`'s configuration
    /// differs in anything else.
    pub fn retune_swapin(&mut self, variant: Setup) -> Result<(), SimError> {
        self.world.retune_swapin(variant)
    }
}

impl World {
    /// [`Simulation::retune_swapin`].
    fn retune_swapin(&mut self, variant: Setup) -> Result<(), SimError> {
        if self.swapped_in {
            return Err(ForkError::SwappedIn.into());
        }
        if self.swapin_knobs_set {
            return Err(ForkError::KnobsSet.into());
        }
        if variant.timeline.len() != self.timeline.len() {
            return Err(ForkError::TimelineLength {
                variant: variant.timeline.len(),
                this: self.timeline.len(),
            }
            .into());
        }
        let mut theirs = variant.config.get().clone();
        theirs.swap.page_cluster = self.mm.cfg.swap.page_cluster;
        theirs.swap.swapoff_readahead_hits = self.mm.cfg.swap.swapoff_readahead_hits;
        theirs.swap.vma_ra_enabled = self.mm.cfg.swap.vma_ra_enabled;
        if theirs != self.mm.cfg {
            return Err(ForkError::ConfigDiffers.into());
        }
        self.mm.take_swapin_knobs(&variant.config.get().swap);
        self.policies.readahead = variant.policies.readahead;
        self.policies.swapin = variant.policies.swapin;
        // The operations not started yet are the variant's own.
        let next = self.timeline_next;
        for (mine, theirs) in self.timeline.iter_mut().zip(variant.timeline).skip(next) {
            *mine = theirs;
        }
        Ok(())
    }
}
