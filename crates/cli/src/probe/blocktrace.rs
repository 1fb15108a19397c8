//! The swap disk's requests as the block tracepoints see them during one run: how many bios
//! were queued and merged, how many requests were issued, and each request's service time
//! (issue to completion), as the bundled cases' block figures were measured.
//!
//! A tracefs instance of its own (`instances/swapsim-probe`) records the events filtered by
//! the disk's device number into a large buffer that is read only after the run (a reader
//! blocked on the live pipe slows the workload; see the measuring notes), then removed.
//! Without tracefs (not mounted) the run has no such figures, and says so once.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashMap};

use super::host::Host;

/// The tracefs instance's folder.
const INSTANCE: &str = "/sys/kernel/tracing/instances/swapsim-probe";

/// Each CPU's ring buffer, KiB: room for about three million events, a minute of swapping
/// on a fast disk. A run that overflows it has no traced figures (see [`BlockTrace::finish`]).
const BUFFER_KIB: u64 = 262_144;

/// The events recorded, each filtered by the disk's device number.
const EVENTS: &[&str] = &[
    "block/block_bio_queue",
    "block/block_bio_backmerge",
    "block/block_bio_frontmerge",
    "block/block_rq_issue",
    "block/block_rq_complete",
];

/// A recording in progress.
pub(crate) struct BlockTrace {
    host: Host,
}

impl BlockTrace {
    /// Starts recording the requests of block device `dev` (`vda`); `None` without tracefs.
    pub(crate) fn start(host: &Host, dev: &str) -> Result<Option<BlockTrace>> {
        if !host.exists("/sys/kernel/tracing/instances") {
            return Ok(None);
        }
        let numbers = host.value(&format!("/sys/class/block/{dev}/dev"))?;
        let Some((major, minor)) = numbers.split_once(':') else {
            bail!("/sys/class/block/{dev}/dev: {numbers:?} is not MAJOR:MINOR");
        };
        let (major, minor): (u64, u64) = (
            major.parse().with_context(|| format!("/sys/class/block/{dev}/dev: major {major:?}"))?,
            minor.parse().with_context(|| format!("/sys/class/block/{dev}/dev: minor {minor:?}"))?,
        );
        // The kernel's dev_t: the major number above 20 bits of minor.
        let dev_t = major << 20 | minor;
        let dir = host.path(INSTANCE);
        if dir.exists() {
            // Left by a probe that did not finish: it records nothing of ours.
            std::fs::remove_dir(&dir).with_context(|| format!("cannot remove the old {}", dir.display()))?;
        }
        std::fs::create_dir(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
        let trace = BlockTrace { host: host.clone() };
        host.write(&format!("{INSTANCE}/buffer_size_kb"), &BUFFER_KIB.to_string())?;
        host.write(&format!("{INSTANCE}/trace_clock"), "mono")?;
        for event in EVENTS {
            host.write(&format!("{INSTANCE}/events/{event}/filter"), &format!("dev == {dev_t}"))?;
            host.write(&format!("{INSTANCE}/events/{event}/enable"), "1")?;
        }
        host.write(&format!("{INSTANCE}/tracing_on"), "1")?;
        Ok(Some(trace))
    }

    /// Stops recording, removes the instance and returns the run's figures (`block.*`):
    /// none when the ring buffer overflowed (a count missing events would be wrong).
    pub(crate) fn finish(self, say: &mut dyn FnMut(&str)) -> Result<BTreeMap<String, f64>> {
        Ok(match self.finish_text(say)? {
            Some(text) => summarize(&text, say).figures,
            None => BTreeMap::new(),
        })
    }

    /// Stops recording, removes the instance and returns the recorded text: `None` when
    /// the ring buffer overflowed (said), as a count missing events would be wrong.
    pub(crate) fn finish_text(self, say: &mut dyn FnMut(&str)) -> Result<Option<String>> {
        self.host.write(&format!("{INSTANCE}/tracing_on"), "0")?;
        let mut lost = 0;
        if let Ok(cpus) = std::fs::read_dir(self.host.path(&format!("{INSTANCE}/per_cpu"))) {
            for cpu in cpus.flatten() {
                let stats = std::fs::read_to_string(cpu.path().join("stats")).unwrap_or_default();
                for line in stats.lines() {
                    if let Some(n) =
                        line.strip_prefix("overrun: ").or_else(|| line.strip_prefix("dropped events: "))
                    {
                        lost += n.trim().parse::<u64>().unwrap_or(0);
                    }
                }
            }
        }
        if lost > 0 {
            say(&format!(
                "the block trace lost {lost} events (its buffer overflowed): no traced block figures"
            ));
            return Ok(None);
        }
        Ok(Some(self.host.read(&format!("{INSTANCE}/trace"))?))
    }
}

/// What a recorded trace gives, saying how many requests were a file system's.
pub(crate) fn summarize(text: &str, say: &mut dyn FnMut(&str)) -> Traced {
    let traced = figures(text);
    let file_requests = traced.requests.iter().filter(|r| r.is_file_io()).count();
    if file_requests > 0 {
        say(&format!(
            "{file_requests} requests on the swap disk were file readahead or metadata, not swap I/O: \
             left out of the service times (not of the request and sector counts)"
        ));
    }
    traced
}

/// One request of a recorded trace, issue to completion.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TracedRequest {
    /// Issue time, in seconds from the first request event of the trace.
    pub(crate) issue_s: f64,
    /// Issue to completion, in microseconds.
    pub(crate) service_us: f64,
    pub(crate) write: bool,
    /// The request's flags as the tracepoint prints them (`R`, `W`, `RA`, `WS`, ...).
    pub(crate) flags: String,
    pub(crate) sector: u64,
    /// Length in sectors.
    pub(crate) sectors: u64,
    /// Requests of each direction issued and not yet completed when it was issued.
    pub(crate) reads_ahead: u32,
    pub(crate) writes_ahead: u32,
    /// The task that issued it (the tracepoint's last field).
    pub(crate) task: String,
}

impl TracedRequest {
    /// A file system's readahead or metadata (`A` or `M` among the flags), never swap's.
    pub(crate) fn is_file_io(&self) -> bool {
        self.flags.contains(['A', 'M'])
    }
}

/// Every request of a recorded trace that completed, in completion order: matched issue
/// to completion by direction, start sector and length, with the requests in flight when
/// it was issued. A request issued before the trace began or completing after it ended is
/// left out, and so counts towards no other's depth.
pub(crate) fn requests(text: &str) -> Vec<TracedRequest> {
    // Each issued request waits here with its issue time, its service time still to come.
    let mut issued: HashMap<(bool, u64, u64), (f64, TracedRequest)> = HashMap::new();
    let mut in_flight = [0u32; 2];
    let mut first: Option<f64> = None;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((time, event, rest)) = parse_line(line) else { continue };
        if !matches!(event, "block_rq_issue" | "block_rq_complete") {
            continue;
        }
        let Some(Request { write, sector, len }) = request(rest) else { continue };
        let start = *first.get_or_insert(time);
        if event == "block_rq_issue" {
            let waiting = TracedRequest {
                issue_s: time - start,
                service_us: 0.0,
                write,
                flags: rest.split_whitespace().nth(1).unwrap_or("").to_string(),
                sector,
                sectors: len,
                reads_ahead: in_flight[0],
                writes_ahead: in_flight[1],
                task: rest.rsplit_once('[').map_or("", |(_, t)| t.trim_end_matches(']')).to_string(),
            };
            issued.insert((write, sector, len), (time, waiting));
            in_flight[usize::from(write)] += 1;
        } else if let Some((at, mut done)) = issued.remove(&(write, sector, len)) {
            in_flight[usize::from(write)] -= 1;
            done.service_us = (time - at) * 1e6;
            out.push(done);
        }
    }
    out
}

/// `requests` of each repeat as CSV text: a header line, then one row per request.
pub(crate) fn requests_csv(repeats: &[Vec<TracedRequest>]) -> String {
    let mut text =
        String::from("repeat,issue_s,service_us,dir,flags,sector,sectors,reads_ahead,writes_ahead,task\n");
    for (k, rows) in repeats.iter().enumerate() {
        for r in rows {
            text.push_str(&format!(
                "{},{:.6},{:.1},{},{},{},{},{},{},{}\n",
                k + 1,
                r.issue_s,
                r.service_us,
                if r.write { "W" } else { "R" },
                r.flags,
                r.sector,
                r.sectors,
                r.reads_ahead,
                r.writes_ahead,
                crate::output::csv_field(&r.task),
            ));
        }
    }
    text
}

impl Drop for BlockTrace {
    fn drop(&mut self) {
        let _ = self.host.write(&format!("{INSTANCE}/tracing_on"), "0");
        for event in EVENTS {
            let _ = self.host.write(&format!("{INSTANCE}/events/{event}/enable"), "0");
        }
        let _ = std::fs::remove_dir(self.host.path(INSTANCE));
    }
}

/// What a recorded trace gives.
pub(crate) struct Traced {
    /// Counts of queued and merged bios and of issued requests; service times.
    pub(crate) figures: BTreeMap<String, f64>,
    /// Every request that completed in the trace ([`requests`]).
    pub(crate) requests: Vec<TracedRequest>,
}

/// The figures of a recorded trace: counts of queued and merged bios and of issued
/// requests, and service times (microseconds) of its [`requests`]. The service times are
/// swap I/O's alone: a file system's requests ([`TracedRequest::is_file_io`]) are left out.
pub(crate) fn figures(text: &str) -> Traced {
    let mut counts: HashMap<&str, f64> = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((_, event, _)) = parse_line(line) else { continue };
        *counts.entry(event).or_default() += 1.0;
    }
    let requests = requests(text);
    let mut service: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for r in requests.iter().filter(|r| !r.is_file_io()) {
        service[usize::from(r.write)].push(r.service_us);
    }
    let mut out = BTreeMap::new();
    let count = |e: &str| counts.get(e).copied().unwrap_or(0.0);
    out.insert("block.bios_queued_all".to_string(), count("block_bio_queue"));
    out.insert("block.bio_backmerges_all".to_string(), count("block_bio_backmerge"));
    out.insert("block.bio_frontmerges_all".to_string(), count("block_bio_frontmerge"));
    out.insert("block.requests_issued_all".to_string(), count("block_rq_issue"));
    for (dir, times) in ["read", "write"].iter().zip(service.iter_mut()) {
        if times.is_empty() {
            continue;
        }
        times.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        out.insert(format!("block.{dir}_service_us_mean"), mean);
        if *dir == "read" {
            out.insert("block.read_service_us_p50".to_string(), percentile(times, 0.50));
            out.insert("block.read_service_us_p99".to_string(), percentile(times, 0.99));
        }
    }
    Traced { figures: out, requests }
}

/// The value at fraction `q` of sorted `xs` (nearest rank).
fn percentile(xs: &[f64], q: f64) -> f64 {
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

/// A trace line's time, event name and what follows it:
/// `task-pid [cpu] flags   123.456789: block_rq_issue: 254,0 R 4096 () 2048 + 8 [task]`.
fn parse_line(line: &str) -> Option<(f64, &str, &str)> {
    let (head, rest) = line.split_once(": block_")?;
    let time: f64 = head.rsplit(' ').next()?.parse().ok()?;
    let (name, rest) = rest.split_once(": ")?;
    let event = match name {
        "bio_queue" => "block_bio_queue",
        "bio_backmerge" => "block_bio_backmerge",
        "bio_frontmerge" => "block_bio_frontmerge",
        "rq_issue" => "block_rq_issue",
        "rq_complete" => "block_rq_complete",
        _ => return None,
    };
    Some((time, event, rest))
}

/// One request as a block tracepoint prints it.
struct Request {
    write: bool,
    sector: u64,
    /// In sectors.
    len: u64,
}

/// A request's direction, start sector and length, from
/// `254,0 R 4096 () 2048 + 8 [task]` or `254,0 RA () 2048 + 8 [0]`.
fn request(rest: &str) -> Option<Request> {
    let mut words = rest.split_whitespace();
    let _dev = words.next()?;
    let rwbs = words.next()?;
    let words: Vec<&str> = words.collect();
    let plus = words.iter().position(|w| *w == "+")?;
    let sector = words.get(plus.checked_sub(1)?)?.parse().ok()?;
    let len = words.get(plus + 1)?.parse().ok()?;
    Some(Request { write: rwbs.contains('W'), sector, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
# tracer: nop
            exec-1  [001] .....  100.000000: block_bio_queue: 254,0 R 2048 + 8 [exec]
            exec-1  [001] .....  100.000001: block_rq_issue: 254,0 R 4096 () 2048 + 8 [exec]
            exec-1  [001] .....  100.000010: block_bio_queue: 254,0 W 4096 + 8 [exec]
            exec-1  [001] .....  100.000011: block_bio_backmerge: 254,0 W 4096 + 8 [exec]
            exec-1  [001] .....  100.000012: block_rq_issue: 254,0 W 8192 () 4096 + 16 [exec]
          <idle>-0  [000] ..s1.  100.000051: block_rq_complete: 254,0 R () 2048 + 8 [0]
          <idle>-0  [000] ..s1.  100.000112: block_rq_complete: 254,0 W () 4096 + 16 [0]
";

    #[test]
    fn requests_are_matched_issue_to_completion() {
        let f = figures(TRACE).figures;
        assert_eq!(f["block.bios_queued_all"], 2.0);
        assert_eq!(f["block.bio_backmerges_all"], 1.0);
        assert_eq!(f["block.requests_issued_all"], 2.0);
        assert!((f["block.read_service_us_mean"] - 50.0).abs() < 1e-6, "{f:?}");
        assert!((f["block.read_service_us_p99"] - 50.0).abs() < 1e-6, "{f:?}");
        assert!((f["block.write_service_us_mean"] - 100.0).abs() < 1e-6, "{f:?}");
    }

    #[test]
    fn file_readahead_and_metadata_are_left_out_of_the_service_times() {
        let trace = format!(
            "{TRACE}\
            exec-1  [001] .....  100.000200: block_rq_issue: 254,0 RA 131072 () 90000 + 256 [exec]
            exec-1  [001] .....  100.000210: block_rq_issue: 254,0 RM 4096 () 70000 + 8 [exec]
          <idle>-0  [000] ..s1.  100.001200: block_rq_complete: 254,0 RA () 90000 + 256 [0]
          <idle>-0  [000] ..s1.  100.001210: block_rq_complete: 254,0 RM () 70000 + 8 [0]
"
        );
        let t = figures(&trace);
        assert_eq!(t.requests.iter().filter(|r| r.is_file_io()).count(), 2);
        assert_eq!(t.figures["block.requests_issued_all"], 4.0);
        assert!((t.figures["block.read_service_us_mean"] - 50.0).abs() < 1e-6, "{:?}", t.figures);
        assert!((t.figures["block.read_service_us_p99"] - 50.0).abs() < 1e-6, "{:?}", t.figures);
    }

    #[test]
    fn each_request_is_listed_with_the_requests_in_flight_when_it_was_issued() {
        let rows = requests(TRACE);
        assert_eq!(rows.len(), 2);
        let (read, write) = (&rows[0], &rows[1]);
        assert_eq!((read.write, read.sector, read.sectors, read.flags.as_str()), (false, 2048, 8, "R"));
        assert_eq!((read.reads_ahead, read.writes_ahead), (0, 0));
        assert!((read.service_us - 50.0).abs() < 1e-6 && read.issue_s == 0.0, "{read:?}");
        // The write was issued while the read was in flight.
        assert_eq!((write.write, write.sectors, write.reads_ahead, write.writes_ahead), (true, 16, 1, 0));
        assert!((write.service_us - 100.0).abs() < 1e-6 && (write.issue_s - 11e-6).abs() < 1e-9, "{write:?}");
        assert_eq!(write.task, "exec");
        let csv = requests_csv(&[rows.clone(), rows]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0],
            "repeat,issue_s,service_us,dir,flags,sector,sectors,reads_ahead,writes_ahead,task"
        );
        assert_eq!(lines[2], "1,0.000011,100.0,W,W,4096,16,1,0,exec");
        assert!(lines[4].starts_with("2,"), "{csv}");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!((percentile(&xs, 0.5), percentile(&xs, 0.99)), (50.0, 99.0));
    }
}
