//! `swapsim merge`: joins the shard documents of one sweep into the whole sweep's document.
//!
//! The shards must come from the same sweep (version, scenario path, seed, axes, fixed
//! edits and shard count) and together hold every variant exactly once. Everything except
//! `host` is copied verbatim from the shards, so the merged document is byte-identical to
//! the one an unsharded `swapsim sweep --format json` prints, once `host` is removed.
//! `--baseline` is given here rather than to the shards, since a variant's baseline may
//! lie in another shard; the summary is drawn from the merged variants, as a sweep draws
//! its own.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::sweep_doc::{self, AxisEntry, BaselineEntry, RawSweepDocument, ShardInfo, SweepHost, SweepView};
use swapsim::sweep::MAX_VARIANTS;

/// One shard document and the file it came from.
struct ShardFile {
    name: String,
    doc: RawSweepDocument,
    shard: ShardInfo,
}

/// The merged document and its view.
pub(crate) struct Merged {
    pub(crate) doc: RawSweepDocument,
    pub(crate) view: SweepView,
}

/// Reads, checks and joins the shard documents at `paths`, comparing each variant with
/// its `baseline` variant (`--baseline KEY=VALUE`) when given.
pub(crate) fn merge(paths: &[PathBuf], baseline: Option<&str>) -> Result<Merged> {
    let shards = paths.iter().map(|path| read(path)).collect::<Result<Vec<ShardFile>>>()?;
    let first = shards.first().context("give at least one shard document")?;
    for other in &shards[1..] {
        check_same_sweep(first, other)?;
    }
    let ShardInfo { n, total, .. } = first.shard;
    if total > MAX_VARIANTS {
        bail!("{}: a sweep of {total} variants is over the limit of {MAX_VARIANTS}", first.name);
    }

    // Which file holds each shard number and each variant index.
    // A map, because `n` comes from a file and may exceed the number of variants.
    let mut shard_owner: BTreeMap<usize, &str> = BTreeMap::new();
    let mut variant_owner: Vec<Option<&str>> = vec![None; total];
    for file in &shards {
        let k = file.shard.k;
        if let Some(earlier) = shard_owner.insert(k, &file.name) {
            bail!("duplicate shard {k}/{n}: both {earlier} and {} hold it", file.name);
        }
        for variant in &file.doc.variants {
            let index = variant.index;
            if index >= total || !file.shard_holds(index) {
                bail!("{}: variant {index} does not belong to shard {k}/{n} of {total} variants", file.name);
            }
            match variant_owner[index] {
                Some(earlier) => bail!("duplicate variant {index}: both {earlier} and {} hold it", file.name),
                None => variant_owner[index] = Some(&file.name),
            }
        }
    }
    let missing: Vec<usize> = (0..total).filter(|&idx| variant_owner[idx].is_none()).collect();
    if let Some(&idx) = missing.first() {
        let k = idx % n + 1;
        let in_shard: Vec<String> =
            missing.iter().filter(|&&i| i % n == k - 1).map(|i| i.to_string()).collect();
        match shard_owner.get(&k) {
            Some(name) => bail!("{name}: shard {k}/{n} lacks variants {}", in_shard.join(", ")),
            None => {
                let given: Vec<&str> = shards.iter().map(|file| file.name.as_str()).collect();
                bail!(
                    "missing shard {k}/{n} (variants {}); given only {}",
                    in_shard.join(", "),
                    given.join(", ")
                )
            }
        }
    }

    let host = SweepHost {
        wall_s: (shards.iter().map(|file| file.doc.host.wall_s).sum::<f64>() * 1e6).round() / 1e6,
        jobs: shards.iter().map(|file| file.doc.host.jobs).max().unwrap_or(0),
        shards: Some(shards.len()),
    };
    let axes: Vec<AxisEntry> = parse_raw(&first.doc.vary, &first.name, "vary")?;
    let fixed: Vec<String> = parse_raw(&first.doc.fixed, &first.name, "fixed")?;
    let mut shards = shards.into_iter();
    let head = shards.next().expect("checked above").doc;
    let mut variants = head.variants;
    for file in shards {
        variants.extend(file.doc.variants);
    }
    variants.sort_by_key(|variant| variant.index);
    let axes: Vec<(String, Vec<Value>)> = axes.into_iter().map(|axis| (axis.key, axis.values)).collect();
    let baseline = baseline.map(|arg| sweep_doc::baseline(arg, &axes)).transpose()?;
    let mut doc = RawSweepDocument {
        shard: None,
        variants,
        baseline: baseline.as_ref().map(BaselineEntry::of),
        summary: None,
        host,
        ..head
    };
    let view = SweepView::of(&doc, axes, fixed, baseline).context("merged sweep")?;
    doc.summary = view.summary();
    Ok(Merged { doc, view })
}

impl ShardFile {
    fn shard_holds(&self, index: usize) -> bool {
        index % self.shard.n == self.shard.k - 1
    }
}

fn read(path: &Path) -> Result<ShardFile> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read shard {name}"))?;
    let doc: RawSweepDocument =
        serde_json::from_str(&text).map_err(|err| anyhow!("{name}: not a sweep document: {err}"))?;
    let Some(shard) = doc.shard else {
        bail!("{name}: has no \"shard\" member; it is a whole sweep, not one shard of it");
    };
    if shard.k == 0 || shard.k > shard.n {
        bail!("{name}: shard {}/{} is not K/N with 1 <= K <= N", shard.k, shard.n);
    }
    Ok(ShardFile { name, doc, shard })
}

/// Refuses to join shards of different sweeps, naming the member that differs.
fn check_same_sweep(first: &ShardFile, other: &ShardFile) -> Result<()> {
    let (a, b) = (&first.doc, &other.doc);
    let compact = |raw: &RawValue| -> String {
        serde_json::from_str::<Value>(raw.get()).map(|value| value.to_string()).unwrap_or_default()
    };
    let differs: Option<(&str, String, String)> = if a.swapsim_version != b.swapsim_version {
        Some(("swapsim_version", a.swapsim_version.clone(), b.swapsim_version.clone()))
    } else if a.scenario != b.scenario {
        Some(("scenario", a.scenario.clone(), b.scenario.clone()))
    } else if a.seed != b.seed {
        Some(("seed", a.seed.to_string(), b.seed.to_string()))
    } else if a.vary.get() != b.vary.get() {
        Some(("vary", compact(&a.vary), compact(&b.vary)))
    } else if a.fixed.get() != b.fixed.get() {
        Some(("fixed", compact(&a.fixed), compact(&b.fixed)))
    } else if a.seeds != b.seeds {
        Some(("seeds", a.seeds.to_string(), b.seeds.to_string()))
    } else if first.shard.n != other.shard.n {
        Some(("shard.n", first.shard.n.to_string(), other.shard.n.to_string()))
    } else if first.shard.total != other.shard.total {
        Some(("shard.total", first.shard.total.to_string(), other.shard.total.to_string()))
    } else {
        None
    };
    match differs {
        Some((member, ours, theirs)) => bail!(
            "{}: not a shard of the same sweep as {}: {member} is {theirs}, not {ours}",
            other.name,
            first.name
        ),
        None => Ok(()),
    }
}

fn parse_raw<T: serde::de::DeserializeOwned>(raw: &RawValue, file: &str, member: &str) -> Result<T> {
    serde_json::from_str(raw.get()).map_err(|err| anyhow!("{file}: member {member}: {err}"))
}
