//! `plug-merge`: plugging around swap readahead on a shared SAN (Christian Ehrhardt,
//! 2012): read dispatches and merges of one disk of sixteen, with and without the plug.

use anyhow::Result;
use rayon::prelude::*;
use serde::Serialize;
use swapsim_core::config::{BlockConfig, MachineConfig, MemcgConfig};
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::SimReport;
use swapsim_devices::DeviceConfig;
use swapsim_policies::ReadaheadConfig;

use super::support::{build_page_cache, mib, mib_size, round3, run_file, Runs};
use super::table::{columns, Table};
use super::verdict::{check, Tolerance, Verdict, RATIO_TOLERANCE};
use super::{Experiment, Findings, Info, Row};
use crate::progress::Progress;
use crate::scenario::{DeviceSection, ScenarioFile, WorkloadSection};

pub(super) const EXPERIMENT: Experiment = Experiment {
    info: Info {
        name: "plug-merge",
        title: "plugging around swap readahead on a shared SAN (Christian Ehrhardt, 2012)",
        published: "KVM host overcommitted 1.5x, swapping over 16 SAN disks. One disk without plug: \
                    560,888 reads queued, 544,701 dispatches, 16,187 merges, 2,243 MiB; with plug: 734,315 \
                    queued, 214,972 dispatches, 519,343 merges, 2,937 MiB; swap-in throughput +10% to +40%.",
    },
    run,
};

/// A plug-merge row: one device, plug on or off.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct PlugRow {
    /// Whether plugging was on.
    pub plug: bool,
    /// The device the row describes (the first of the 16).
    pub device: String,
    /// Read bios queued.
    pub reads_queued: u64,
    /// Read requests dispatched.
    pub read_dispatches: u64,
    /// Read bios merged into requests.
    pub read_merges: u64,
    /// Read requests completed.
    pub reads_completed: u64,
    /// Plug flushes that dispatched something.
    pub io_unplugs: u64,
    /// MiB read.
    pub read_mib: f64,
    /// Read dispatches per MiB read.
    pub dispatches_per_mib: f64,
    /// MiB read per simulated second.
    pub throughput_mib_s: f64,
}

fn run(scale: f64, progress: &dyn Progress) -> Result<Findings> {
    let ram = mib(2048.0, scale, 64.0);
    let n_guests = 4u64;
    // Guests together touch 1.5x the host's memory.
    let guest = (ram * 3 / 2) / n_guests;
    let disk = mib(1024.0, scale, 64.0);
    let names: Vec<String> = (0..16).map(|i| format!("sd{}", (b'b' + i as u8) as char)).collect();
    let devices: Vec<DeviceSection> = names
        .iter()
        .map(|name| DeviceSection {
            backing: None,
            name: name.clone(),
            size: mib_size(disk),
            priority: Some(0),
            model: DeviceConfig { channels: Some(4), ..DeviceConfig::preset("san") },
        })
        .collect();
    let plugs = [false, true];
    let runs = Runs::new(progress, plugs.len() as u64);
    let reports: Vec<Result<(bool, SimReport)>> = plugs
        .par_iter()
        .map(|&plug| {
            // The 2012 kernel read a fixed 2^page-cluster window around each fault.
            let mut generator = GeneratorConfig::new(Pattern::Zipf, mib_size(guest));
            generator.zipf_exponent = 0.6;
            generator.passes = 3;
            generator.tasks = n_guests as u32;
            let mut file = ScenarioFile {
                machine: MachineConfig {
                    memory: mib_size(ram),
                    cpus: n_guests as u32,
                    ..MachineConfig::default()
                },
                memcg: MemcgConfig { page_cache: build_page_cache(), ..MemcgConfig::default() },
                block: BlockConfig { plugging: plug, ..BlockConfig::default() },
                workload: WorkloadSection::generator(generator),
                ..ScenarioFile::default()
            };
            file.swap.page_cluster = 3;
            file.swap.readahead = ReadaheadConfig::Fixed.into();
            file.swap.devices = devices.clone();
            Ok((plug, run_file(&format!("plug-merge/plug={plug}"), file, &runs)?))
        })
        .collect();
    let runs: Vec<(bool, SimReport)> = reports.into_iter().collect::<Result<_>>()?;
    let mut rows = Vec::new();
    let mut per_mib = [0.0; 2];
    let mut throughput = [0.0; 2];
    for (plug, report) in &runs {
        let b = &report.block[0];
        let read_mib = b.reads.completed_kib as f64 / 1024.0;
        let all_mib: f64 = report.block.iter().map(|d| d.reads.completed_kib as f64 / 1024.0).sum();
        let all_dispatches: u64 = report.block.iter().map(|d| d.reads.dispatches).sum();
        let i = usize::from(*plug);
        per_mib[i] = all_dispatches as f64 / all_mib.max(f64::MIN_POSITIVE);
        throughput[i] = all_mib / report.sim_time_s.max(f64::MIN_POSITIVE);
        rows.push(PlugRow {
            plug: *plug,
            device: b.device.clone(),
            reads_queued: b.reads.queued,
            read_dispatches: b.reads.dispatches,
            read_merges: b.reads.merges,
            reads_completed: b.reads.completed,
            io_unplugs: b.io_unplugs,
            read_mib: round3(read_mib),
            dispatches_per_mib: round3(b.reads.dispatches as f64 / read_mib.max(f64::MIN_POSITIVE)),
            throughput_mib_s: round3(read_mib / report.sim_time_s.max(f64::MIN_POSITIVE)),
        });
    }
    Ok(Findings {
        setup: format!(
            "{ram} MiB host, {n_guests} guests (tasks) of {guest} MiB each on their own CPU (1.5x overcommit), \
             zipf(0.6) accesses, fixed readahead of 8 pages, 16 SAN-preset swap disks of {disk} MiB at equal \
             priority with 4 requests in service per LUN (the array's concurrency shared by 16 LUNs), global \
             reclaim (kswapd and direct); plugging off and on. The dispatch reduction does not depend on the \
             per-LUN concurrency; the throughput gain does (it comes from fewer requests on a busy array: with \
             8 per LUN the array is never busy and plugging only adds transfer time)"
        ),
        table: table(&rows),
        verdict: verdict(per_mib, throughput),
        rows: rows.into_iter().map(Row::Plug).collect(),
    })
}

/// The first disk's blktrace-style read figures, a row per plug setting, as the study's
/// table.
fn table(rows: &[PlugRow]) -> Table {
    let cells = rows
        .iter()
        .map(|p| {
            vec![
                if p.plug { "on" } else { "off" }.to_string(),
                p.device.clone(),
                p.reads_queued.to_string(),
                p.read_dispatches.to_string(),
                p.read_merges.to_string(),
                p.reads_completed.to_string(),
                p.io_unplugs.to_string(),
                format!("{:.1}", p.read_mib),
                format!("{:.1}", p.dispatches_per_mib),
                format!("{:.2}", p.throughput_mib_s),
            ]
        })
        .collect();
    Table {
        columns: columns(&[
            ("plug", 6),
            ("device", 6),
            ("Reads Queued", 13),
            ("Read Dispatches", 15),
            ("Read Merges", 12),
            ("Reads Completed", 15),
            ("IO unplugs", 11),
            ("read MiB", 10),
            ("disp./MiB", 11),
            ("MiB/s", 12),
        ]),
        rows: cells,
        ..Table::default()
    }
}

/// One disk: read dispatches and MiB read without and with the plug.
const PLUG_OFF_DISPATCHES_PER_MIB: f64 = 544_701.0 / 2243.0;
const PLUG_ON_DISPATCHES_PER_MIB: f64 = 214_972.0 / 2937.0;
/// The swap-in throughput gain with the plug, as a range.
const PLUG_THROUGHPUT_GAIN: (f64, f64) = (0.10, 0.40);

/// The verdict from the read dispatches per MiB and the swap-in throughput (MiB per
/// simulated second), each without and with the plug (indexed by whether it was on):
/// the cut in dispatches per MiB within ±25 % of the published one, the throughput gain
/// within the published range.
fn verdict(per_mib: [f64; 2], throughput: [f64; 2]) -> Verdict {
    let published = PLUG_OFF_DISPATCHES_PER_MIB / PLUG_ON_DISPATCHES_PER_MIB;
    let simulated = per_mib[0] / per_mib[1];
    let gain = throughput[1] / throughput[0] - 1.0;
    let checks = vec![
        check(
            "dispatches",
            "read dispatches per MiB cut by",
            simulated,
            published,
            Tolerance::Relative(RATIO_TOLERANCE),
        ),
        check(
            "throughput",
            "swap-in throughput gain",
            gain,
            PLUG_THROUGHPUT_GAIN.0,
            Tolerance::PercentRange(PLUG_THROUGHPUT_GAIN.0, PLUG_THROUGHPUT_GAIN.1),
        ),
    ];
    Verdict {
        metric: "read dispatches per MiB, plug off / plug on, all 16 disks".into(),
        simulated: round3(simulated),
        published: round3(published),
        direction_matches: simulated > 1.0 && gain > 0.0,
        reproduced: checks.iter().all(|c| c.reproduced),
        checks,
        text: format!(
            "plugging cuts read dispatches per MiB {simulated:.2}x (published {published:.2}x) and changes \
             swap-in throughput by {:+.0}% (published +{:.0}% to +{:.0}%)",
            gain * 100.0,
            PLUG_THROUGHPUT_GAIN.0 * 100.0,
            PLUG_THROUGHPUT_GAIN.1 * 100.0
        ),
        details: vec![("throughput_gain".into(), round3(gain))],
    }
}

#[cfg(test)]
mod tests {
    use crate::experiment::verdict::check_verdict;
    use expect_test::expect;

    #[test]
    fn plug_merge_is_judged_on_the_dispatch_cut_and_the_throughput_range() {
        // Read dispatches per MiB and MiB/s, plug off then on.
        check_verdict(
            &super::verdict([255.9, 70.3], [11.89, 15.45]),
            expect![[r#"
                dispatches: reproduced: read dispatches per MiB cut by 3.64, published 3.32 (tolerance ±25 %)
                throughput: reproduced: swap-in throughput gain +30 %, published +10 % to +40 % (tolerance: the published range)
                reproduced: true
            "#]],
        );
        check_verdict(
            &super::verdict([255.9, 70.3], [11.89, 18.0]),
            expect![[r#"
                dispatches: reproduced: read dispatches per MiB cut by 3.64, published 3.32 (tolerance ±25 %)
                throughput: not reproduced: swap-in throughput gain +51 %, published +10 % to +40 % (tolerance: the published range)
                reproduced: false
            "#]],
        );
    }
}
