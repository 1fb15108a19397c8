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
    check(
        BASE,
        &[],
        expect!["seed 1 · swap virtio · page-cluster 3 · readahead cluster (kernel)"],
    );
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
        expect!["error: scenario s.toml: workload.generator.region: 100 is smaller than one page (4096 bytes)"],
    );
}
