//! Shared helpers for the readahead tests: a tiny script language for fault/hit sequences
//! and a renderer for plans, so each policy's `check` stays a few lines long.

use std::fmt::Write as _;
use swapsim_core::{
    DeviceId, FaultView, Feedback, Readahead, ReadaheadPlan, RegionId, SpaceId, SwapSlot, TaskId, VirtPage,
};

/// Slots on the test device, header included.
const DEVICE_SLOTS: u32 = 1024;

/// A fault on region 0 (`[0, 4096)`), device 0, with the default `page_cluster` of 3.
pub(super) fn fault_at(offset: u32, vpage: u64) -> FaultView {
    let slot = SwapSlot { device: DeviceId(0), offset };
    FaultView::new(
        TaskId(0),
        SpaceId(0),
        RegionId(0),
        VirtPage(0)..VirtPage(4096),
        VirtPage(vpage),
        slot,
        DEVICE_SLOTS,
    )
}

/// Renders a plan compactly: `target`, `slots 8..=15` or `pages 8..=15`, with the page count.
pub(super) fn render_plan(plan: ReadaheadPlan) -> String {
    match plan {
        ReadaheadPlan::TargetOnly => "target only".to_owned(),
        ReadaheadPlan::Slots { first, last } => {
            format!("slots {first}..={last} ({})", last - first + 1)
        }
        ReadaheadPlan::Pages { first, last } => {
            format!("pages {}..={} ({})", first.0, last.0, last.0 - first.0 + 1)
        }
    }
}

/// Runs a script against `policy` and returns one line per step with the decision and
/// the policy's state afterwards.
///
/// Steps are separated by newlines or `;`: `miss N` is a swap-cache miss at position `N`
/// (turned into a fault by `fault_for`), `hit N` a plain swap-cache hit at virtual page
/// `N` of region 0, and `hit N ra` a hit on a page brought in by readahead.
pub(super) fn run_script<P: Readahead>(
    policy: &mut P,
    script: &str,
    fault_for: impl Fn(u64) -> FaultView,
    state: impl Fn(&P) -> String,
) -> String {
    let mut out = String::new();
    for step in script.split([';', '\n']).map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<&str> = step.split_whitespace().collect();
        let pos: u64 = words[1].parse().expect("script positions are numbers");
        let decision = match (words[0], words.get(2)) {
            ("miss", None) => render_plan(policy.plan(&fault_for(pos))),
            ("hit", readahead) => {
                policy.observe(&Feedback::SwapCacheHit {
                    region: RegionId(0),
                    vpage: VirtPage(pos),
                    readahead: readahead == Some(&"ra"),
                });
                String::new()
            }
            _ => panic!("bad script step {step:?}"),
        };
        let line = format!("{step:<10} {decision:<22} {}", state(policy));
        writeln!(out, "{}", line.trim_end()).expect("writing to a String cannot fail");
    }
    out
}
