//! What `swapsim probe` measures: snapshots of the kernel's own counters before and after a
//! run, their differences, and the median, least and largest value of each figure over the
//! repeats, named and nested as a validation case's `measured` section names them
//! (validation/linux-6.18/README.md).
//!
//! Sources, all read from under a root directory (`/` on a real machine, a temporary tree
//! in tests):
//! - `/proc/vmstat`: the counters the cases carry (`vmstat.*`, deltas);
//! - `/sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/*`: the per-size mTHP
//!   counters (`mthp.<size>kB.*`, deltas);
//! - `/sys/class/block/<dev>/stat`: requests and sectors by direction on the swap device
//!   (`block.*`, deltas, and the mean request size);
//! - `/sys/kernel/debug/zswap/{pool_total_size,stored_pages}`: zswap's pool at the end
//!   (`zswap_at_end.*`, gauges);
//! - `/sys/block/zram<N>/mm_stat`: zram's memory at the end (`zram_at_end.*`, gauges).
//!   `probe run` reads its second snapshot after the workload has exited, when both pools
//!   have been emptied, so it leaves these two out of the cases it writes;
//! - the memory cgroup's OOM-kill count (`memory.oom_control` on v1, `memory.events` on
//!   v2), which says whether a run lost its workload to the OOM killer.
//!
//! A source that is absent (no debugfs, no zram, a kernel without mTHP) gives no figure:
//! a figure that could not be measured is left out, never written as zero.

use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `/proc/vmstat` counters a case records, as the kernel names them.
pub const VMSTAT: &[&str] = &[
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "pgactivate",
    "pgdeactivate",
    "pgrefill",
    "pgscan_anon",
    "pgscan_direct",
    "pgscan_kswapd",
    "pgsteal_anon",
    "pgsteal_direct",
    "pgsteal_kswapd",
    "swap_ra",
    "swap_ra_hit",
    "swpin_zero",
    "swpout_zero",
    "thp_swpout",
    "thp_swpout_fallback",
    "workingset_activate_anon",
    "workingset_refault_anon",
    "workingset_restore_anon",
    "zswpin",
    "zswpout",
    "zswpwb",
];

/// The per-size mTHP counters a case records.
pub const MTHP: &[&str] =
    &["anon_fault_alloc", "anon_fault_fallback", "swpin", "swpin_fallback", "swpout", "swpout_fallback"];

/// Where the figures of one probe come from.
#[derive(Clone, Debug)]
pub struct Sources {
    /// The directory standing for `/`.
    pub root: PathBuf,
    /// The swap device's block device name (`vda`, `zram0`), if the swap is on one.
    pub block_device: Option<String>,
    /// The memory cgroup's directory, as a path under the root.
    pub memcg_dir: Option<PathBuf>,
}

impl Sources {
    fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        let rel = rel.as_ref();
        self.root.join(rel.strip_prefix("/").unwrap_or(rel))
    }
}

/// The counters and gauges read at one instant, keyed `section.name` (`mthp.16kB.swpin`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    values: BTreeMap<String, u64>,
}

/// Sections whose figures are levels at the end of the run rather than counts.
const GAUGES: &[&str] = &["zswap_at_end", "zram_at_end"];

/// Whether figure `key` is a level at the end of the run (zswap's or zram's pool) rather
/// than a count.
pub fn is_gauge(key: &str) -> bool {
    GAUGES.contains(&key.split('.').next().unwrap_or_default())
}

impl Snapshot {
    /// Reads every source that exists.
    pub fn take(src: &Sources) -> Result<Snapshot> {
        let mut values = BTreeMap::new();
        let vmstat = src.path("/proc/vmstat");
        let text =
            std::fs::read_to_string(&vmstat).with_context(|| format!("reading {}", vmstat.display()))?;
        for (n, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
                bail!("{}: line {}: expected `name value`, found {line:?}", vmstat.display(), n + 1);
            };
            if VMSTAT.contains(&name) {
                values.insert(format!("vmstat.{name}"), parse(&vmstat, n + 1, name, value)?);
            }
        }
        read_mthp(src, &mut values)?;
        if let Some(dev) = &src.block_device {
            read_block(src, dev, &mut values)?;
        }
        for gauge in ["pool_total_size", "stored_pages"] {
            let file = src.path(format!("/sys/kernel/debug/zswap/{gauge}"));
            if let Some(v) = read_number(&file)? {
                values.insert(format!("zswap_at_end.{gauge}"), v);
            }
        }
        if let Some(dir) = &src.memcg_dir {
            if let Some(v) = read_oom_kills(&src.path(dir))? {
                values.insert("memcg.oom_kill".into(), v);
            }
        }
        Ok(Snapshot { values })
    }

    /// The value of `key`, if it was read.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values.get(key).copied()
    }
}

fn parse(file: &Path, line: usize, field: &str, text: &str) -> Result<u64> {
    text.trim()
        .parse()
        .with_context(|| format!("{}: line {line}: {field}: {text:?} is not a count", file.display()))
}

/// A file holding one number; `None` when the file is absent.
fn read_number(file: &Path) -> Result<Option<u64>> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(Some(parse(file, 1, "value", &text)?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

fn read_mthp(src: &Sources, values: &mut BTreeMap<String, u64>) -> Result<()> {
    let dir = src.path("/sys/kernel/mm/transparent_hugepage");
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(()) };
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(size) = name.strip_prefix("hugepages-") else { continue };
        for stat in MTHP {
            if let Some(v) = read_number(&entry.path().join("stats").join(stat))? {
                values.insert(format!("mthp.{size}.{stat}"), v);
            }
        }
    }
    Ok(())
}

fn read_block(src: &Sources, dev: &str, values: &mut BTreeMap<String, u64>) -> Result<()> {
    if dev.starts_with("zram") {
        // zram takes bios without the request layer: its `stat` counts bios, which the
        // cases' request figures (from the request tracepoints) do not.
        return read_zram(src, dev, values);
    }
    let file = src.path(format!("/sys/class/block/{dev}/stat"));
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() < 8 {
        bail!(
            "{}: {} fields, expected at least 8 (the block layer's stat format)",
            file.display(),
            fields.len()
        );
    }
    for (i, name) in [(0, "read_requests"), (2, "read_sectors"), (4, "write_requests"), (6, "write_sectors")]
    {
        values.insert(format!("block.{name}"), parse(&file, 1, name, fields[i])?);
    }
    Ok(())
}

/// zram's memory at the end (`mm_stat`: the data stored, its compressed size, the memory
/// it takes).
fn read_zram(src: &Sources, dev: &str, values: &mut BTreeMap<String, u64>) -> Result<()> {
    let mm = src.path(format!("/sys/block/{dev}/mm_stat"));
    let Ok(text) = std::fs::read_to_string(&mm) else { return Ok(()) };
    let fields: Vec<&str> = text.split_whitespace().collect();
    for (i, name) in [(0, "orig_data_size"), (1, "compr_data_size"), (2, "mem_used_total")] {
        if let Some(word) = fields.get(i) {
            values.insert(format!("zram_at_end.{name}"), parse(&mm, 1, name, word)?);
        }
    }
    Ok(())
}

/// The `oom_kill` count of a memory cgroup: `memory.events` (v2) or `memory.oom_control` (v1).
fn read_oom_kills(dir: &Path) -> Result<Option<u64>> {
    for name in ["memory.events", "memory.oom_control"] {
        let file = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for (n, line) in text.lines().enumerate() {
            if let Some(value) = line.strip_prefix("oom_kill ") {
                return Ok(Some(parse(&file, n + 1, "oom_kill", value)?));
            }
        }
    }
    Ok(None)
}

/// One run's figures: counts as differences between the two snapshots, levels as read at
/// the end, and the mean read and write request size in KiB where requests were made.
pub fn delta(before: &Snapshot, after: &Snapshot) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (key, &end) in &after.values {
        let value = if is_gauge(key) {
            end as f64
        } else {
            match before.values.get(key) {
                Some(&start) => end.saturating_sub(start) as f64,
                None => continue,
            }
        };
        out.insert(key.clone(), value);
    }
    for dir in ["read", "write"] {
        let requests = out.get(&format!("block.{dir}_requests")).copied().unwrap_or(0.0);
        if requests > 0.0 {
            let sectors = out[&format!("block.{dir}_sectors")];
            out.insert(format!("block.{dir}_request_kib_mean"), sectors * 512.0 / 1024.0 / requests);
        }
    }
    out
}

/// Whether a run's workload was OOM-killed, from its figures.
pub fn oom_killed(run: &BTreeMap<String, f64>) -> bool {
    run.get("memcg.oom_kill").is_some_and(|&n| n > 0.0)
}

/// The figures of the runs as a case's `measured` section: for each figure every run has,
/// `{"median", "min", "max"}` over the runs, nested by the parts of its key
/// (`mthp.16kB.swpin` under `mthp`, `16kB`). The OOM-kill count is left out (the case
/// records kills in `oom_kills`).
pub fn summarize(runs: &[BTreeMap<String, f64>]) -> Value {
    let mut root = Map::new();
    let Some(first) = runs.first() else { return Value::Object(root) };
    for key in first.keys().filter(|k| k.as_str() != "memcg.oom_kill") {
        let mut xs: Vec<f64> = runs.iter().filter_map(|r| r.get(key).copied()).collect();
        if xs.len() != runs.len() {
            continue;
        }
        // `median` sorts the values: the least is first, the largest last.
        let Some(median) = crate::validate::median(&mut xs) else { continue };
        let (least, largest) = (xs[0], xs[xs.len() - 1]);
        let stats =
            serde_json::json!({ "median": number(median), "min": number(least), "max": number(largest) });
        let mut node = &mut root;
        let parts: Vec<&str> = key.split('.').collect();
        for part in &parts[..parts.len() - 1] {
            let entry = node.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
            node = entry.as_object_mut().expect("a section is an object");
        }
        node.insert(parts[parts.len() - 1].to_string(), stats);
    }
    Value::Object(root)
}

/// A whole number as an integer, anything else rounded to three decimals.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        Value::from(x as i64)
    } else {
        Value::from((x * 1000.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::probe::testdir::TestDir;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A fake machine whose counters are `scale` times a base.
    fn machine(root: &Path, scale: u64, oom: u64) {
        write(
            root,
            "proc/vmstat",
            &format!(
                "nr_free_pages 123\npswpin {}\npswpout {}\npgmajfault {}\n",
                10 * scale,
                20 * scale,
                7 * scale
            ),
        );
        write(
            root,
            "sys/kernel/mm/transparent_hugepage/hugepages-16kB/stats/swpin",
            &format!("{}\n", 3 * scale),
        );
        write(root, "sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled", "always [never]\n");
        write(
            root,
            "sys/class/block/vda/stat",
            &format!("{} 0 {} 0 {} 0 {} 0 0 0 0\n", 4 * scale, 32 * scale, 2 * scale, 64 * scale),
        );
        write(
            root,
            "sys/block/zram0/mm_stat",
            &format!("{} {} {} 0 0 0 0 0 0\n", 4096 * scale, 1024 * scale, 2048 * scale),
        );
        write(
            root,
            "sys/fs/cgroup/memory/probe/memory.oom_control",
            &format!("oom_kill_disable 0\nunder_oom 0\noom_kill {oom}\n"),
        );
    }

    fn sources(root: &Path, device: &str) -> Sources {
        Sources {
            root: root.to_path_buf(),
            block_device: Some(device.into()),
            memcg_dir: Some("/sys/fs/cgroup/memory/probe".into()),
        }
    }

    #[test]
    fn a_run_is_the_difference_of_two_snapshots() {
        let dir = TestDir::new("measure");
        machine(dir.path(), 1, 0);
        let before = Snapshot::take(&sources(dir.path(), "vda")).unwrap();
        let zram_before = Snapshot::take(&sources(dir.path(), "zram0")).unwrap();
        machine(dir.path(), 3, 1);
        let after = Snapshot::take(&sources(dir.path(), "vda")).unwrap();
        let zram = delta(&zram_before, &Snapshot::take(&sources(dir.path(), "zram0")).unwrap());
        assert!(!zram.contains_key("block.read_requests"), "zram's stat counts bios, not requests");
        assert_eq!(zram["zram_at_end.compr_data_size"], 3072.0, "a level, not a difference");
        let run = delta(&before, &after);
        assert_eq!(run["vmstat.pswpin"], 20.0);
        assert_eq!(run["vmstat.pgmajfault"], 14.0);
        assert!(!run.contains_key("vmstat.nr_free_pages"), "only the counters a case records");
        assert_eq!(run["mthp.16kB.swpin"], 6.0);
        assert_eq!(run["block.read_requests"], 8.0);
        assert_eq!(run["block.read_request_kib_mean"], 64.0 * 512.0 / 1024.0 / 8.0);
        assert!(oom_killed(&run));
    }

    #[test]
    fn repeats_are_summarised_as_the_cases_are() {
        let runs: Vec<BTreeMap<String, f64>> = [5.0, 1.0, 3.0]
            .iter()
            .map(|&x| {
                BTreeMap::from([("vmstat.pswpin".to_string(), x), ("mthp.16kB.swpin".to_string(), x / 2.0)])
            })
            .collect();
        let doc = summarize(&runs);
        assert_eq!(doc["vmstat"]["pswpin"], serde_json::json!({"median": 3, "min": 1, "max": 5}));
        assert_eq!(doc["mthp"]["16kB"]["swpin"], serde_json::json!({"median": 1.5, "min": 0.5, "max": 2.5}));
    }

    #[test]
    fn missing_sources_give_no_figure_and_bad_ones_name_the_file() {
        let dir = TestDir::new("measure");
        write(dir.path(), "proc/vmstat", "pswpin 1\n");
        let src = Sources { root: dir.path().to_path_buf(), block_device: None, memcg_dir: None };
        let snap = Snapshot::take(&src).unwrap();
        assert_eq!(snap.get("vmstat.pswpin"), Some(1));
        assert_eq!(snap.get("zswap_at_end.stored_pages"), None);
        write(dir.path(), "proc/vmstat", "pswpin many\n");
        let err = format!("{:#}", Snapshot::take(&src).unwrap_err());
        assert!(err.contains("proc/vmstat: line 1: pswpin: \"many\" is not a count"), "{err}");
    }
}
