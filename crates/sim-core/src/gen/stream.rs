//! The per-task access stream: a fill, then passes of the configured pattern, drawn
//! from a cheap per-task generator seeded from the task's own stream.

use super::draw::{draw53, draw_below, probability_threshold, AccessRng};
use super::zipf::{Scatter, ZipfSampler};
use super::{GeneratorConfig, Pattern};
use crate::ids::VirtPage;
use crate::rng::SimRng;
use crate::workload::Access;

/// The accesses of one generated task.
pub(super) struct GenStream {
    pub(super) rng: AccessRng,
    pub(super) pages: u64,
    /// Next page of the fill; the fill is over when it reaches `fill_end`.
    pub(super) fill_next: u64,
    pub(super) fill_end: u64,
    /// Passes not yet started.
    pub(super) passes_left: u64,
    /// Accesses left in the current pass.
    pub(super) pass_left: u64,
    pub(super) pass_accesses: u64,
    pub(super) write_threshold: u64,
    pub(super) walk: Walk,
}

/// Per-pattern state of the passes.
pub(super) enum Walk {
    Seq { next: u64 },
    Rand,
    Zipf { sampler: ZipfSampler, scatter: Option<Scatter> },
    Hotcold { hot_pages: u64, hot_threshold: u64, scatter: Option<Scatter> },
    Stride { stride: u64, start: u64, next: u64 },
}

impl GenStream {
    /// `zipf` must be given for the zipf pattern.
    pub(super) fn new(cfg: &GeneratorConfig, mut rng: SimRng, zipf: Option<ZipfSampler>) -> GenStream {
        let pages = cfg.stream_pages();
        let scatter = if cfg.scatter { Some(Scatter::new(pages, &mut rng)) } else { None };
        let walk = match cfg.pattern {
            Pattern::Seq => Walk::Seq { next: 0 },
            Pattern::Rand => Walk::Rand,
            Pattern::Zipf => {
                Walk::Zipf { sampler: zipf.expect("the zipf sampler is built for the zipf pattern"), scatter }
            }
            Pattern::Hotcold => {
                let hot_pages = (cfg.hot_fraction.clamp(0.0, 1.0) * pages as f64).round() as u64;
                Walk::Hotcold {
                    hot_pages: hot_pages.clamp(1, pages),
                    hot_threshold: probability_threshold(cfg.hot_access_fraction),
                    scatter,
                }
            }
            Pattern::Stride => Walk::Stride { stride: cfg.stride_pages.clamp(1, pages), start: 0, next: 0 },
        };
        let pass_accesses = cfg.pass_accesses.unwrap_or(pages);
        GenStream {
            rng: AccessRng::from_stream(&mut rng),
            pages,
            fill_next: 0,
            fill_end: if cfg.fill { pages } else { 0 },
            passes_left: if pass_accesses == 0 { 0 } else { u64::from(cfg.passes) },
            pass_left: 0,
            pass_accesses,
            write_threshold: probability_threshold(cfg.write_fraction),
            walk,
        }
    }

    pub(super) fn next_pass_page(&mut self) -> u64 {
        let pages = self.pages;
        let rng = &mut self.rng;
        match &mut self.walk {
            Walk::Seq { next } => {
                let page = *next;
                *next = if page + 1 == pages { 0 } else { page + 1 };
                page
            }
            Walk::Rand => draw_below(rng, pages),
            Walk::Zipf { sampler, scatter } => {
                let rank = sampler.sample(rng);
                scatter.as_ref().map_or(rank, |scatter| scatter.apply(rank))
            }
            Walk::Hotcold { hot_pages, hot_threshold, scatter } => {
                let cold_pages = pages - *hot_pages;
                let rank = if cold_pages == 0 || draw53(rng) < *hot_threshold {
                    draw_below(rng, *hot_pages)
                } else {
                    *hot_pages + draw_below(rng, cold_pages)
                };
                scatter.as_ref().map_or(rank, |scatter| scatter.apply(rank))
            }
            Walk::Stride { stride, start, next } => {
                let page = *next;
                // Column-major walk: pages start, start + stride, ... then start + 1, ...
                // Each column is non-empty because stride <= pages, so a pass of `pages`
                // accesses is a permutation of the region.
                *next = page + *stride;
                if *next >= pages {
                    *start = if *start + 1 == *stride { 0 } else { *start + 1 };
                    *next = *start;
                }
                page
            }
        }
    }

    pub(super) fn restart_pass(&mut self) {
        match &mut self.walk {
            Walk::Seq { next } => *next = 0,
            Walk::Stride { start, next, .. } => {
                *start = 0;
                *next = 0;
            }
            Walk::Rand | Walk::Zipf { .. } | Walk::Hotcold { .. } => {}
        }
    }
}

impl Iterator for GenStream {
    type Item = Access;

    fn next(&mut self) -> Option<Access> {
        if self.fill_next < self.fill_end {
            let page = self.fill_next;
            self.fill_next += 1;
            return Some(Access { vpage: VirtPage(page), write: true, think_ns: None });
        }
        if self.pass_left == 0 {
            if self.passes_left == 0 {
                return None;
            }
            self.passes_left -= 1;
            self.pass_left = self.pass_accesses;
            self.restart_pass();
        }
        self.pass_left -= 1;
        let page = self.next_pass_page();
        let write = draw53(&mut self.rng) < self.write_threshold;
        Some(Access { vpage: VirtPage(page), write, think_ns: None })
    }
}
