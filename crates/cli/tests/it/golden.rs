//! The demo, the validation and two experiments print what they printed before the
//! engine was restructured: the documents below are what the commit before that
//! restructuring printed (minus `host`, and minus the vmstat counters of mechanisms the
//! model never had, which reports no longer print as zeros); a change that moves any
//! figure fails here. A deliberate change of the model regenerates them with
//! `UPDATE_GOLDEN=1 cargo test -p swapsim-cli golden` and says so in its commit.

use crate::support::*;
use serde_json::Value;

/// Runs `args`, drops every `host` member, and compares with `tests/data/golden/NAME`.
fn check(name: &str, args: &[&str]) {
    let mut doc = parse(&ok(args));
    drop_host(&mut doc);
    let path = std::path::PathBuf::from(data("golden")).join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let text = serde_json::to_string_pretty(&doc).expect("a JSON value serialises");
        std::fs::write(&path, text + "\n").expect("the golden file is writable");
        return;
    }
    let text = std::fs::read_to_string(&path).expect("the golden file is committed");
    let golden: Value = serde_json::from_str(&text).expect("the golden file is JSON");
    if let Some(at) = first_difference(&golden, &doc, String::new()) {
        panic!("swapsim {args:?} differs from {name} at {at}");
    }
}

fn drop_host(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("host");
            map.values_mut().for_each(drop_host);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_host),
        _ => {}
    }
}

/// The path of the first place where `want` and `got` differ, if any.
fn first_difference(want: &Value, got: &Value, at: String) -> Option<String> {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| match (a.get(k), b.get(k)) {
                (Some(x), Some(y)) => first_difference(x, y, format!("{at}.{k}")),
                (x, _) => Some(format!("{at}.{k} ({})", if x.is_some() { "missing" } else { "unexpected" })),
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| first_difference(x, y, format!("{at}[{i}]")))
        }
        _ if want == got => None,
        _ => Some(format!("{at}: {want} expected, {got} printed")),
    }
}

#[test]
fn demo_is_unchanged() {
    check("demo.json", &["demo", "--format", "json"]);
}

#[test]
#[ignore = "second tier: a golden run of every case or experiment"]
fn validate_is_unchanged() {
    // Two seeds: any change of a figure shows in them, at a third of the full run's time.
    check(
        "validate-linux-6.18.json",
        &["validate", &in_repo("validation/linux-6.18"), "--seeds", "2", "--format", "json"],
    );
}

#[test]
#[ignore = "second tier: a golden run of every case or experiment"]
fn experiments_are_unchanged() {
    for name in ["swapoff-readahead", "plug-merge", "zswap-readahead-bypass", "zswap-shrink-start"] {
        let golden = format!("experiment-{name}-scale0.05.json");
        check(&golden, &["experiment", "run", name, "--format", "json", "--scale", "0.05"]);
    }
}

/// The slot allocator's experiments, at a small scale (added with the slot allocator
/// family; regenerated as the others are).
#[test]
fn allocator_experiments_are_unchanged() {
    for name in ["mthp-swap-allocator", "hibernate-alloc-fastpath"] {
        let golden = format!("experiment-{name}-scale0.05.json");
        check(&golden, &["experiment", "run", name, "--format", "json", "--scale", "0.05"]);
    }
}
