//! Integration tests of the core through its public API: invariants under random
//! workloads, agreement with a naive LRU model, determinism.

mod determinism;
mod mthp;
mod opt;
mod properties;
mod queue;
mod series;
mod support;
mod zswap;
