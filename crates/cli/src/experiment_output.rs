//! `swapsim experiment run` output: an experiment's result as a table laid out like the
//! publication's, or as CSV.
//!
//! The experiments themselves, and the result's JSON shape, are the library's
//! (`swapsim::experiment`); this module only lays the result out for reading.

use anyhow::{Context, Result};
use std::io::Write;
use swapsim::experiment::{Outcome, Row};

/// Prints the setup, a table laid out like the publication's, and the verdict: the
/// direction, then each published figure checked within its tolerance.
pub(crate) fn write_table(out: &mut impl Write, o: &Outcome) -> Result<()> {
    writeln!(out, "{}: {}", o.experiment, o.title)?;
    writeln!(out, "setup: {}", o.setup)?;
    if o.scale < 1.0 {
        writeln!(out, "scale: {} (sizes reduced; compare with the publication at scale 1)", o.scale)?;
    }
    writeln!(out, "published: {}", o.published)?;
    writeln!(out)?;
    match o.rows.first() {
        Some(Row::Swapoff(_)) => {
            let columns = ["scaling-pre-5.8", "scaling", "fixed", "vma"];
            writeln!(out, "swapoff time (s)")?;
            writeln!(
                out,
                "{:>12} {:>16} {:>10} {:>10} {:>10}",
                "page-cluster", columns[0], columns[1], columns[2], columns[3]
            )?;
            for pc in 1..=8 {
                let cell = |c: &str| {
                    o.rows
                        .iter()
                        .find_map(|r| match r {
                            Row::Swapoff(s) if s.policy == c && s.page_cluster == pc => Some(s.swapoff_s),
                            _ => None,
                        })
                        .unwrap_or(f64::NAN)
                };
                writeln!(
                    out,
                    "{pc:>12} {:>16.2} {:>10.2} {:>10.2} {:>10.2}",
                    cell(columns[0]),
                    cell(columns[1]),
                    cell(columns[2]),
                    cell(columns[3])
                )?;
            }
        }
        Some(Row::Plug(_)) => {
            writeln!(
                out,
                "{:>6} {:>6} {:>13} {:>15} {:>12} {:>15} {:>11} {:>10} {:>11} {:>12}",
                "plug",
                "device",
                "Reads Queued",
                "Read Dispatches",
                "Read Merges",
                "Reads Completed",
                "IO unplugs",
                "read MiB",
                "disp./MiB",
                "MiB/s"
            )?;
            for r in &o.rows {
                if let Row::Plug(p) = r {
                    writeln!(
                        out,
                        "{:>6} {:>6} {:>13} {:>15} {:>12} {:>15} {:>11} {:>10.1} {:>11.1} {:>12.2}",
                        if p.plug { "on" } else { "off" },
                        p.device,
                        p.reads_queued,
                        p.read_dispatches,
                        p.read_merges,
                        p.reads_completed,
                        p.io_unplugs,
                        p.read_mib,
                        p.dispatches_per_mib,
                        p.throughput_mib_s
                    )?;
                }
            }
        }
        Some(Row::Mthp(_)) => {
            writeln!(
                out,
                "{:>7} {:>9} {:>10} {:>10} {:>12} {:>11} {:>18} {:>9}  outcome",
                "lru",
                "swapin",
                "pswpin",
                "pswpout",
                "16kB-swpout",
                "16kB-swpin",
                "16kB-fallback-chg",
                "wall (s)"
            )?;
            for r in &o.rows {
                if let Row::Mthp(m) = r {
                    let outcome = if m.jobs_oom_killed > 0 {
                        format!("{} ({} jobs OOM-killed)", m.outcome, m.jobs_oom_killed)
                    } else {
                        m.outcome.clone()
                    };
                    writeln!(
                        out,
                        "{:>7} {:>9} {:>10} {:>10} {:>12} {:>11} {:>18} {:>9.2}  {outcome}",
                        m.lru,
                        m.swapin,
                        m.pswpin,
                        m.pswpout,
                        m.swpout_16k,
                        m.swpin_16k,
                        m.swpin_fallback_charge_16k,
                        m.wall_s
                    )?;
                }
            }
        }
        Some(Row::Zswap(_)) => {
            writeln!(
                out,
                "{:>13} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  outcome",
                "zswap",
                "pswpin",
                "zswpin",
                "zswpout",
                "zswpwb",
                "pswpout",
                "visited",
                "wall (s)",
                "OOM kills"
            )?;
            for r in &o.rows {
                if let Row::Zswap(z) = r {
                    writeln!(
                        out,
                        "{:>13} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9.2} {:>9}  {}",
                        z.zswap,
                        z.figures.pswpin,
                        z.figures.zswpin,
                        z.figures.zswpout,
                        z.figures.zswpwb,
                        z.figures.pswpout,
                        z.figures.shrinker_scanned,
                        z.figures.wall_s,
                        z.figures.jobs_oom_killed,
                        z.outcome
                    )?;
                }
            }
            let n_builds = o.rows.iter().find_map(|r| match r {
                Row::Zswap(z) => Some(z.builds.len()),
                _ => None,
            });
            let means = match n_builds {
                Some(n) if n > 1 => format!("means over the {n} builds (those that finished); "),
                _ => String::new(),
            };
            writeln!(out, "({means}visited: entries the memory-pressure shrinker visited)")?;
        }
        Some(Row::Hibernate(_)) => {
            writeln!(
                out,
                "{:>10} {:>10} {:>12} {:>9} {:>9} {:>10} {:>11} {:>9} {:>14} {:>10}",
                "kernel",
                "image_size",
                "hibernate s",
                "resume s",
                "shrink s",
                "reclaimed",
                "image pages",
                "image MiB",
                "pre-reclaim s",
                "release s"
            )?;
            for r in &o.rows {
                if let Row::Hibernate(h) = r {
                    writeln!(
                        out,
                        "{:>10} {:>10} {:>12.2} {:>9.2} {:>9.2} {:>10} {:>11} {:>9.1} {:>14.2} {:>10.2}",
                        h.kernel,
                        h.image_size,
                        h.hibernate_s,
                        h.resume_s,
                        h.shrink_s,
                        h.reclaimed_pages,
                        h.image_pages,
                        h.image_mib,
                        h.pre_reclaim_s,
                        h.release_s
                    )?;
                }
            }
            writeln!(
                out,
                "(reclaimed: pages hibernation's shrink pushed out; pre-reclaim: mm-reclaim-run 0 before \
                 hibernating; release: mm-reclaim-release 0 after resume)"
            )?;
        }
        None => {}
    }
    writeln!(out)?;
    let v = &o.verdict;
    let mark = if v.direction_matches { "matches" } else { "DOES NOT match" };
    writeln!(out, "verdict ({mark} the published direction): {}", v.text)?;
    let n_reproduced = v.checks.iter().filter(|c| c.reproduced).count();
    let overall = if v.reproduced { "reproduced" } else { "NOT reproduced" };
    writeln!(out, "{overall}: {n_reproduced} of {} published figures within tolerance", v.checks.len())?;
    for check in &v.checks {
        writeln!(out, "  {}", check.text)?;
    }
    Ok(())
}

/// One CSV line per row, with a header. Fields that are lists or objects (such as a
/// zswap row's per-build figures) are left to the JSON output.
pub(crate) fn write_csv(out: &mut impl Write, o: &Outcome) -> Result<()> {
    let mut first = true;
    for r in &o.rows {
        let value = serde_json::to_value(r)?;
        let obj = value.as_object().context("rows are objects")?;
        let scalars: Vec<(&String, &serde_json::Value)> =
            obj.iter().filter(|(_, v)| !v.is_array() && !v.is_object()).collect();
        if first {
            writeln!(out, "{}", scalars.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(","))?;
            first = false;
        }
        let cells: Vec<String> = scalars
            .iter()
            .map(|(_, v)| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}
