//! Tests of the synthetic workload generator.

use super::draw::AccessRng;
use super::zipf::{AliasTable, Scatter, ZipfInversion, ZIPF_TABLE_PAGES_MAX};
use super::*;
use crate::workload::{Access, AccessSource};
use std::sync::Arc;

/// All accesses of task `index` under `seed`.
fn collect(cfg: &GeneratorConfig, seed: u64, index: u32) -> Vec<Access> {
    let mut task = cfg.task(seed, index);
    let mut accesses = Vec::new();
    while let Some(access) = task.accesses.next_access().expect("generated streams never fail") {
        accesses.push(access);
    }
    accesses
}

/// Renders accesses as trace lines, for snapshots.
fn render(accesses: &[Access]) -> String {
    accesses
        .iter()
        .map(|access| format!("{} {}", if access.write { "W" } else { "R" }, access.vpage.0))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn config(pattern: Pattern, pages: u64) -> GeneratorConfig {
    GeneratorConfig::new(pattern, ByteSize(pages * PAGE_SIZE))
}

/// Accesses per page over the passes only (fill off).
fn page_counts(cfg: &GeneratorConfig, seed: u64) -> Vec<u64> {
    let mut counts = vec![0u64; cfg.region.pages() as usize];
    for access in collect(cfg, seed, 0) {
        counts[access.vpage.0 as usize] += 1;
    }
    counts
}

fn check_invalid(edit: impl FnOnce(&mut GeneratorConfig), expect: expect_test::Expect) {
    let mut cfg = config(Pattern::Seq, 16);
    edit(&mut cfg);
    let message = match cfg.validate() {
        Ok(()) => "ok".to_string(),
        Err(err) => err.to_string(),
    };
    expect.assert_eq(&message);
}

#[test]
fn fill_then_seq_pass() {
    let mut cfg = config(Pattern::Seq, 4);
    cfg.passes = 2;
    cfg.write_fraction = 0.0;
    let accesses = collect(&cfg, 1, 0);
    assert_eq!(accesses.len() as u64, cfg.total_accesses());
    assert!(accesses.iter().all(|access| access.think_ns.is_none()));
    expect_test::expect!["W 0 | W 1 | W 2 | W 3 | R 0 | R 1 | R 2 | R 3 | R 0 | R 1 | R 2 | R 3"]
        .assert_eq(&render(&accesses));
}

#[test]
fn pass_accesses_wrap_and_restart_each_pass() {
    let mut cfg = config(Pattern::Seq, 3);
    cfg.fill = false;
    cfg.passes = 2;
    cfg.pass_accesses = Some(4);
    cfg.write_fraction = 1.0;
    let accesses = collect(&cfg, 1, 0);
    assert_eq!(cfg.total_accesses(), 8);
    expect_test::expect!["W 0 | W 1 | W 2 | W 0 | W 0 | W 1 | W 2 | W 0"].assert_eq(&render(&accesses));
}

#[test]
fn fill_writes_every_page_in_order_whatever_the_pattern() {
    for pattern in [Pattern::Seq, Pattern::Rand, Pattern::Zipf, Pattern::Hotcold, Pattern::Stride] {
        let cfg = config(pattern, 100);
        let accesses = collect(&cfg, 3, 0);
        assert_eq!(accesses.len(), 200, "{pattern}");
        for (page, access) in accesses[..100].iter().enumerate() {
            assert_eq!(*access, Access { vpage: VirtPage(page as u64), write: true, think_ns: None });
        }
        assert!(accesses[100..].iter().all(|access| access.vpage.0 < 100), "{pattern}");
    }
}

#[test]
fn streams_are_deterministic_per_seed_and_index() {
    for pattern in [Pattern::Rand, Pattern::Zipf, Pattern::Hotcold] {
        let mut cfg = config(pattern, 1000);
        cfg.fill = false;
        assert_eq!(collect(&cfg, 5, 0), collect(&cfg, 5, 0), "{pattern}");
        assert_ne!(collect(&cfg, 5, 0), collect(&cfg, 5, 1), "{pattern}");
        assert_ne!(collect(&cfg, 5, 0), collect(&cfg, 6, 0), "{pattern}");
    }
}

#[test]
fn small_rand_stream_snapshot() {
    // Pins the stream for a fixed seed, so a change to the draws shows up in review.
    let mut cfg = config(Pattern::Rand, 8);
    cfg.fill = false;
    cfg.write_fraction = 0.5;
    expect_test::expect!["W 4 | W 4 | W 6 | W 7 | R 7 | R 7 | R 1 | R 6"]
        .assert_eq(&render(&collect(&cfg, 42, 0)));
}

#[test]
fn tasks_are_named_and_map_their_region() {
    let mut cfg = config(Pattern::Hotcold, 64);
    cfg.tasks = 3;
    let tasks = cfg.tasks(9);
    let names: Vec<_> = tasks.iter().map(|task| task.name.as_str()).collect();
    assert_eq!(names, ["gen:hotcold#0", "gen:hotcold#1", "gen:hotcold#2"]);
    for task in &tasks {
        assert_eq!(task.regions, [RegionSpec::new(VirtPage(0), 64)]);
    }
}

#[test]
fn write_fraction_is_respected() {
    for write_fraction in [0.0, 0.2, 0.75, 1.0] {
        let mut cfg = config(Pattern::Rand, 1000);
        cfg.fill = false;
        cfg.pass_accesses = Some(100_000);
        cfg.write_fraction = write_fraction;
        let n_writes = collect(&cfg, 11, 0).iter().filter(|access| access.write).count();
        let observed = n_writes as f64 / 100_000.0;
        // The standard deviation is at most 0.0016 here, so 0.006 is over 3.5 sigma.
        assert!((observed - write_fraction).abs() < 0.006, "{write_fraction}: {observed}");
    }
}

#[test]
fn rand_is_uniform() {
    let mut cfg = config(Pattern::Rand, 10);
    cfg.fill = false;
    cfg.pass_accesses = Some(100_000);
    let counts = page_counts(&cfg, 2);
    // Expected 10000 per page, standard deviation about 95.
    assert!(counts.iter().all(|&count| (9_600..=10_400).contains(&count)), "{counts:?}");
}

/// The zipf probability of each rank, computed directly.
fn zipf_probabilities(pages: u64, exponent: f64) -> Vec<f64> {
    let weights: Vec<f64> = (1..=pages).map(|k| (k as f64).powf(-exponent)).collect();
    let total: f64 = weights.iter().sum();
    weights.iter().map(|weight| weight / total).collect()
}

#[test]
fn zipf_matches_the_law() {
    for exponent in [0.5, 0.9, 1.0, 1.4] {
        let mut cfg = config(Pattern::Zipf, 10_000);
        cfg.fill = false;
        cfg.scatter = false;
        cfg.zipf_exponent = exponent;
        cfg.pass_accesses = Some(100_000);
        let counts = page_counts(&cfg, 4);
        let expected = zipf_probabilities(10_000, exponent);
        // Ranks 0, 1, 2, 9 and the top 1% (100 pages) against the exact law, each within
        // 4.5 standard deviations of a binomial count.
        let within = |observed: f64, expected: f64| {
            (observed - expected).abs() < 4.5 * (expected * (1.0 - expected) / 100_000.0).sqrt()
        };
        for rank in [0, 1, 2, 9] {
            let observed = counts[rank] as f64 / 100_000.0;
            assert!(
                within(observed, expected[rank]),
                "exponent {exponent} rank {rank}: {observed} vs {}",
                expected[rank]
            );
        }
        let top_observed = counts[..100].iter().sum::<u64>() as f64 / 100_000.0;
        let top_expected: f64 = expected[..100].iter().sum();
        assert!(
            within(top_observed, top_expected),
            "exponent {exponent}: top 1% got {top_observed}, expected {top_expected}"
        );
    }
}

#[test]
fn zipf_samplers_follow_the_law() {
    // The table and the table-free sampler, each against the exact probabilities of the
    // first ranks, within 4.5 standard deviations of a binomial count.
    for exponent in [0.6, 1.0, 2.0] {
        let expected = zipf_probabilities(1000, exponent);
        let samplers = [
            ("table", ZipfSampler::Table(Arc::new(AliasTable::zipf(1000, exponent)))),
            ("inversion", ZipfSampler::Inversion(ZipfInversion::new(1000, exponent))),
        ];
        for (name, sampler) in samplers {
            let mut rng = AccessRng::from_stream(&mut SimRng::derive(3, name));
            let mut counts = vec![0u64; 1000];
            for _ in 0..100_000 {
                counts[sampler.sample(&mut rng) as usize] += 1;
            }
            for rank in [0, 1, 2, 3, 10, 100, 999] {
                let observed = counts[rank] as f64 / 100_000.0;
                let sigma = (expected[rank] * (1.0 - expected[rank]) / 100_000.0).sqrt();
                assert!(
                    (observed - expected[rank]).abs() < 4.5 * sigma + 1e-5,
                    "{name} exponent {exponent} rank {rank}: {observed} vs {}",
                    expected[rank]
                );
            }
        }
    }
}

#[test]
fn zipf_sampler_kind_depends_on_the_region() {
    assert!(matches!(ZipfSampler::new(ZIPF_TABLE_PAGES_MAX, 0.9), ZipfSampler::Table(_)));
    let large = ZipfSampler::new(ZIPF_TABLE_PAGES_MAX + 1, 0.9);
    assert!(matches!(large, ZipfSampler::Inversion(_)));
    let mut rng = AccessRng::from_stream(&mut SimRng::derive(1, "large"));
    let ranks: Vec<u64> = (0..10_000).map(|_| large.sample(&mut rng)).collect();
    assert!(ranks.iter().all(|&rank| rank <= ZIPF_TABLE_PAGES_MAX));
    assert!(ranks.iter().filter(|&&rank| rank == 0).count() > 300);
}

#[test]
fn zipf_with_scatter_is_skewed_and_spread() {
    let mut cfg = config(Pattern::Zipf, 10_000);
    cfg.fill = false;
    cfg.pass_accesses = Some(100_000);
    let mut counts = page_counts(&cfg, 4);
    // The hottest pages are not simply the first ones.
    let hot_pages_at_start = counts[..100].iter().filter(|&&count| count > 100).count();
    assert!(hot_pages_at_start < 20, "{hot_pages_at_start}");
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let top_share = counts[..100].iter().sum::<u64>() as f64 / 100_000.0;
    // Under a uniform law the top 1% would get a little over 1%; zipf 0.9 gives about 41%.
    assert!(top_share > 0.35, "{top_share}");
}

#[test]
fn hotcold_sends_the_hot_share_to_the_hot_set() {
    let mut cfg = config(Pattern::Hotcold, 1000);
    cfg.fill = false;
    cfg.scatter = false;
    cfg.hot_fraction = 0.05;
    cfg.hot_access_fraction = 0.8;
    cfg.pass_accesses = Some(100_000);
    let counts = page_counts(&cfg, 8);
    let hot_share = counts[..50].iter().sum::<u64>() as f64 / 100_000.0;
    assert!((hot_share - 0.8).abs() < 0.006, "{hot_share}");
    // Every page, hot or cold, is touched: about 1600 per hot page, 21 per cold one.
    assert!(counts.iter().all(|&count| count > 5), "{counts:?}");

    cfg.scatter = true;
    let mut counts = page_counts(&cfg, 8);
    let hot_at_start = counts[..50].iter().filter(|&&count| count > 1000).count();
    assert!(hot_at_start < 10, "{hot_at_start}");
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let hot_share = counts[..50].iter().sum::<u64>() as f64 / 100_000.0;
    assert!((hot_share - 0.8).abs() < 0.006, "{hot_share}");
    assert!(counts[49] > 1000 && counts[50] < 100, "{} {}", counts[49], counts[50]);
}

#[test]
fn hotcold_with_everything_hot_is_uniform() {
    let mut cfg = config(Pattern::Hotcold, 4);
    cfg.fill = false;
    cfg.hot_fraction = 1.0;
    cfg.hot_access_fraction = 0.0;
    cfg.pass_accesses = Some(4000);
    let counts = page_counts(&cfg, 1);
    assert!(counts.iter().all(|&count| (850..=1150).contains(&count)), "{counts:?}");
}

#[test]
fn stride_covers_every_page_once_per_pass() {
    for (pages, stride) in [(1, 16), (10, 4), (100, 16), (37, 5), (5, 16), (64, 64), (1000, 999)] {
        let mut cfg = config(Pattern::Stride, pages);
        cfg.fill = false;
        cfg.passes = 2;
        cfg.stride_pages = stride;
        let accesses = collect(&cfg, 1, 0);
        for pass in accesses.chunks(pages as usize) {
            let mut seen: Vec<u64> = pass.iter().map(|access| access.vpage.0).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..pages).collect::<Vec<_>>(), "pages {pages} stride {stride}");
        }
    }
    let mut cfg = config(Pattern::Stride, 10);
    cfg.fill = false;
    cfg.stride_pages = 4;
    cfg.write_fraction = 0.0;
    expect_test::expect!["R 0 | R 4 | R 8 | R 1 | R 5 | R 9 | R 2 | R 6 | R 3 | R 7"]
        .assert_eq(&render(&collect(&cfg, 1, 0)));
}

#[test]
fn scatter_is_a_permutation() {
    for n in [1, 2, 3, 5, 16, 17, 1000, 4097] {
        for seed in 0..4 {
            let scatter = Scatter::new(n, &mut SimRng::derive(seed, "scatter"));
            let mut pages: Vec<u64> = (0..n).map(|rank| scatter.apply(rank)).collect();
            pages.sort_unstable();
            assert_eq!(pages, (0..n).collect::<Vec<_>>(), "n {n} seed {seed}");
        }
    }
}

#[test]
fn validate_accepts_defaults() {
    check_invalid(|_| {}, expect_test::expect!["ok"]);
}

#[test]
fn validate_names_field_value_and_range() {
    check_invalid(
        |cfg| cfg.region = ByteSize(100),
        expect_test::expect!["workload.generator.region: 100B is smaller than one page (4096 bytes)"],
    );
    check_invalid(
        |cfg| cfg.region = ByteSize(6000),
        expect_test::expect![
            "workload.generator.region: 5.86KiB (6000 bytes) is not a whole number of 4096-byte pages"
        ],
    );
    check_invalid(
        |cfg| cfg.region = ByteSize::gib(2048),
        expect_test::expect!["workload.generator.region: 2TiB exceeds the maximum of 1TiB"],
    );
    check_invalid(
        |cfg| cfg.pass_accesses = Some(0),
        expect_test::expect![
            "workload.generator.pass_accesses: 0 is not positive (leave it out for one access per page)"
        ],
    );
    check_invalid(
        |cfg| {
            cfg.passes = 70_000;
            cfg.pass_accesses = Some(1 << 24);
        },
        expect_test::expect![
            "workload.generator.passes: 70000 passes of 16777216 accesses exceed the limit of 1099511627776 accesses per task"
        ],
    );
    check_invalid(
        |cfg| cfg.write_fraction = 1.5,
        expect_test::expect!["workload.generator.write_fraction: 1.5 is outside 0..=1"],
    );
    check_invalid(
        |cfg| cfg.write_fraction = f64::NAN,
        expect_test::expect!["workload.generator.write_fraction: NaN is outside 0..=1"],
    );
    check_invalid(
        |cfg| cfg.zipf_exponent = 0.0,
        expect_test::expect!["workload.generator.zipf_exponent: 0 is not above 0 and at most 10"],
    );
    check_invalid(
        |cfg| cfg.hot_fraction = 0.0,
        expect_test::expect!["workload.generator.hot_fraction: 0 is not above 0 and at most 1"],
    );
    check_invalid(
        |cfg| cfg.hot_access_fraction = -0.1,
        expect_test::expect!["workload.generator.hot_access_fraction: -0.1 is outside 0..=1"],
    );
    check_invalid(
        |cfg| cfg.stride_pages = 0,
        expect_test::expect!["workload.generator.stride_pages: 0 is outside 1..=268435456"],
    );
    check_invalid(
        |cfg| cfg.tasks = 5000,
        expect_test::expect!["workload.generator.tasks: 5000 is outside 1..=4096"],
    );
}

#[test]
fn invalid_configs_still_give_finite_streams() {
    for pattern in [Pattern::Seq, Pattern::Rand, Pattern::Zipf, Pattern::Hotcold, Pattern::Stride] {
        let mut cfg = config(pattern, 0);
        cfg.pass_accesses = Some(0);
        cfg.write_fraction = f64::NAN;
        cfg.zipf_exponent = -1.0;
        cfg.hot_fraction = f64::INFINITY;
        cfg.stride_pages = 0;
        assert!(cfg.validate().is_err());
        // The region counts as one page: the fill writes it and no pass runs.
        assert_eq!(render(&collect(&cfg, 1, 0)), "W 0", "{pattern}");
        cfg.pass_accesses = Some(50);
        let accesses = collect(&cfg, 1, 0);
        assert_eq!(accesses.len(), 51, "{pattern}");
        assert!(accesses.iter().all(|access| access.vpage.0 == 0), "{pattern}");
    }
}

#[test]
fn toml_shape_defaults_and_unknown_keys() {
    let cfg: GeneratorConfig =
        serde_json::from_str(r#"{"pattern": "zipf", "region": "64MiB", "zipf_exponent": 1.2}"#)
            .expect("a minimal section parses");
    let mut expected = GeneratorConfig::new(Pattern::Zipf, ByteSize::mib(64));
    expected.zipf_exponent = 1.2;
    assert_eq!(cfg, expected);
    let err = serde_json::from_str::<GeneratorConfig>(r#"{"pattern": "seq", "region": 4096, "pases": 2}"#)
        .expect_err("a misspelled key is rejected");
    assert!(err.to_string().contains("unknown field `pases`"), "{err}");
    let err = serde_json::from_str::<GeneratorConfig>(r#"{"pattern": "Seq", "region": 4096}"#)
        .expect_err("patterns are lowercase");
    assert!(err.to_string().contains("unknown variant `Seq`"), "{err}");
    let round_trip: GeneratorConfig =
        serde_json::from_str(&serde_json::to_string(&expected).expect("serialises")).expect("parses back");
    assert_eq!(round_trip, expected);
}

/// Every access of `source` from here on, read in batches of `batch`.
fn drain(source: &mut dyn AccessSource, batch: usize) -> Vec<Access> {
    let mut out = Vec::new();
    loop {
        let before = out.len();
        source.next_accesses(&mut out, batch).unwrap();
        if out.len() - before < batch {
            return out;
        }
    }
}

/// Forks taken anywhere in a job's stream, of the stream and of each other, read on
/// as the unforked stream does, in whatever order and batch sizes they are read.
#[test]
fn forks_read_what_the_stream_reads() {
    let cfg = JobsConfig {
        jobs: 3,
        size_median: crate::config::ByteSize(32 << 20),
        size_sigma: 0.2,
        lifetime_sigma: 0.0,
        link_fraction: 0.0,
        ..JobsConfig::default()
    };
    for (index, task) in cfg.tasks(7).into_iter().enumerate() {
        let whole = drain(&mut *cfg.tasks(7).swap_remove(index).accesses, 1000);
        assert!(whole.len() > 3 * super::shared::CHUNK, "the stream spans several chunks");
        let mut source = task.accesses;
        let mut head = Vec::new();
        source.next_accesses(&mut head, super::shared::CHUNK + 5).unwrap();
        let mut a = source.fork().unwrap();
        let mut b = source.fork().unwrap();
        // `a` runs ahead and draws; `b` and a fork of `b` taken later read the store.
        let mut rest_a = Vec::new();
        a.next_accesses(&mut rest_a, 2 * super::shared::CHUNK + 3).unwrap();
        let mut rest_b = Vec::new();
        b.next_accesses(&mut rest_b, 17).unwrap();
        let mut c = b.fork().unwrap();
        rest_b.extend(drain(&mut *b, 333));
        let mut rest_c = rest_b[..17].to_vec();
        rest_c.extend(drain(&mut *c, super::shared::CHUNK));
        rest_a.extend(drain(&mut *a, 1));
        // The original goes on reading its generator, and forks again further on: that
        // fork, read one access at a time, starts where the original stood.
        let mut rest = Vec::new();
        source.next_accesses(&mut rest, 3 * super::shared::CHUNK / 2).unwrap();
        let mut d = source.fork().unwrap();
        let mut rest_d = rest.clone();
        rest_d.extend(std::iter::from_fn(|| d.next_access().unwrap()));
        rest.extend(drain(&mut *source, 4096));
        assert_eq!(source.fork().map(|mut e| e.next_access().unwrap()), Some(None));
        for forked in [&rest_a, &rest_b, &rest_c, &rest, &rest_d] {
            assert_eq!(head.len() + forked.len(), whole.len());
            assert!(head.iter().chain(forked.iter()).eq(whole.iter()), "job {index}");
        }
    }
}
