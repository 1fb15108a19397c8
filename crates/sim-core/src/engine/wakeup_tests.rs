//! Wakeup preemption (`engine/wakeup.rs`): a task that sleeps on swap-ins takes the CPU
//! from one that computes without faulting as soon as its read completes.

use super::tests::{config, FixedLatency};
use super::*;
use crate::ids::VirtPage;
use crate::policy::Policies;
use crate::workload::{Access, RegionSpec};

/// One CPU shared by a task that only touches 8 resident pages, 2 million times (0.4 s
/// of CPU at the default 200 ns an access), and a task that cycles 10 times over 100
/// pages in a 64-page group, so that almost every access of its later passes is a
/// swap-in of 100 µs. The faulting task uses far less CPU than its share, so each
/// completed read lets it run at once: its thousand accesses end long before the other
/// task's. Were it to wait for the end of the other task's slice after every read, it
/// would make one access per slice and end after it.
#[test]
fn a_task_woken_from_a_swap_in_preempts_one_that_does_not_fault() {
    let spec = |name: &str, pages: u64, accesses: u64| {
        let stream = (0..accesses).map(move |k| Access {
            vpage: VirtPage(k % pages),
            write: k < pages,
            think_ns: None,
        });
        TaskSpec::new(name, vec![RegionSpec::new(VirtPage(0), pages)], Box::new(stream))
    };
    let mut cfg = config(64, 1024);
    cfg.machine.cpus = 1;
    let setup = Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 100_000, rotational: false, synchronous: false })],
        policies: Policies::default(),
        tasks: vec![spec("hog", 8, 2_000_000), spec("faulter", 100, 1_000)],
        timeline: Vec::new(),
    };
    let mut sim = Simulation::new(setup).unwrap();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    let r = sim.into_report();
    let (hog, faulter) = (&r.tasks[0], &r.tasks[1]);
    assert!(r.vmstat.pswpin > 500, "the faulting task swaps: {:?}", r.vmstat);
    assert!(
        faulter.end_s < 0.5 * hog.end_s,
        "the faulting task ends at {} s, the other at {} s",
        faulter.end_s,
        hog.end_s
    );
}
