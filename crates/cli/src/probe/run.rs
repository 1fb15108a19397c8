//! `swapsim probe run`: a case's workload measured on this machine's kernel, repeat by
//! repeat, and written as a case of its own that `swapsim validate` scores.
//!
//! Each repeat starts from a clean machine, as the bundled cases' runs did: the plan is
//! applied (the memory cgroup, the knobs, a fresh swap file or zram device), the kernel's
//! counters are read, the workload program runs the case's trace inside the cgroup pinned
//! to one CPU, the counters are read again, and everything is restored before the next
//! repeat. A repeat whose workload the memcg OOM killer ended is counted and left out of the
//! figures. Block figures come from the swap device's `stat` file (requests and sectors)
//! and, where tracefs is mounted, from the block tracepoints (bios queued and merged,
//! requests issued, service times: `blocktrace`).

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::blocktrace::{self, BlockTrace};
use super::host::Host;
use super::plan::{self, Places};
use super::setup::{self, StartOptions};
use super::system::System;
use swapsim::probe::case::{case_document, CaseHead, Run};
use swapsim::probe::measure::{delta, Snapshot, Sources};

/// How one run of the workload program ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ending {
    /// It performed every access: the end of its fill and of its last access, in seconds;
    /// for a queue, the last exit and each job's start and end (no one fill).
    Completed { fill_s: f64, total_s: f64, jobs: Vec<(f64, f64)> },
    /// A signal ended it (the memcg OOM killer sends SIGKILL).
    Killed,
}

/// Runs the workload program once inside the cgroup whose `cgroup.procs` is given.
pub(crate) trait Workload {
    fn run(&mut self, cgroup_procs: &Path) -> Result<Ending>;

    /// The files the program reads while it runs (its traces), read once before each
    /// repeat's measurement so that they come from the page cache: read from the disk, a
    /// queued job's trace is file readahead on the swap disk, in its request counts and
    /// service times (1,481 requests, 2% of the reads and most of their p99, in one run of
    /// `J-small20-j3-swapfile`).
    fn files(&self) -> Vec<&Path> {
        Vec::new()
    }
}

/// Reads each of `files` through to its end, so that the workload finds it in the page cache.
pub(crate) fn warm_page_cache(files: &[&Path]) -> Result<()> {
    for file in files {
        let mut f = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        std::io::copy(&mut f, &mut std::io::sink())
            .with_context(|| format!("cannot read {}", file.display()))?;
    }
    Ok(())
}

/// The workload program itself: this binary, `probe exec`, on the case's trace.
pub(crate) struct ExecWorkload {
    pub(crate) trace: PathBuf,
    pub(crate) contents: &'static str,
    pub(crate) thp: &'static str,
    pub(crate) cpu: usize,
}

impl Workload for ExecWorkload {
    fn run(&mut self, cgroup_procs: &Path) -> Result<Ending> {
        let me = std::env::current_exe().context("cannot find the swapsim binary to run the workload")?;
        let output = std::process::Command::new(me)
            .args(["probe", "exec"])
            .arg(&self.trace)
            .args(["--contents", self.contents, "--thp", self.thp, "--cpu", &self.cpu.to_string()])
            .arg("--cgroup-procs")
            .arg(cgroup_procs)
            .output()
            .context("cannot start the workload program")?;
        use std::os::unix::process::ExitStatusExt;
        if output.status.signal().is_some() {
            return Ok(Ending::Killed);
        }
        if !output.status.success() {
            bail!(
                "the workload program failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let line = String::from_utf8_lossy(&output.stdout);
        let doc: Value = serde_json::from_str(line.trim())
            .with_context(|| format!("the workload program printed {:?}, not its JSON line", line.trim()))?;
        let time =
            |key: &str| doc[key].as_f64().ok_or_else(|| anyhow!("the workload program's {key} is missing"));
        Ok(Ending::Completed { fill_s: time("fill_s")?, total_s: time("total_s")?, jobs: Vec::new() })
    }

    fn files(&self) -> Vec<&Path> {
        vec![self.trace.as_path()]
    }
}

/// A queue of workload programs, as `make -jN` runs jobs: in list order, `concurrency` at
/// a time, the next one started as soon as a running one exits, all pinned to one CPU.
/// Job times are from the queue's start; a job a signal ended makes the run a kill.
pub(crate) struct QueueWorkload {
    pub(crate) jobs: Vec<ExecWorkload>,
    pub(crate) concurrency: usize,
}

impl Workload for QueueWorkload {
    fn run(&mut self, cgroup_procs: &Path) -> Result<Ending> {
        use std::os::unix::process::ExitStatusExt;
        let me = std::env::current_exe().context("cannot find the swapsim binary to run the workload")?;
        let start = std::time::Instant::now();
        let mut times = vec![(0.0, 0.0); self.jobs.len()];
        let mut running: Vec<(usize, std::process::Child)> = Vec::new();
        let mut next = 0;
        let mut killed = false;
        while next < self.jobs.len() || !running.is_empty() {
            while running.len() < self.concurrency && next < self.jobs.len() {
                let job = &self.jobs[next];
                let child = std::process::Command::new(&me)
                    .args(["probe", "exec"])
                    .arg(&job.trace)
                    .args(["--contents", job.contents, "--thp", job.thp, "--cpu", &job.cpu.to_string()])
                    .arg("--cgroup-procs")
                    .arg(cgroup_procs)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .with_context(|| format!("cannot start job {next}"))?;
                times[next].0 = start.elapsed().as_secs_f64();
                running.push((next, child));
                next += 1;
            }
            let mut i = 0;
            while i < running.len() {
                let Some(status) = running[i].1.try_wait().context("waiting for a job")? else {
                    i += 1;
                    continue;
                };
                let (job, child) = running.swap_remove(i);
                times[job].1 = start.elapsed().as_secs_f64();
                if status.signal().is_some() {
                    killed = true;
                } else if !status.success() {
                    let mut err = String::new();
                    if let Some(mut pipe) = child.stderr {
                        use std::io::Read;
                        let _ = pipe.read_to_string(&mut err);
                    }
                    bail!("job {job} failed ({status}): {}", err.trim());
                }
            }
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
        if killed {
            return Ok(Ending::Killed);
        }
        let total_s = times.iter().map(|t| t.1).fold(0.0, f64::max);
        Ok(Ending::Completed { fill_s: 0.0, total_s, jobs: times })
    }

    fn files(&self) -> Vec<&Path> {
        self.jobs.iter().map(|j| j.trace.as_path()).collect()
    }
}

/// What the workload program is told, from a case's `workload`: the content class named in
/// its words (`page_contents`) and its THP hint (`thp`).
pub(crate) fn workload_flags(file: &Path, workload: &Value) -> Result<(&'static str, &'static str)> {
    let words = workload["page_contents"].as_str().unwrap_or("random").to_ascii_lowercase();
    let contents = if words.contains("half") {
        "half"
    } else if words.contains("text") {
        "text"
    } else if words.contains("zero") {
        "zero"
    } else {
        "random"
    };
    let thp = match workload["thp"].as_str() {
        None | Some("off") => "nohugepage",
        Some("default") => "default",
        Some(other) => bail!("{}: workload.thp {other:?} is not \"off\" or \"default\"", file.display()),
    };
    Ok((contents, thp))
}

/// Everything a probe needs besides the machine.
pub(crate) struct Probe<'a> {
    pub(crate) case_file: &'a Path,
    pub(crate) places: Places,
    pub(crate) options: StartOptions,
    /// The swap device's block device name for its `stat` figures (`zram0`, `vda`).
    pub(crate) block_device: Option<String>,
    pub(crate) repeats: usize,
    /// Where to write every traced request of every repeat (`--requests-out`), if asked.
    pub(crate) requests_out: Option<PathBuf>,
}

/// Runs the probe's repeats on `host` and returns them; `say` hears progress.
pub(crate) fn repeats(
    host: &Host,
    probe: &Probe<'_>,
    system: &mut dyn System,
    workload: &mut dyn Workload,
    interrupted: &AtomicBool,
    say: &mut dyn FnMut(&str),
) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut requests: Vec<Vec<blocktrace::TracedRequest>> = Vec::new();
    for repeat in 1..=probe.repeats {
        if interrupted.load(Ordering::SeqCst) {
            bail!("interrupted before repeat {repeat}; the machine is as it was");
        }
        let plan = plan::plan_file(host, probe.case_file, &probe.places)?;
        let applied = setup::apply(host, &plan, system, &probe.options, interrupted, &mut |w| say(w))?;
        let sources = Sources {
            root: host.root().to_path_buf(),
            block_device: probe.block_device.clone(),
            memcg_dir: Some(PathBuf::from(&plan.cgroup_dir)),
        };
        let measured = (|| -> Result<(Snapshot, Ending, Snapshot, BTreeMap<String, f64>)> {
            warm_page_cache(&workload.files())?;
            let trace = match &probe.block_device {
                Some(dev) => BlockTrace::start(host, dev)?,
                None => None,
            };
            if trace.is_none() && repeat == 1 && probe.block_device.is_some() {
                say("no tracefs at /sys/kernel/tracing: no block service times or merge counts");
            }
            let before = Snapshot::take(&sources)?;
            let ending = workload.run(&host.path(&format!("{}/cgroup.procs", plan.cgroup_dir)))?;
            let after = Snapshot::take(&sources)?;
            let text = match trace {
                Some(trace) => trace.finish_text(&mut *say)?,
                None => None,
            };
            let traced = match &text {
                Some(text) => {
                    let traced = blocktrace::summarize(text, &mut *say);
                    if probe.requests_out.is_some() {
                        requests.push(traced.requests);
                    }
                    traced.figures
                }
                None => BTreeMap::new(),
            };
            Ok((before, ending, after, traced))
        })();
        // Restored whatever happened; a measurement error is reported after the restore.
        let restored = applied.restore();
        let (before, ending, after, traced) = measured?;
        restored.context("restoring the machine after a repeat")?;
        let mut figures = delta(&before, &after);
        // The second snapshot is read once the workload has exited and its swap entries
        // are freed, so zswap's and zram's levels describe an emptied pool, not the run's
        // end: they are left out rather than written as zeros.
        figures.retain(|key, _| !swapsim::probe::measure::is_gauge(key));
        figures.extend(traced);
        let (fill_s, total_s, jobs) = match &ending {
            Ending::Completed { fill_s, total_s, jobs } => (*fill_s, *total_s, jobs.clone()),
            Ending::Killed => {
                // A kill the cgroup does not count as an OOM kill is not one: say so.
                if !swapsim::probe::measure::oom_killed(&figures) {
                    bail!(
                        "repeat {repeat}: the workload was killed by a signal, not by the memcg OOM killer"
                    );
                }
                (0.0, 0.0, Vec::new())
            }
        };
        figures.entry("memcg.oom_kill".into()).or_insert(0.0);
        say(&format!(
            "repeat {repeat} of {}: {}",
            probe.repeats,
            if ending == Ending::Killed { "OOM-killed".to_string() } else { format!("{total_s:.3} s") }
        ));
        runs.push(Run { figures, fill_s, total_s, jobs });
    }
    if let Some(path) = &probe.requests_out {
        if requests.len() < runs.len() {
            say(&format!(
                "{}: {} of {} repeats had a complete block trace; the file lists those",
                path.display(),
                requests.len(),
                runs.len()
            ));
        }
        crate::outfile::write_atomically(path, blocktrace::requests_csv(&requests).as_bytes())?;
        say(&format!("wrote {}", path.display()));
    }
    Ok(runs)
}

/// The case written from `runs`: the input case's set-up and workload with this machine's
/// kernel and memory, its trace copied beside it. Returns the case file written.
pub(crate) fn write_case(
    host: &Host,
    case_file: &Path,
    id: &str,
    runs: &[Run],
    out_dir: &Path,
    block_device: Option<&str>,
    swap_device: Option<&str>,
) -> Result<PathBuf> {
    let text =
        std::fs::read_to_string(case_file).with_context(|| format!("cannot read {}", case_file.display()))?;
    let input: Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", case_file.display()))?;
    let kernel = host.value("/proc/sys/kernel/osrelease").unwrap_or_else(|_| "unknown".into());
    let mut setup = input["setup"].clone();
    setup["kernel"] = Value::from(kernel.clone());
    if let Some(ram) = mem_total_bytes(host) {
        setup["machine_ram_bytes"] = Value::from(ram);
    }
    setup["machine"] = machine(host, block_device);
    if let Some(path) = swap_device {
        setup["swap"]["kind"] = Value::from("partition");
        setup["swap"]["device"] = Value::from(format!("block device {path}"));
    }
    let workload = input["workload"].clone();
    let kind = input["kind"].as_str().unwrap_or("live").to_string();
    let head = CaseHead {
        id: id.to_string(),
        kernel,
        measured_on: today(),
        setup,
        workload: workload.clone(),
        kind,
    };
    let doc = case_document(&head, runs)?;
    for trace in traces(case_file, &workload)? {
        let from = case_dir_root(case_file).join(&trace);
        let to = out_dir.join(&trace);
        std::fs::create_dir_all(to.parent().expect("a trace path has a folder"))
            .with_context(|| format!("cannot make {}", out_dir.display()))?;
        if !to.exists() {
            let bytes =
                std::fs::read(&from).with_context(|| format!("cannot read the trace {}", from.display()))?;
            crate::outfile::write_atomically(&to, &bytes)?;
        }
    }
    let cases = out_dir.join("cases");
    std::fs::create_dir_all(&cases).with_context(|| format!("cannot make {}", cases.display()))?;
    let file = cases.join(format!("{id}.json"));
    let text = serde_json::to_string_pretty(&doc).expect("a case serialises") + "\n";
    crate::outfile::write_atomically(&file, text.as_bytes())?;
    Ok(file)
}

/// The traces a case's workload names: its one `trace`, or each queued job's.
pub(crate) fn traces(case_file: &Path, workload: &Value) -> Result<Vec<String>> {
    let missing = |what: &str| anyhow!("{}: {what} missing", case_file.display());
    if let Some(jobs) = workload["queue"]["jobs"].as_array() {
        return jobs
            .iter()
            .enumerate()
            .map(|(j, job)| {
                job["trace"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| missing(&format!("workload.queue.jobs[{j}].trace")))
            })
            .collect();
    }
    Ok(vec![workload["trace"].as_str().ok_or_else(|| missing("workload.trace"))?.to_string()])
}

/// The folder a case's paths are relative to: the one holding its `cases` folder.
pub(crate) fn case_dir_root(case_file: &Path) -> PathBuf {
    case_file.parent().and_then(Path::parent).unwrap_or(Path::new(".")).to_path_buf()
}

/// The machine as a case describes it (`setup.machine`): CPUs, the kernel's command line
/// and build options that matter to swap, and the swap disk's model, rotational flag and
/// I/O scheduler. What cannot be read is left out.
fn machine(host: &Host, block_device: Option<&str>) -> Value {
    let mut m = serde_json::Map::new();
    if let Ok(text) = host.read("/proc/cpuinfo") {
        let cpus = text.lines().filter(|l| l.starts_with("processor")).count();
        m.insert("cpus_online".into(), Value::from(cpus));
        if let Some(model) = text.lines().find_map(|l| l.strip_prefix("model name")) {
            m.insert("cpu_model".into(), Value::from(model.trim_start_matches([' ', '\t', ':']).trim()));
        }
    }
    if let Ok(cmdline) = host.read("/proc/cmdline") {
        m.insert("cmdline".into(), Value::from(cmdline.trim()));
    }
    if let Some(dev) = block_device {
        let mut disk = serde_json::Map::new();
        disk.insert("name".into(), Value::from(dev));
        for (key, file) in
            [("model", "device/model"), ("rotational", "queue/rotational"), ("scheduler", "queue/scheduler")]
        {
            // A partition's model and queue are its disk's.
            let own = format!("/sys/class/block/{dev}/{file}");
            let path = if host.exists(&own) { own } else { format!("/sys/class/block/{dev}/../{file}") };
            if let Ok(text) = host.read(&path) {
                let text = text.trim();
                let value = match key {
                    "rotational" => Value::from(text == "1"),
                    "scheduler" => Value::from(super::host::selected(text)),
                    _ => Value::from(text),
                };
                disk.insert(key.into(), value);
            }
        }
        m.insert("swap_disk".into(), Value::Object(disk));
    }
    Value::Object(m)
}

fn mem_total_bytes(host: &Host) -> Option<u64> {
    let text = host.read("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Today's date in UTC, `YYYY-MM-DD`.
fn today() -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86_400) as i64;
    // Days to a civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Writes what the probe wrote and how to score it.
pub(crate) fn report(out: &mut dyn Write, file: &Path, out_dir: &Path, runs: &[Run]) -> Result<()> {
    let killed = runs.iter().filter(|r| swapsim::probe::measure::oom_killed(&r.figures)).count();
    writeln!(out, "wrote {} ({} runs, {killed} OOM-killed)", file.display(), runs.len())?;
    writeln!(out, "score it with: swapsim validate {}", out_dir.display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{today, warm_page_cache};

    #[test]
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10, "{t}");
        assert!(t.starts_with("20"), "{t}");
        assert_eq!(&t[4..5], "-");
    }

    #[test]
    fn warming_reads_every_file_and_names_one_that_is_missing() {
        let dir = std::env::temp_dir().join(format!("swapsim-warm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let present = dir.join("a.trace");
        std::fs::write(&present, b"# pages=1\nR 0\n").unwrap();
        warm_page_cache(&[present.as_path()]).unwrap();
        let missing = dir.join("missing.trace");
        let err = warm_page_cache(&[present.as_path(), missing.as_path()]).unwrap_err();
        assert!(format!("{err:#}").contains("missing.trace"), "{err:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
