//! Tests of scenario loading: defaults, edits, validation messages and the timeline.

use super::*;
use expect_test::{expect, Expect};

/// Loads `text` with `sets` applied and renders what the choices resolved to, or the
/// error chain.
fn check(text: &str, sets: &[&str], expect: Expect) {
    let actual = match Scenario::from_toml_named(text, "s.toml", "").and_then(|s| s.edits(sets)?.prepare()) {
        Ok(prepared) => summary(&prepared),
        Err(err) => format!("error: {err:#}"),
    };
    expect.assert_eq(&actual);
}

/// The seed, the devices' models and the readahead policy that runs.
fn summary(prepared: &Prepared) -> String {
    let resolved = prepared.resolved();
    let models: Vec<&str> = resolved.swap.devices.iter().map(|d| d.model.name.as_str()).collect();
    format!(
        "seed {} · swap {} · page-cluster {} · readahead {} ({})",
        prepared.seed(),
        models.join(", "),
        resolved.swap.page_cluster,
        resolved.swap.readahead_resolved.name(),
        resolved.swap.readahead.name()
    )
}

const BASE: &str = r#"
    [memcg]
    limit = "64MiB"
    [[swap.devices]]
    name = "vda"
    size = "1GiB"
    [workload.generator]
    pattern = "seq"
    region = "128MiB"
"#;

#[test]
fn defaults_and_the_kernel_readahead_choice() {
    check(BASE, &[], expect!["seed 1 · swap virtio · page-cluster 3 · readahead cluster (kernel)"]);
    // No rotational device: the kernel's choice is VMA readahead, unless it is disabled.
    check(
        BASE,
        &["swap.devices.0.model.preset=nvme", "seed=9"],
        expect!["seed 9 · swap nvme · page-cluster 3 · readahead vma (kernel)"],
    );
    check(
        BASE,
        &["swap.devices.0.model.preset=nvme", "swap.vma_ra_enabled=false"],
        expect!["seed 1 · swap nvme · page-cluster 3 · readahead cluster (kernel)"],
    );
    check(
        BASE,
        &["swap.readahead=none", "memcg.limit={}"],
        expect![[
            r#"error: scenario s.toml: --set memcg.limit={}: invalid type: map, expected a size such as "256MiB" or a number of bytes"#
        ]],
    );
}

#[test]
fn validation_errors_name_the_field() {
    check(
        BASE,
        &["swap.page_cluster=40"],
        expect!["error: scenario s.toml: swap.page_cluster: 40 is outside 0..=31"],
    );
    check(
        BASE,
        &["swap.devices.0.model.queue_depth=0"],
        expect!["error: scenario s.toml: swap.devices[0].model: queue_depth: 0 is below 1"],
    );
    check(
        BASE,
        &["workload.generator.region=100"],
        expect![
            "error: scenario s.toml: workload.generator.region: 100B is smaller than one page (4096 bytes)"
        ],
    );
}

#[test]
fn the_hibernation_section_reaches_the_core_and_is_checked() {
    let text = format!("{BASE}\n[hibernation]\nkernel_image = \"64MiB\"\nfreeze_ms = 100\n");
    let prepared = Scenario::from_toml_named(&text, "s.toml", "").and_then(|s| s.prepare()).unwrap();
    let h = &prepared.resolved().hibernation;
    assert_eq!((h.kernel_image, h.freeze_ms, h.poweroff_ms), (Some(ByteSize::mib(64)), 100, 500));
    check(
        BASE,
        &["hibernation.poweroff_ms=4000000"],
        expect!["error: scenario s.toml: hibernation.poweroff_ms: 4000000 is above one hour"],
    );
}

#[test]
fn bad_zswap_knobs_name_the_field() {
    let on = format!("{BASE}\n[zswap]\nenabled = true\n");
    check(&on, &[], expect!["seed 1 · swap virtio · page-cluster 3 · readahead cluster (kernel)"]);
    check(
        &on,
        &["zswap.max_pool_percent=101"],
        expect!["error: scenario s.toml: zswap.max_pool_percent: 101 is outside 0..=100"],
    );
    check(
        &on,
        &["zswap.accept_threshold_percent=200"],
        expect!["error: scenario s.toml: zswap.accept_threshold_percent: 200 is outside 0..=100"],
    );
    check(
        &on,
        &["zswap.compressor=\"lz5\""],
        expect![[
            r#"error: scenario s.toml: --set zswap.compressor="lz5": unknown variant `lz5`, expected one of `lzo`, `lzo-rle`, `lz4`, `zstd`, `deflate`"#
        ]],
    );
    check(
        &on,
        &["zswap.protection=\"lru\""],
        expect![[
            r#"error: scenario s.toml: --set zswap.protection="lru": zswap.protection: unknown zswap protection policy "lru" (built in: decay, second-chance; none registered)"#
        ]],
    );
    check(
        &on,
        &["memcg.version=1", "memcg.zswap_max=\"1MiB\""],
        expect![
            "error: scenario s.toml: memcg.zswap_max: cgroup v1 has no such file: it needs memcg.version = 2"
        ],
    );
    check(&on, &["memcg.version=1", "memcg.zswap_writeback=false"], expect!["error: scenario s.toml: memcg.zswap_writeback: cgroup v1 has no such file: it needs memcg.version = 2"]);
    check(&on, &["workload.contents={sizes=[]}"], expect!["error: scenario s.toml: workload.contents.sizes: the table is empty; expected at least one [size, weight] entry"]);
    check(
        &on,
        &["workload.contents={sizes=[[4097, 1]]}"],
        expect!["error: scenario s.toml: workload.contents.sizes: entry 0: size 4097 is outside 1..=4096"],
    );
    // In the file, the parse error points at the line.
    check(
        &format!("{on}compressor = \"lz5\"\n"),
        &[],
        expect![[r#"
        error: scenario s.toml: zswap.compressor: TOML parse error at line 13, column 14
           |
        13 | compressor = "lz5"
           |              ^^^^^
        unknown variant `lz5`, expected one of `lzo`, `lzo-rle`, `lz4`, `zstd`, `deflate`
    "#]],
    );
    check(
        &format!("{on}protection = \"lru\"\n"),
        &[],
        expect![[
            r#"error: scenario s.toml: zswap.protection: line 13, column 14: unknown zswap protection policy "lru" (built in: decay, second-chance; none registered)"#
        ]],
    );
    check(&format!("{BASE}\n[workload]\ncontents = {{ sizes = [] }}\n"), &[], expect!["error: scenario s.toml: workload.contents.sizes: the table is empty; expected at least one [size, weight] entry"]);
}

/// A scenario with one swap device, a generator and `timeline` appended.
fn with_timeline(timeline: &str) -> String {
    format!("{BASE}\n{timeline}")
}

#[test]
fn timeline_entries_carry_exactly_their_fields() {
    check(
        &with_timeline("[[timeline]]\nat = \"workload-end\"\nop = \"swapoff\"\ndevice = \"vda\"\n"),
        &[],
        expect!["seed 1 · swap virtio · page-cluster 3 · readahead cluster (kernel)"],
    );
    // A field of another operation, a misspelled trigger, a missing field and an unknown
    // operation are rejected naming the entry by its index, and the fields it takes.
    check(
        &with_timeline("[[timeline]]\nop = \"swapoff\"\ndevice = \"vda\"\nlimit = \"1GiB\"\n"),
        &[],
        expect![[r#"
            error: scenario s.toml: TOML parse error at line 11, column 1
               |
            11 | [[timeline]]
               | ^^^^^^^^^^^^
            timeline[0]: unknown field `limit`, expected `device` (besides the trigger keys at, after_accesses and task)
        "#]],
    );
    check(
        &with_timeline(
            "[[timeline]]\nop = \"mark\"\nlabel = \"x\"\n[[timeline]]\nop = \"pause-tasks\"\natt = \"2s\"\n",
        ),
        &[],
        expect![[r#"
            error: scenario s.toml: TOML parse error at line 11, column 1
               |
            11 | [[timeline]]
               | ^^^^^^^^^^^^
            timeline[1]: unknown field `att`, there are no fields (besides the trigger keys at, after_accesses and task)
        "#]],
    );
    check(
        &with_timeline("[[timeline]]\nop = \"set-page-cluster\"\n"),
        &[],
        expect![[r#"
            error: scenario s.toml: TOML parse error at line 11, column 1
               |
            11 | [[timeline]]
               | ^^^^^^^^^^^^
            timeline[0]: missing field `page_cluster`
        "#]],
    );
    check(
        &with_timeline("[[timeline]]\nop = \"swapof\"\n"),
        &[],
        expect![[r#"
            error: scenario s.toml: TOML parse error at line 11, column 1
               |
            11 | [[timeline]]
               | ^^^^^^^^^^^^
            timeline[0]: unknown variant `swapof`, expected one of `swapoff`, `swapon`, `set-page-cluster`, `set-readahead`, `set-vma-ra`, `set-memcg-limit`, `pause-tasks`, `resume-tasks`, `swap-out-all`, `hibernate`, `resume`, `mm-reclaim-run`, `mm-reclaim-release`, `mark`
        "#]],
    );
    check(
        &with_timeline("[[timeline]]\nop = \"mark\"\nlabel = \"x\"\n"),
        &["timeline.0.device=vda"],
        expect!["error: scenario s.toml: --set timeline.0.device=vda: timeline[0]: unknown field `device`, expected `label` (besides the trigger keys at, after_accesses and task)"],
    );
}

#[test]
fn timeline_values_are_checked_by_entry_and_field() {
    let check_entry = |entry: &str, expect: Expect| check(&with_timeline(entry), &[], expect);
    check_entry(
        "[[timeline]]\nop = \"mark\"\nlabel = \"x\"\n[[timeline]]\nop = \"swapon\"\ndevice = \"vdb\"\n",
        expect![[r#"error: scenario s.toml: timeline[1].device: no swap device named "vdb""#]],
    );
    check_entry(
        "[[timeline]]\nop = \"set-page-cluster\"\npage_cluster = 32\n",
        expect!["error: scenario s.toml: timeline[0].page_cluster: 32 is outside 0..=31"],
    );
    check_entry(
        "[[timeline]]\nat = \"soon\"\nop = \"swap-out-all\"\n",
        expect![[
            r#"error: scenario s.toml: timeline[0].at: "soon" is not a time (expected e.g. "2.5s", "150ms", "workload-end")"#
        ]],
    );
    check_entry(
        "[[timeline]]\nat = \"1s\"\nafter_accesses = 5\nop = \"swap-out-all\"\n",
        expect!["error: scenario s.toml: timeline[0].at: give either at or after_accesses, not both"],
    );
    check_entry(
        "[[timeline]]\ntask = 1\nop = \"pause-tasks\"\n",
        expect!["error: scenario s.toml: timeline[0].task: only used with after_accesses"],
    );
    check_entry(
        "[[timeline]]\nop = \"set-memcg-limit\"\nlimit = \"lots\"\n",
        expect![[
            r#"error: scenario s.toml: timeline[0].limit: "lots" is not a size: expected a number and an optional unit, e.g. "256MiB""#
        ]],
    );
}

#[test]
fn mm_reclaim_values_are_checked_by_field() {
    let check_entry = |entry: &str, expect: Expect| check(&with_timeline(entry), &[], expect);
    check_entry(
        "[[timeline]]\nop = \"mm-reclaim-run\"\npages = -1\n",
        expect![
            "error: scenario s.toml: timeline[0].pages: -1 is negative; give a number of pages, 0 for all"
        ],
    );
    check_entry(
        "[[timeline]]\nop = \"mark\"\nlabel = \"x\"\n[[timeline]]\nop = \"mm-reclaim-release\"\npages = -5\n",
        expect![
            "error: scenario s.toml: timeline[1].pages: -5 is negative; give a number of pages, 0 for all"
        ],
    );
    check_entry(
        "[[timeline]]\nop = \"mm-reclaim-run\"\npages = 10\ntimeout = \"soon\"\n",
        expect![[
            r#"error: scenario s.toml: timeline[0].timeout: "soon" is not a duration (expected e.g. "3s", "500ms")"#
        ]],
    );
    check_entry(
        "[[timeline]]\nop = \"mm-reclaim-run\"\ntimeout = \"1s\"\n",
        expect![[r#"
        error: scenario s.toml: TOML parse error at line 11, column 1
           |
        11 | [[timeline]]
           | ^^^^^^^^^^^^
        timeline[0]: missing field `pages`
    "#]],
    );
    check_entry(
        "[[timeline]]\nop = \"mm-reclaim-release\"\npages = 1\ntimeout = \"1s\"\n",
        expect![[r#"
        error: scenario s.toml: TOML parse error at line 11, column 1
           |
        11 | [[timeline]]
           | ^^^^^^^^^^^^
        timeline[0]: unknown field `timeout`, expected `pages` (besides the trigger keys at, after_accesses and task)
    "#]],
    );
}

#[test]
fn mm_reclaim_entries_parse_and_echo() {
    let text = with_timeline(
        "[[timeline]]\nat = \"workload-end\"\nop = \"mm-reclaim-run\"\npages = 0\ntimeout = \"30s\"\n\
         [[timeline]]\nop = \"mm-reclaim-run\"\npages = 4096\n\
         [[timeline]]\nop = \"mm-reclaim-release\"\npages = 0\n",
    );
    let prepared = Scenario::from_toml(&text).and_then(|s| s.prepare()).expect("valid");
    let echo = serde_json::to_string(&prepared.resolved().timeline).expect("serialises");
    expect![[r#"[{"at":"workload-end","op":"mm-reclaim-run","pages":0,"timeout":"30s"},{"op":"mm-reclaim-run","pages":4096},{"op":"mm-reclaim-release","pages":0}]"#]].assert_eq(&echo);
}

#[test]
fn timeline_echoes_as_written() {
    let text = with_timeline(
        "[[timeline]]\nat = \"workload-end\"\nop = \"set-memcg-limit\"\nlimit = \"4GiB\"\n\
         [[timeline]]\nafter_accesses = 10\ntask = 0\nop = \"set-readahead\"\nreadahead = \"fixed\"\n",
    );
    let prepared = Scenario::from_toml(&text).and_then(|s| s.prepare()).expect("valid");
    let echo = serde_json::to_string(&prepared.resolved().timeline).expect("serialises");
    expect![[r#"[{"at":"workload-end","op":"set-memcg-limit","limit":"4GiB"},{"after_accesses":10,"task":0,"op":"set-readahead","readahead":"fixed"}]"#]]
        .assert_eq(&echo);
}

/// A scenario built as a typed value takes `--set` edits as one read from a file does.
#[test]
fn typed_scenarios_take_edits() {
    let file = ScenarioFile {
        workload: WorkloadSection::generator(GeneratorConfig::new(
            swapsim_core::gen::Pattern::Seq,
            ByteSize(128 << 20),
        )),
        timeline: vec![TimelineEntry::new(
            crate::When { at: Some("workload-end".into()), ..Default::default() },
            crate::TimelineOp::SwapOutAll {},
        )],
        ..ScenarioFile::default()
    };
    let scenario = Scenario::from_file(file, "typed", "")
        .edit("swap.devices=[{ name = \"vda\", size = \"1GiB\" }]")
        .and_then(|s| s.set("swap.page_cluster", "5"))
        .and_then(|s| s.prepare())
        .map(|prepared| summary(&prepared));
    assert_eq!(
        scenario.expect("valid"),
        "seed 1 · swap virtio · page-cluster 5 · readahead cluster (kernel)"
    );
}

/// The memcg limit `value` gives, in bytes, or the error chain.
fn limit_of(value: &str) -> Result<Option<u64>, String> {
    Scenario::from_toml_named(BASE, "s.toml", "")
        .and_then(|s| s.set("memcg.limit", value)?.prepare())
        .map(|prepared| prepared.resolved().memcg.limit.map(|limit| limit.0))
        .map_err(|err| format!("{err:#}"))
}

#[test]
fn sizes_take_decimal_binary_and_kernel_units() {
    assert_eq!(limit_of("256MB"), Ok(Some(256_000_000)));
    assert_eq!(limit_of("256 MB"), Ok(Some(256_000_000)));
    assert_eq!(limit_of("256MiB"), Ok(Some(256 << 20)));
    assert_eq!(limit_of("256M"), Ok(Some(256 << 20)));
    assert_eq!(limit_of("262144k"), Ok(Some(256 << 20)));
    assert_eq!(limit_of("268435456"), Ok(Some(256 << 20)));
    expect![[r#"scenario s.toml: --set memcg.limit=256KB: "256KB" has an unknown unit "KB"; "KB" is ambiguous: write 256kB for powers of 1000 or 256KiB for powers of 1024 (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))"#]]
        .assert_eq(&limit_of("256KB").unwrap_err());
}

#[test]
fn a_bad_size_in_the_file_names_its_key_and_line() {
    check(
        "[memcg]\nlimit = \"256 mb\"\n",
        &[],
        expect![[r#"
            error: scenario s.toml: memcg.limit: TOML parse error at line 2, column 9
              |
            2 | limit = "256 mb"
              |         ^^^^^^^^
            "256 mb" has an unknown unit "mb"; "mb" is ambiguous: write 256MB for powers of 1000 or 256MiB for powers of 1024 (accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024); K, M, G, T or k, m, g, t (powers of 1024, as the kernel's memparse reads them))
        "#]],
    );
    let err = format!("{:#}", Scenario::from_toml(&BASE.replace("\"1GiB\"", "\"1 gigabyte\"")).unwrap_err());
    assert!(err.starts_with("scenario <inline>: swap.devices[0].size: TOML parse error at line 6"), "{err}");
}

/// A scenario whose workload is the trace `trace`, loaded as if from `dir/s.toml`.
fn with_trace_in(dir: &str, trace: &str) -> Scenario {
    let text = BASE.replace("[workload.generator]\n    pattern = \"seq\"\n    region = \"128MiB\"\n", "");
    let text = format!("{text}\n[workload]\ntrace = \"{trace}\"\n");
    Scenario::from_toml_named(&text, format!("{dir}/s.toml"), dir).expect("parses")
}

fn prepare_error(scenario: Result<Scenario>) -> String {
    match scenario.and_then(|s| s.prepare()) {
        Ok(_) => "prepared".to_string(),
        Err(err) => format!("{err:#}"),
    }
}

#[test]
fn trace_paths_are_relative_to_the_file_in_it_and_to_the_current_directory_on_the_command_line() {
    // Tests run in the crate's directory; the bundled trace is two levels up.
    let from_here = "../../traces/demo-zipf.trace.zst";
    assert_eq!(prepare_error(Ok(with_trace_in("../../traces", "demo-zipf.trace.zst"))), "prepared");
    assert_eq!(
        prepare_error(with_trace_in("elsewhere", "x.trace").set("workload.trace", from_here)),
        "prepared"
    );
    let whole_table = format!("workload={{ trace = \"{from_here}\" }}");
    assert_eq!(prepare_error(with_trace_in("elsewhere", "x.trace").edit(&whole_table)), "prepared");
    let flag = with_trace_in("elsewhere", "x.trace").with_trace(TraceSource::File(from_here.into()));
    assert_eq!(prepare_error(Ok(flag)), "prepared");

    // A missing trace is named as resolved, with where it was given.
    let err = prepare_error(Ok(with_trace_in("dir", "no-such.trace")));
    assert!(
        err.starts_with("scenario dir/s.toml: cannot open trace dir/no-such.trace (workload.trace in the scenario, relative to the scenario file's directory): "),
        "{err}"
    );
    let err = prepare_error(with_trace_in("dir", "x.trace").set("workload.trace", "no-such.trace"));
    assert!(
        err.starts_with("scenario dir/s.toml: cannot open trace no-such.trace (--set workload.trace, relative to the current directory): "),
        "{err}"
    );
    let err = prepare_error(Ok(
        with_trace_in("dir", "x.trace").with_trace(TraceSource::File("no-such.trace".into()))
    ));
    assert!(
        err.contains("cannot open trace no-such.trace (--trace, relative to the current directory): "),
        "{err}"
    );
    let err = prepare_error(with_trace_in("dir", "x.trace").set("workload.trace", "/no/such.trace"));
    assert!(err.contains("cannot open trace /no/such.trace (--set workload.trace): "), "{err}");
    // An edit of another key leaves the file's path relative to the file.
    let err = prepare_error(with_trace_in("dir", "no-such.trace").set("workload.repeat", "2"));
    assert!(err.contains("cannot open trace dir/no-such.trace (workload.trace in the scenario"), "{err}");
}

/// `[workload.jobs]`: every default echoed, one workload only, trace options refused, and
/// a run reports the queue.
#[test]
fn a_job_queue_is_a_workload_of_its_own() {
    let jobs = BASE.replace(
        "[workload.generator]\n    pattern = \"seq\"\n    region = \"128MiB\"\n",
        "[workload.jobs]\n    jobs = 6\n    concurrency = 2\n    size_median = \"2MiB\"\n    link_size_median = \"8MiB\"\n",
    );
    let prepared = Scenario::from_toml_named(&jobs, "s.toml", "").and_then(|s| s.prepare()).expect("valid");
    let echoed = prepared.resolved().workload.jobs.as_ref().expect("the queue is echoed");
    assert_eq!((echoed.jobs, echoed.concurrency, echoed.size_sigma), (6, 2, 0.7));
    assert!(prepared.generator().is_none());
    let report = prepared.run().expect("it runs");
    let summary = report.jobs.expect("a job queue reports its summary");
    assert_eq!((summary.jobs, summary.started, summary.exited), (6, 6, 6));
    assert!(summary.wall_s > 0.0 && report.tasks.iter().all(|t| t.exited));
    check(
        &format!("{BASE}\n[workload.jobs]\n"),
        &[],
        expect![
            "error: scenario s.toml: workload: give one of trace, [workload.generator], [workload.jobs] or [workload.queue], not [workload.generator] and [workload.jobs]"
        ],
    );
    check(
        &jobs,
        &["workload.repeat=2"],
        expect!["error: scenario s.toml: workload.repeat: only applies to a trace workload"],
    );
    check(
        &jobs,
        &["workload.jobs.concurrency=0"],
        expect!["error: scenario s.toml: workload.jobs.concurrency: 0 is below 1"],
    );
    check(
        &jobs,
        &["workload.jobs.conurrency=4"],
        expect!["error: scenario s.toml: --set workload.jobs.conurrency=4: unknown field `conurrency`, expected one of `jobs`, `concurrency`, `size_median`, `size_sigma`, `link_fraction`, `link_size_median`, `accesses_per_page`, `lifetime_sigma`, `reuse_exponent`, `write_fraction`"],
    );
}
