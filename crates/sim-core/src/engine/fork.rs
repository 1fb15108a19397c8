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

    /// Whether every user task still reading its stream reads one that forks
    /// ([`crate::AccessSource::fork`]), so that [`Simulation::fork`] will not refuse for a
    /// stream. Copies each such stream once to find out.
    pub fn streams_fork(&self) -> bool {
        self.streams
            .iter()
            .zip(&self.world.tasks)
            .all(|(stream, task)| task.ended_at.is_some() || stream.fork().is_some())
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

    /// Runs events while the memory cgroup's charge stays more than `margin` pages below
    /// its limit and the machine's free memory more than `margin` above the low
    /// watermark: stops before the event at which the run comes that close, as it stands
    /// then. Returns `Ok(false)` when the run ended first.
    ///
    /// Reclaim starts at the limit or the watermark, so a run stopped here has usually
    /// read nothing of zswap yet ([`Simulation::can_retune_zswap`] says); an event
    /// that charges more than `margin` pages at once may have crossed into reclaim.
    pub fn run_until_near_reclaim(&mut self, margin: u64) -> Result<bool, SimError> {
        loop {
            let mm = &self.world.mm;
            let near_limit =
                mm.memcg_limit().is_some_and(|limit| mm.memcg_usage().saturating_add(margin) >= limit);
            let near_low = mm.frames.free_pages() <= mm.wmark.low.saturating_add(margin);
            if near_limit || near_low {
                return Ok(true);
            }
            if !self.step()? {
                return Ok(false);
            }
        }
    }

    /// Whether [`Simulation::retune_zswap`] may still give the simulation another zswap:
    /// nothing has read it yet (no store was tried, the shrinker was never called, no
    /// swap-in was told to the policy), and no timeline operation has started.
    pub fn can_retune_zswap(&self) -> bool {
        self.world.can_retune_zswap()
    }

    /// Gives a simulation that has not read zswap yet the `[zswap]` section of `variant`
    /// (whether zswap is on, its shrinker switch, pool limits and compressor), its
    /// protection policy and pool-limit writeback trigger, and its timeline. Until the
    /// first store nothing has read them, so the run continues exactly as a run of
    /// `variant` from the start would, provided `variant` is otherwise this simulation's
    /// setup; its configuration and the length of its timeline are checked for that (the
    /// tasks and device models are the caller's to match).
    ///
    /// Fails unless [`Simulation::can_retune_zswap`], or when `variant`'s configuration
    /// differs in anything else.
    pub fn retune_zswap(&mut self, variant: Setup) -> Result<(), SimError> {
        self.world.retune_zswap(variant)
    }
}

impl World {
    /// [`Simulation::can_retune_zswap`].
    fn can_retune_zswap(&self) -> bool {
        !self.mm.zswap.knobs_read && self.timeline_next == 0
    }

    /// A retune's variant must have as many timeline operations as this run.
    fn check_timeline_length(&self, variant: &Setup) -> Result<(), SimError> {
        if variant.timeline.len() == self.timeline.len() {
            return Ok(());
        }
        Err(ForkError::TimelineLength { variant: variant.timeline.len(), this: self.timeline.len() }.into())
    }

    /// [`Simulation::retune_zswap`].
    fn retune_zswap(&mut self, variant: Setup) -> Result<(), SimError> {
        if !self.can_retune_zswap() {
            return Err(ForkError::ZswapRead.into());
        }
        self.check_timeline_length(&variant)?;
        let mut theirs = variant.config.get().clone();
        theirs.zswap = self.mm.cfg.zswap.clone();
        if theirs != self.mm.cfg {
            return Err(ForkError::ConfigDiffers.into());
        }
        // Nothing has touched zswap yet: the variant's, built afresh, is what its own run
        // holds now.
        let zswap = variant.config.get().zswap.clone();
        let total_pages = self.mm.cfg.machine.memory.pages();
        self.mm.zswap = crate::mm::zswap::Zswap::new(
            &zswap,
            &self.mm.cfg.memcg,
            total_pages,
            variant.policies.zswap,
            variant.policies.zswap_writeback,
        );
        self.mm.swap.set_zswap_on(zswap.enabled);
        self.mm.cfg.zswap = zswap;
        self.timeline = variant.timeline;
        Ok(())
    }

    /// [`Simulation::retune_swapin`].
    fn retune_swapin(&mut self, variant: Setup) -> Result<(), SimError> {
        if self.swapped_in {
            return Err(ForkError::SwappedIn.into());
        }
        if self.swapin_knobs_set {
            return Err(ForkError::KnobsSet.into());
        }
        self.check_timeline_length(&variant)?;
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
