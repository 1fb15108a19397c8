//! `swapsim run --series-out` and `--series-svg`: a sampled run's time series as a CSV or
//! JSON file and as a chart.
//!
//! The CSV file has one row per sample: its time and interval in seconds, every vmstat
//! counter's count during the interval (named as in /proc/vmstat), the events and accesses
//! of the interval, the memory stall in seconds, the block requests completed in each
//! direction and their mean service time in microseconds (empty when none completed), the
//! gauges at the sample's time, and per
//! task its state and pages (`task.NAME.state`, `task.NAME.rss_pages`,
//! `task.NAME.swap_pages`). The JSON file is the library's `Series` as it is. Times are
//! printed from integer nanoseconds, exactly.

use anyhow::{bail, Result};
use clap::ValueEnum;
use std::path::Path;
use swapsim::{Series, SimReport};

use crate::output::csv_field;

/// The format of `--series-out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SeriesFormat {
    /// One row per sample.
    Csv,
    /// The series as one JSON document.
    Json,
}

impl SeriesFormat {
    /// The format `given`, or the one `path`'s extension names.
    pub(crate) fn of(path: &Path, given: Option<SeriesFormat>) -> Result<SeriesFormat> {
        if let Some(format) = given {
            return Ok(format);
        }
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => Ok(SeriesFormat::Csv),
            Some("json") => Ok(SeriesFormat::Json),
            _ => bail!(
                "--series-out {}: cannot tell the format from the name; end it in .csv or .json, \
                 or give --series-format",
                path.display()
            ),
        }
    }
}

/// Seconds from integer nanoseconds, exactly ("0.100000000").
fn seconds(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// The mean of `total_ns` over `n` in microseconds, to the nanosecond; empty when `n` is 0.
fn mean_us(total_ns: u64, n: u64) -> String {
    if n == 0 {
        return String::new();
    }
    format!("{:.3}", total_ns as f64 / n as f64 / 1000.0)
}

/// The series as CSV text: a header line, then one row per sample.
pub(crate) fn csv(series: &Series) -> String {
    let vmstat_names: Vec<&str> = swapsim::Sample::default().vmstat.fields().iter().map(|f| f.0).collect();
    let mut header: Vec<String> = ["t_s", "interval_s"].map(String::from).to_vec();
    header.extend(vmstat_names.iter().map(|n| n.to_string()));
    header.extend(
        [
            "events",
            "accesses",
            "stall_s",
            "read_requests",
            "read_service_us_mean",
            "write_requests",
            "write_service_us_mean",
            "memcg_usage_pages",
            "rss_pages",
            "swap_pages",
            "swap_slots_used",
            "nr_writeback",
            "zswap_pool_bytes",
            "zswap_stored_pages",
        ]
        .map(String::from),
    );
    for name in &series.task_names {
        for field in ["state", "rss_pages", "swap_pages"] {
            header.push(format!("task.{name}.{field}"));
        }
    }
    let mut text = header.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(",");
    text.push('\n');
    for s in &series.samples {
        let mut row = vec![seconds(s.t_ns), seconds(s.interval_ns)];
        row.extend(s.vmstat.fields().iter().map(|f| f.1.to_string()));
        row.extend([s.events, s.accesses].map(|n| n.to_string()));
        row.push(seconds(s.stall_ns));
        for (requests, service_ns) in
            [(s.read_requests, s.read_service_ns), (s.write_requests, s.write_service_ns)]
        {
            row.push(requests.to_string());
            row.push(mean_us(service_ns, requests));
        }
        row.extend(
            [
                s.memcg_usage_pages,
                s.rss_pages,
                s.swap_pages,
                s.swap_slots_used,
                s.nr_writeback,
                s.zswap_pool_bytes,
                s.zswap_stored_pages,
            ]
            .map(|n| n.to_string()),
        );
        for t in &s.tasks {
            row.extend([t.state.name().to_string(), t.rss_pages.to_string(), t.swap_pages.to_string()]);
        }
        text.push_str(&row.join(","));
        text.push('\n');
    }
    text
}

/// Writes what `--series-out` and `--series-svg` ask for, each atomically.
pub(crate) fn write_files(
    report: &SimReport,
    out: Option<(&Path, SeriesFormat)>,
    svg: Option<&Path>,
) -> Result<()> {
    let Some(series) = &report.series else {
        bail!("the run was not sampled: give --sample-every or [report] sample_every")
    };
    if series.truncated {
        eprintln!(
            "swapsim: the time series stopped at {} samples before the run ended; sample less often",
            series.samples.len()
        );
    }
    if let Some((path, format)) = out {
        let bytes = match format {
            SeriesFormat::Csv => csv(series).into_bytes(),
            SeriesFormat::Json => {
                let mut bytes = serde_json::to_vec_pretty(series)?;
                bytes.push(b'\n');
                bytes
            }
        };
        crate::outfile::write_atomically(path, &bytes)?;
    }
    if let Some(path) = svg {
        let marks: Vec<(f64, &str)> =
            report.operations.iter().map(|op| (op.start_s, op.op.as_str())).collect();
        let text = crate::series_plot::svg(series, &marks)?;
        crate::outfile::write_atomically(path, text.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim::{Sample, TaskPhase, TaskSample};

    fn sample(t_ns: u64, pswpin: u64, state: TaskPhase) -> Sample {
        let mut s = Sample { t_ns, interval_ns: 100_000_000, rss_pages: 7, ..Sample::default() };
        s.vmstat.pswpin = pswpin;
        s.tasks = vec![TaskSample { state, rss_pages: 7, swap_pages: 1 }];
        s
    }

    #[test]
    fn the_csv_has_a_column_per_figure_and_a_row_per_sample() {
        let series = Series {
            interval_ns: 100_000_000,
            task_names: vec!["make,1".into()],
            samples: vec![
                sample(100_000_000, 3, TaskPhase::Runnable),
                sample(200_000_000, 4, TaskPhase::Finished),
            ],
            truncated: false,
        };
        let text = csv(&series);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(&header[..3], ["t_s", "interval_s", "pgfault"]);
        assert!(
            lines[0].ends_with("\"task.make,1.state\",\"task.make,1.rss_pages\",\"task.make,1.swap_pages\"")
        );
        let at = |name: &str| header.iter().position(|h| *h == name).expect(name);
        let row: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(row[0], "0.200000000");
        assert_eq!(row[at("pswpin")], "4");
        assert_eq!(row[at("rss_pages")], "7");
        assert!(lines[2].ends_with(",finished,7,1"), "{}", lines[2]);
    }

    #[test]
    fn the_format_comes_from_the_name_or_the_flag() {
        assert_eq!(SeriesFormat::of(Path::new("a/b.CSV"), None).unwrap(), SeriesFormat::Csv);
        assert_eq!(SeriesFormat::of(Path::new("b.json"), None).unwrap(), SeriesFormat::Json);
        assert_eq!(
            SeriesFormat::of(Path::new("b.txt"), Some(SeriesFormat::Json)).unwrap(),
            SeriesFormat::Json
        );
        let err = SeriesFormat::of(Path::new("b.txt"), None).unwrap_err().to_string();
        assert!(err.contains("b.txt") && err.contains(".csv"), "{err}");
    }
}
