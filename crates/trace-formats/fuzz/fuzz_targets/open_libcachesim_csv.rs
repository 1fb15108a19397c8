//! Fuzz target: `open` with libCacheSim's csv format forced.
#![no_main]

mod common;

#[allow(unused_imports)]
use swapsim_trace_formats::Format;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::run(data, Some(Format::LibCacheSimCsv)));
