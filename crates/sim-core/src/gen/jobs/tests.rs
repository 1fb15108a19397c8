//! Tests of the job queue generator.

use super::*;

/// Every access of job `index` under `seed`.
fn collect(cfg: &JobsConfig, seed: u64, index: usize) -> Vec<Access> {
    let mut tasks = cfg.tasks(seed);
    let mut out = Vec::new();
    while let Some(access) = tasks[index].accesses.next_access().expect("generated streams never fail") {
        out.push(access);
    }
    out
}

fn small() -> JobsConfig {
    JobsConfig {
        jobs: 6,
        concurrency: 2,
        size_median: ByteSize(64 * PAGE_SIZE),
        link_size_median: ByteSize(512 * PAGE_SIZE),
        ..JobsConfig::default()
    }
}

fn check_invalid(edit: impl FnOnce(&mut JobsConfig), expect: expect_test::Expect) {
    let mut cfg = JobsConfig::default();
    edit(&mut cfg);
    expect.assert_eq(&cfg.validate().err().map_or("ok".to_string(), |err| err.to_string()));
}

#[test]
fn validation_names_the_field() {
    check_invalid(|_| {}, expect_test::expect!["ok"]);
    check_invalid(|cfg| cfg.concurrency = 0, expect_test::expect!["workload.jobs.concurrency: 0 is below 1"]);
    check_invalid(
        |cfg| cfg.concurrency = 5000,
        expect_test::expect!["workload.jobs.concurrency: 5000 is above 4096"],
    );
    check_invalid(|cfg| cfg.jobs = 0, expect_test::expect!["workload.jobs.jobs: 0 is outside 1..=4096"]);
    check_invalid(
        |cfg| cfg.size_median = ByteSize(100),
        expect_test::expect!["workload.jobs.size_median: 100B is smaller than one page (4096 bytes)"],
    );
    check_invalid(
        |cfg| cfg.link_size_median = ByteSize(1 << 41),
        expect_test::expect!["workload.jobs.link_size_median: 2TiB exceeds the maximum of 1TiB"],
    );
    check_invalid(
        |cfg| cfg.size_sigma = -0.1,
        expect_test::expect!["workload.jobs.size_sigma: -0.1 is outside 0..=3"],
    );
    check_invalid(
        |cfg| cfg.lifetime_sigma = f64::NAN,
        expect_test::expect!["workload.jobs.lifetime_sigma: NaN is outside 0..=3"],
    );
    check_invalid(
        |cfg| cfg.link_fraction = 1.5,
        expect_test::expect!["workload.jobs.link_fraction: 1.5 is outside 0..=1"],
    );
    check_invalid(
        |cfg| cfg.write_fraction = -1.0,
        expect_test::expect!["workload.jobs.write_fraction: -1 is outside 0..=1"],
    );
    check_invalid(
        |cfg| cfg.accesses_per_page = 0.5,
        expect_test::expect!["workload.jobs.accesses_per_page: 0.5 is outside 1..=1000000"],
    );
    check_invalid(
        |cfg| cfg.reuse_exponent = 0.0,
        expect_test::expect!["workload.jobs.reuse_exponent: 0 is not above 0 and at most 10"],
    );
}

#[test]
fn toml_shape_defaults_and_unknown_keys() {
    let cfg: JobsConfig = serde_json::from_str("{}").expect("an empty section is a queue");
    assert_eq!(cfg, JobsConfig::default());
    let cfg: JobsConfig =
        serde_json::from_str(r#"{"concurrency": 8, "size_median": "30MiB"}"#).expect("parses");
    assert_eq!(cfg, JobsConfig { concurrency: 8, size_median: ByteSize::mib(30), ..JobsConfig::default() });
    let err = serde_json::from_str::<JobsConfig>(r#"{"concurency": 8}"#).expect_err("misspelled");
    assert!(err.to_string().contains("unknown field `concurency`"), "{err}");
    let round_trip: JobsConfig =
        serde_json::from_str(&serde_json::to_string(&cfg).expect("serialises")).expect("parses back");
    assert_eq!(round_trip, cfg);
}

/// The queue: the first `concurrency` jobs start with the run, job i after i - 1 ends
/// (at -j 2), every job exits, and each maps one region of its size.
#[test]
fn jobs_form_a_queue_of_exiting_tasks() {
    let cfg = small();
    let tasks = cfg.tasks(1);
    let starts: Vec<TaskStart> = tasks.iter().map(|t| t.start).collect();
    use TaskStart::{AfterEnds, AtStart};
    assert_eq!(starts, [AtStart, AtStart, AfterEnds(1), AfterEnds(2), AfterEnds(3), AfterEnds(4)]);
    for (index, task) in tasks.iter().enumerate() {
        let plan = cfg.plan(1, index as u32);
        assert!(task.exit_on_end && task.address_space.is_none());
        assert_eq!(task.regions, [RegionSpec::new(VirtPage(0), plan.pages)]);
        assert_eq!(task.name, format!("{}#{index}", if plan.link { "ld" } else { "cc" }));
    }
}

/// A job writes each of its pages once, in order, and otherwise re-references pages it
/// has already written; its accesses number its lifetime.
#[test]
fn a_job_grows_in_order_and_re_references_what_it_touched() {
    let cfg = small();
    for index in 0..cfg.jobs as usize {
        let plan = cfg.plan(7, index as u32);
        let accesses = collect(&cfg, 7, index);
        assert_eq!(accesses.len() as u64, plan.accesses);
        assert!(plan.accesses >= plan.pages);
        let mut touched = 0;
        let mut stores = 0;
        for access in &accesses {
            assert!(access.think_ns.is_none());
            if access.vpage.0 == touched {
                assert!(access.write, "growth is a store");
                touched += 1;
            } else {
                assert!(access.vpage.0 < touched, "page {} before it was allocated", access.vpage.0);
                stores += u64::from(access.write);
            }
        }
        assert_eq!(touched, plan.pages, "job {index} grows to its full size");
        let rereferences = plan.accesses - plan.pages;
        assert!(stores < rereferences / 2, "mostly loads: {stores} stores of {rereferences}");
    }
}

/// Four pages over a lifetime of about eight accesses per page: growth spread over the
/// life, re-references mostly to the newest pages.
#[test]
fn a_tiny_job_snapshot() {
    // No stores among re-references, so that every W is a growth.
    let cfg = JobsConfig {
        jobs: 1,
        size_median: ByteSize(4 * PAGE_SIZE),
        size_sigma: 0.0,
        write_fraction: 0.0,
        ..small()
    };
    let rendered: Vec<String> = collect(&cfg, 1, 0)
        .iter()
        .map(|a| format!("{} {}", if a.write { "W" } else { "R" }, a.vpage.0))
        .collect();
    expect_test::expect!["W 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | R 0 | W 1 | W 2 | R 0 | R 1 | R 2 | R 2 | R 2 | R 2 | R 1 | R 2 | R 2 | R 0 | R 2 | R 2 | R 2 | R 2 | R 2 | R 2 | W 3 | R 2 | R 0 | R 3 | R 2 | R 3 | R 3 | R 0 | R 2 | R 2 | R 1 | R 3 | R 3 | R 2 | R 3 | R 3 | R 3 | R 0 | R 1 | R 1"].assert_eq(&rendered.join(" | "));
}

/// Job i's accesses depend on the seed and i only: not on the number of jobs, the
/// concurrency or the other jobs.
#[test]
fn a_job_is_independent_of_the_queue_around_it() {
    let cfg = small();
    let bigger = JobsConfig { jobs: 40, concurrency: 7, ..small() };
    assert_eq!(collect(&cfg, 3, 4), collect(&bigger, 3, 4));
    assert_eq!(cfg.plan(3, 4), bigger.plan(3, 4));
    assert_ne!(collect(&cfg, 3, 4), collect(&cfg, 3, 5));
    assert_ne!(collect(&cfg, 3, 4), collect(&cfg, 4, 4));
}

/// Over many jobs, sizes centre on their medians, links are about `link_fraction` of
/// the jobs, and lifetimes centre on `accesses_per_page` per page.
#[test]
fn plans_follow_the_configured_distributions() {
    let cfg = JobsConfig { jobs: 4000, ..JobsConfig::default() };
    let plans: Vec<JobPlan> = (0..cfg.jobs).map(|index| cfg.plan(11, index)).collect();
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let mib = |plan: &JobPlan| (plan.pages * PAGE_SIZE) as f64 / (1 << 20) as f64;
    let compile: Vec<f64> = plans.iter().filter(|p| !p.link).map(mib).collect();
    let link: Vec<f64> = plans.iter().filter(|p| p.link).map(mib).collect();
    // 80 expected; the bounds are about 2.8 standard deviations either side.
    assert!((55..=105).contains(&link.len()), "{} link jobs of 4000", link.len());
    let compile_median = median(compile.clone());
    assert!((57.0..63.0).contains(&compile_median), "compile median {compile_median} MiB");
    let link_median = median(link);
    assert!((300.0..530.0).contains(&link_median), "link median {link_median} MiB");
    let in_range = compile.iter().filter(|&&m| (19.0..=190.0).contains(&m)).count() as f64;
    let share = in_range / compile.len() as f64;
    assert!((0.88..0.92).contains(&share), "{share} of compile jobs within 19..=190 MiB");
    let per_page = median(plans.iter().map(|p| p.accesses as f64 / p.pages as f64).collect());
    assert!((7.6..8.4).contains(&per_page), "median accesses per page {per_page}");
    assert_eq!(cfg.total_accesses(11), plans.iter().map(|p| p.accesses).sum::<u64>());
}

/// Ages of re-references follow the bounded power law: with exponent 1 over 15,360
/// touched pages (60 MiB), P(age < k) = ln(k + 1) / ln(15,361); with exponent 0.5 it
/// is ((k + 1)^0.5 - 1) / (15,361^0.5 - 1).
#[test]
fn re_reference_ages_follow_the_power_law() {
    for (exponent, k, expected) in [(1.0, 256u64, 0.576), (1.0, 2560, 0.814), (0.5, 256, 0.1237)] {
        let cfg = JobsConfig { reuse_exponent: exponent, ..JobsConfig::default() };
        let plan = JobPlan { link: false, pages: 15_360, accesses: 15_360 };
        let mut stream = JobStream::new(&cfg, plan, AccessRng::from_stream(&mut SimRng::derive(1, "t")));
        stream.touched = 15_360;
        stream.grew();
        stream.touched = 15_360;
        let n = 200_000;
        let below = (0..n).filter(|_| stream.draw_age() < k).count() as f64 / n as f64;
        assert!(
            (below - expected).abs() < 0.005,
            "exponent {exponent}: P(age < {k}) = {below}, expected {expected}"
        );
    }
}

/// Configs that fail validation still give finite streams without panicking.
#[test]
fn invalid_configs_still_give_finite_streams() {
    let cfg = JobsConfig {
        jobs: 2,
        concurrency: 0,
        size_median: ByteSize(0),
        size_sigma: f64::NAN,
        link_fraction: f64::NAN,
        accesses_per_page: f64::INFINITY,
        lifetime_sigma: -1.0,
        reuse_exponent: -2.0,
        write_fraction: f64::NAN,
        ..JobsConfig::default()
    };
    assert!(cfg.validate().is_err());
    let accesses = collect(&cfg, 1, 1);
    assert_eq!(accesses.len(), 1);
    assert_eq!(accesses[0], Access { vpage: VirtPage(0), write: true, think_ns: None });
}
