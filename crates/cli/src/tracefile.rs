//! Trace files: opening them (plain or zstd-compressed text) and writing generated ones.
//!
//! The core reads the text access-trace format from any `BufRead` and does no file I/O;
//! this module supplies the reader. Compression is detected from the first bytes (the zstd
//! frame magic `28 B5 2F FD`), not from the file name, so a renamed file still opens. gzip
//! is not supported.

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use swapsim_core::TaskSpec;

use crate::scenario::{Prepared, Workload};

/// The first four bytes of every zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Compression level for traces written with a `.zst` name: slow to write, small to keep.
const ZSTD_LEVEL: i32 = 19;

/// Where a trace's bytes come from.
#[derive(Clone, Debug)]
pub(crate) enum TraceSource {
    /// A file on disk; relative paths are relative to the current directory.
    File(PathBuf),
    /// Bytes built into the binary (the demo), with the name they are reported under.
    Embedded { name: &'static str, bytes: &'static [u8] },
}

impl TraceSource {
    /// The name used in reports and error messages: the path, or the embedded name.
    pub(crate) fn name(&self) -> String {
        match self {
            TraceSource::File(path) => path.display().to_string(),
            TraceSource::Embedded { name, .. } => (*name).to_string(),
        }
    }

    /// Checks that the trace can be opened and that its header parses, without reading
    /// the accesses.
    pub(crate) fn check(&self) -> Result<()> {
        self.task().map(drop)
    }

    /// Opens the trace and wraps it as a task named after the trace. Accesses are read
    /// lazily while the simulation runs, so a malformed line is reported by the run.
    pub(crate) fn task(&self) -> Result<TaskSpec> {
        let name = self.name();
        let reader: Box<dyn BufRead + Send> = match self {
            TraceSource::File(path) => {
                let file = File::open(path).with_context(|| format!("cannot open trace {name}"))?;
                decompressing(BufReader::new(file)).with_context(|| format!("trace {name}"))?
            }
            TraceSource::Embedded { bytes, .. } => decompressing(BufReader::new(*bytes))?,
        };
        swapsim_core::trace::text_trace_task(name.clone(), reader).with_context(|| format!("trace {name}"))
    }
}

/// Returns a reader of the text, decompressing when the stream starts with the zstd magic.
fn decompressing<R: BufRead + Send + 'static>(mut reader: R) -> Result<Box<dyn BufRead + Send>> {
    let head = reader.fill_buf().context("read error")?;
    if head.starts_with(&ZSTD_MAGIC) {
        let decoder = zstd::stream::read::Decoder::with_buffer(reader).context("zstd stream")?;
        Ok(Box::new(BufReader::new(decoder)))
    } else {
        Ok(Box::new(reader))
    }
}

/// Writes the accesses of a scenario's generated single-task workload to `path` in the
/// text trace format, zstd-compressed when the name ends in `.zst`. Returns the number of
/// accesses written.
pub(crate) fn write_generated(prepared: &Prepared, path: &Path) -> Result<u64> {
    let Workload::Generator(generator) = &prepared.workload else {
        bail!("write-trace needs a scenario whose workload is a [workload.generator] section");
    };
    let mut tasks = generator.tasks(prepared.seed);
    if tasks.len() != 1 {
        bail!("workload.generator.tasks: write-trace writes one task, the scenario has {}", tasks.len());
    }
    let mut task = tasks.pop().expect("exactly one task");
    let pages: u64 = task.regions.iter().map(|r| r.start.0 + r.pages).max().unwrap_or(0);
    let header = format!(
        "# swapsim write-trace pages={pages} pattern={} passes={} fill={} write_fraction={} \
         zipf_exponent={} seed={} page_size=4096 format=\"<R|W> <page_index>\"",
        generator.pattern,
        generator.passes,
        generator.fill,
        generator.write_fraction,
        generator.zipf_exponent,
        prepared.seed
    );
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let write_err = || format!("cannot write {}", path.display());
    let compress = path.extension().is_some_and(|ext| ext == "zst");
    let n_accesses = if compress {
        let encoder = zstd::stream::write::Encoder::new(file, ZSTD_LEVEL).with_context(write_err)?;
        let (encoder, n_accesses) = write_lines(encoder, &header, &mut task).with_context(write_err)?;
        encoder.finish().with_context(write_err)?;
        n_accesses
    } else {
        write_lines(file, &header, &mut task).with_context(write_err)?.1
    };
    Ok(n_accesses)
}

/// Writes the header and one line per access; returns the flushed sink and the count.
fn write_lines<W: Write>(sink: W, header: &str, task: &mut TaskSpec) -> Result<(W, u64)> {
    let mut sink = BufWriter::new(sink);
    writeln!(sink, "{header}")?;
    let mut n_accesses = 0u64;
    while let Some(access) = task.accesses.next_access().context("generator")? {
        let op = if access.write { 'W' } else { 'R' };
        writeln!(sink, "{op} {}", access.vpage.0)?;
        n_accesses += 1;
    }
    let sink = sink.into_inner().map_err(|err| err.into_error())?;
    Ok((sink, n_accesses))
}

/// Reads a whole (possibly compressed) trace into text; used by tests.
#[cfg(test)]
pub(crate) fn read_text(source: &TraceSource) -> Result<String> {
    let reader: Box<dyn BufRead + Send> = match source {
        TraceSource::File(path) => decompressing(BufReader::new(File::open(path)?))?,
        TraceSource::Embedded { bytes, .. } => decompressing(BufReader::new(*bytes))?,
    };
    let mut text = String::new();
    std::io::Read::read_to_string(&mut BufReader::new(reader), &mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, LoadOptions, ScenarioSource};

    /// Replays `source` and renders its accesses (or the error) one per line.
    fn replay(source: &TraceSource) -> String {
        let mut task = match source.task() {
            Ok(task) => task,
            Err(err) => return format!("error: {err:#}"),
        };
        let mut lines = vec![format!("regions {:?}", task.regions)];
        loop {
            match task.accesses.next_access() {
                Ok(Some(a)) => lines.push(format!("{} {}", if a.write { 'W' } else { 'R' }, a.vpage.0)),
                Ok(None) => break,
                Err(err) => {
                    lines.push(format!("error: {err}"));
                    break;
                }
            }
        }
        lines.join("\n")
    }

    fn leak(bytes: Vec<u8>) -> &'static [u8] {
        Box::leak(bytes.into_boxed_slice())
    }

    #[test]
    fn plain_and_zstd_read_alike() {
        let text = "# pages=8\nW 0\nR 7\n";
        let plain = TraceSource::Embedded { name: "plain", bytes: leak(text.as_bytes().to_vec()) };
        let packed = zstd::encode_all(text.as_bytes(), 3).expect("compressing in memory");
        assert!(packed.starts_with(&ZSTD_MAGIC));
        let packed = TraceSource::Embedded { name: "packed", bytes: leak(packed) };
        let expected = "regions [RegionSpec { start: VirtPage(0), pages: 8 }]\nW 0\nR 7";
        assert_eq!(replay(&plain), expected);
        assert_eq!(replay(&packed), expected);
    }

    #[test]
    fn truncated_zstd_is_an_error_not_a_panic() {
        let text: String = (0..5000).map(|i| format!("R {i}\n")).collect();
        let mut packed = zstd::encode_all(text.as_bytes(), 3).expect("compressing in memory");
        packed.truncate(packed.len() / 2);
        let replayed = replay(&TraceSource::Embedded { name: "cut", bytes: leak(packed) });
        let last = replayed.lines().last().expect("at least one line");
        assert!(last.starts_with("error: ") && last.ends_with("incomplete frame"), "{last}");
    }

    #[test]
    fn missing_file_names_the_path() {
        let source = TraceSource::File(PathBuf::from("no/such/file.trace"));
        assert!(
            replay(&source).starts_with("error: cannot open trace no/such/file.trace: "),
            "{}",
            replay(&source)
        );
    }

    /// The bundled demo trace is exactly what `traces/README.md` says generates it.
    #[test]
    fn bundled_trace_matches_its_generator() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/demo-zipf.toml");
        let source = ScenarioSource::read(&path).expect("the generator scenario is in the repository");
        let prepared = load(&source, LoadOptions::default()).expect("the generator scenario is valid");
        let Workload::Generator(generator) = &prepared.workload else { panic!("a generator workload") };
        let mut task = generator.tasks(prepared.seed).pop().expect("one task");
        let (generated, _) = write_lines(Vec::new(), "", &mut task).expect("writing to memory");
        let generated = String::from_utf8(generated).expect("ASCII");
        let bundled = read_text(&TraceSource::Embedded { name: "demo", bytes: crate::demo::TRACE_BYTES })
            .expect("the bundled trace decompresses");
        let body = |text: &str| -> Vec<String> {
            text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).map(str::to_string).collect()
        };
        let (bundled, generated) = (body(&bundled), body(&generated));
        assert_eq!(bundled.len(), generated.len());
        assert!(
            bundled == generated,
            "traces/demo-zipf.trace.zst is stale; regenerate it as traces/README.md says"
        );
    }
}
