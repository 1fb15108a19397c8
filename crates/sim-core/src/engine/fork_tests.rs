//! Forking a simulation and retuning the fork's swap-in knobs: a fork continues exactly
//! as a separate run of its variant would.

use crate::config::CoreConfig;
use crate::engine::ops::tests::in_turn;
use crate::engine::tests::{config, Aligned8, FixedLatency};
use crate::engine::{Setup, SimReport, Simulation, TaskSpec};
use crate::error::{ForkError, SimError};
use crate::ids::VirtPage;
use crate::policy::readahead::{NoReadahead, Readahead};
use crate::policy::Policies;
use crate::timeline::Operation;
use crate::workload::{Access, RegionSpec};

const PAGES: u64 = 256;

/// One task writes `PAGES` pages once under a 64-page limit and then reads `reread` of
/// them again; at the workload's end the limit is lifted and the device swapped off.
fn setup(cfg: CoreConfig, readahead: Box<dyn Readahead>, reread: u64) -> Setup {
    let ops = vec![Operation::SetMemcgLimit(None), Operation::Swapoff { device: "swap0".into() }];
    setup_with(cfg, readahead, reread, ops)
}

/// [`setup`] with the timeline `ops`, one after another from the workload's end.
fn setup_with(cfg: CoreConfig, readahead: Box<dyn Readahead>, reread: u64, ops: Vec<Operation>) -> Setup {
    let timeline = in_turn(ops);
    let writes = (0..PAGES).map(|p| Access { vpage: VirtPage(p), write: true, think_ns: None });
    let reads = (0..reread).map(|p| Access { vpage: VirtPage(p), write: false, think_ns: None });
    Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![Box::new(FixedLatency { ns: 30_000, rotational: false, synchronous: false })],
        policies: Policies::default().with_readahead(readahead),
        tasks: vec![TaskSpec::new(
            "t",
            vec![RegionSpec::new(VirtPage(0), PAGES)],
            Box::new(writes.chain(reads).collect::<Vec<_>>().into_iter()),
        )],
        timeline,
    }
}

fn with_page_cluster(pc: u32) -> CoreConfig {
    let mut cfg = config(64, 1024);
    cfg.swap.page_cluster = pc;
    cfg
}

/// Runs to the end, checking invariants after every event.
fn finish(mut sim: Simulation) -> SimReport {
    sim.check_invariants();
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    sim.into_report()
}

fn json(report: &SimReport) -> serde_json::Value {
    serde_json::to_value(report).unwrap()
}

#[test]
fn forks_retuned_at_swapoff_give_the_reports_of_separate_runs() {
    let variants = || -> [(CoreConfig, Box<dyn Readahead>); 2] {
        [(with_page_cluster(3), Box::new(Aligned8)), (with_page_cluster(0), Box::new(NoReadahead))]
    };
    let alone: Vec<SimReport> =
        variants().into_iter().map(|(cfg, ra)| finish(Simulation::new(setup(cfg, ra, 0)).unwrap())).collect();
    assert!(alone[0].vmstat.pswpin > 0, "swapoff read pages back");
    assert_ne!(json(&alone[0]), json(&alone[1]), "the variants differ");

    let mut base = Simulation::new(setup(with_page_cluster(3), Box::new(Aligned8), 0)).unwrap();
    assert!(base.run_until_op(1).unwrap(), "the swapoff is due before the run ends");
    let forked: Vec<SimReport> = variants()
        .into_iter()
        .map(|(cfg, ra)| {
            let mut sim = base.fork().unwrap();
            sim.retune_swapin(setup(cfg, ra, 0)).unwrap();
            finish(sim)
        })
        .collect();
    for (forked, alone) in forked.iter().zip(&alone) {
        assert_eq!(json(forked), json(alone));
    }
    // The base was left as it was: it too finishes as a run of its own variant.
    assert_eq!(json(&finish(base)), json(&alone[0]));
}

#[test]
fn retuning_after_a_swap_in_is_refused() {
    let mut base = Simulation::new(setup(with_page_cluster(3), Box::new(Aligned8), 8)).unwrap();
    assert!(base.run_until_op(1).unwrap());
    let err = base.retune_swapin(setup(with_page_cluster(0), Box::new(NoReadahead), 8)).unwrap_err();
    assert!(err.to_string().contains("already swapped in"), "{err}");
}

#[test]
fn retuning_to_a_different_machine_is_refused() {
    let mut base = Simulation::new(setup(with_page_cluster(3), Box::new(Aligned8), 0)).unwrap();
    assert!(base.run_until_op(1).unwrap());
    let mut other = with_page_cluster(0);
    other.machine.memory = crate::config::ByteSize::mib(128);
    let err = base.retune_swapin(setup(other, Box::new(NoReadahead), 0)).unwrap_err();
    assert!(err.to_string().contains("differs in more than the knobs retuned"), "{err}");
}

#[test]
fn forking_a_task_whose_stream_does_not_fork_is_refused() {
    let mut base = Simulation::new(setup(with_page_cluster(3), Box::new(Aligned8), 0)).unwrap();
    for _ in 0..10 {
        assert!(base.step().unwrap());
    }
    let Err(err) = base.fork() else { panic!("a live task's iterator cannot be copied") };
    assert!(matches!(&err, SimError::Fork(ForkError::StreamDoesNotFork { task }) if task == "t"), "{err}");
}

#[test]
fn run_until_op_reports_a_run_that_ends_first() {
    let mut sim = Simulation::new(setup(with_page_cluster(3), Box::new(Aligned8), 0)).unwrap();
    assert!(!sim.run_until_op(5).unwrap());
}

/// Operations not started at the fork are the variant's: here each variant's own readahead
/// policy, set after the limit is lifted.
#[test]
fn a_retuned_fork_runs_the_variants_pending_operations() {
    let ops = |readahead: Box<dyn Readahead>| {
        vec![
            Operation::SetMemcgLimit(None),
            Operation::SetReadahead(readahead),
            Operation::Swapoff { device: "swap0".into() },
        ]
    };
    let variant = || setup_with(with_page_cluster(3), Box::new(Aligned8), 0, ops(Box::new(NoReadahead)));
    let alone = finish(Simulation::new(variant()).unwrap());
    let mut base =
        Simulation::new(setup_with(with_page_cluster(3), Box::new(Aligned8), 0, ops(Box::new(Aligned8))))
            .unwrap();
    assert!(base.run_until_op(1).unwrap());
    let mut fork = base.fork().unwrap();
    fork.retune_swapin(variant()).unwrap();
    assert_eq!(json(&finish(fork)), json(&alone));
    assert_ne!(json(&finish(base)), json(&alone), "the pending operation decides");
}

#[test]
fn a_knob_set_by_an_operation_before_the_fork_prevents_retuning() {
    let ops = vec![
        Operation::SetPageCluster(1),
        Operation::SetMemcgLimit(None),
        Operation::Swapoff { device: "swap0".into() },
    ];
    let mut base =
        Simulation::new(setup_with(with_page_cluster(3), Box::new(Aligned8), 0, ops.clone())).unwrap();
    assert!(base.run_until_op(2).unwrap());
    assert!(!base.can_retune_swapin());
    let err =
        base.retune_swapin(setup_with(with_page_cluster(0), Box::new(NoReadahead), 0, ops)).unwrap_err();
    assert!(err.to_string().contains("already set page-cluster"), "{err}");
}
