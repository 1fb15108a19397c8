//! Files being written: every file the command line writes (`trace convert` and
//! `trace generate` output, `mrc --plot`, the reports of `sweep --out` and
//! `experiment --out`, the state file of `probe`, and the kernel knobs `probe` sets) goes
//! through here.
//!
//! A file is written under a hidden temporary name in its target's directory,
//! `.NAME.tmp-PID`, and renamed over the target only once everything is written and
//! synced ([`AtomicFile::commit`]). So a command that fails, or is interrupted, leaves the
//! old file or none, never a cut or empty one that a later command would read as complete:
//! on an error the temporary file is removed; on Ctrl-C it may stay behind, under its
//! hidden name, which no command reads for the target. A target that exists and is not a
//! regular file (`/dev/null`, a FIFO) cannot be replaced by a rename, so it is written in
//! place. A target that is a symbolic link is resolved, so that the link keeps pointing at
//! the new file.
//!
//! Traces are compressed as their name says ([`Output`]). Reading traces is the library's
//! job (`swapsim::TraceSource`); writing them is only ever asked for on the command line,
//! so it lives here.

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// Compression level for traces written with a `.zst` name: slow to write, small to keep.
const ZSTD_LEVEL: i32 = 19;

/// A file being written under a temporary name, renamed over its target by
/// [`AtomicFile::commit`]. Dropped without a commit, it removes the temporary file and
/// leaves the target as it was.
pub(crate) struct AtomicFile {
    /// The file the caller named, for messages.
    target: PathBuf,
    /// Where the file is being written: `None` when the target is written in place.
    temp: Option<PathBuf>,
    /// The file the bytes go to; `None` once committed.
    file: Option<File>,
}

impl AtomicFile {
    /// Starts writing `target`. Nothing happens to `target` until [`AtomicFile::commit`].
    pub(crate) fn create(target: &Path) -> Result<AtomicFile> {
        let cannot_create = || format!("cannot create {}", target.display());
        if target.as_os_str().is_empty() || target.file_name().is_none() {
            bail!("cannot create {}: not a file name", target.display());
        }
        let real = resolve_link(target);
        if let Ok(meta) = std::fs::metadata(&real) {
            if meta.is_dir() {
                bail!("cannot create {}: it is a directory", target.display());
            }
            if !meta.is_file() {
                // A device or a FIFO: no rename can replace it, and none should.
                let file = std::fs::OpenOptions::new().write(true).open(&real).with_context(cannot_create)?;
                return Ok(AtomicFile { target: target.to_path_buf(), temp: None, file: Some(file) });
            }
        }
        let temp = temp_path(&real);
        let open = || std::fs::OpenOptions::new().write(true).create_new(true).open(&temp);
        let file = match open() {
            // Left behind by an interrupted process that had this process's id.
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                std::fs::remove_file(&temp).with_context(cannot_create)?;
                open()
            }
            res => res,
        }
        .with_context(cannot_create)?;
        Ok(AtomicFile { target: target.to_path_buf(), temp: Some(temp), file: Some(file) })
    }

    /// Syncs the written bytes and renames the temporary file over the target.
    pub(crate) fn commit(mut self) -> Result<()> {
        let cannot_write = || format!("cannot write {}", self.target.display());
        let file = self.file.take().expect("a file is committed once");
        if let Some(temp) = &self.temp {
            file.sync_all().with_context(cannot_write)?;
            drop(file);
            std::fs::rename(temp, resolve_link(&self.target)).with_context(cannot_write)?;
            self.temp = None;
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(temp) = &self.temp {
            self.file = None;
            // Best effort: the error that got us here is the one worth reporting.
            let _ = std::fs::remove_file(temp);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

/// Writes `bytes` to `path` atomically, as [`AtomicFile`] does.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
    file.commit()
}

/// Writes `text` into an existing kernel file (a sysfs, procfs or cgroupfs knob, a
/// cgroup's `cgroup.procs`) in place, as a shell's `>` does. Such a file is not replaced
/// but told a value: a rename cannot reach it, and it is never created here, so that a
/// misspelt knob is an error rather than a new file.
pub(crate) fn write_in_place(path: &Path, text: &str) -> Result<()> {
    let cannot_write = || format!("cannot write {}", path.display());
    let mut file =
        std::fs::OpenOptions::new().write(true).truncate(true).open(path).with_context(cannot_write)?;
    file.write_all(text.as_bytes()).with_context(cannot_write)
}

/// Opens `path` for direct I/O (`O_DIRECT`), read-write, to time a disk: the probe's
/// scratch file, made here and never an existing one (`create`), or a block device the
/// user gave up for swap, which exists. Not an output: the probe removes the scratch file.
pub(crate) fn open_direct(path: &Path, create: bool) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(create)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

/// Refuses to write `output` when it is the file `input` names (through another name, a
/// hard link or a symbolic link): the input must stay intact whatever happens.
pub(crate) fn refuse_same_file(input: &Path, output: &Path) -> Result<()> {
    if same_file(input, output) {
        bail!("{} is the input {}: write the output to another file", output.display(), input.display());
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `path`, or the file it links to when it is a symbolic link.
fn resolve_link(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The hidden temporary name of `target` in its own directory, so that the rename stays
/// within one file system: `dir/.NAME.tmp-PID`.
fn temp_path(target: &Path) -> PathBuf {
    let name = target.file_name().expect("checked by the caller").to_string_lossy();
    target.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// How a written trace is compressed, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Zstd,
    Gzip,
}

impl Compression {
    /// `.zst` gives zstd, `.gz` gzip, anything else none.
    pub(crate) fn of(path: &Path) -> Compression {
        match path.extension().and_then(|ext| ext.to_str()) {
            Some("zst") => Compression::Zstd,
            Some("gz") => Compression::Gzip,
            _ => Compression::None,
        }
    }
}

/// A trace being written, compressed as its name says, through an [`AtomicFile`]. Call
/// [`Output::finish`] at the end: dropping it leaves the target as it was.
pub(crate) struct Output {
    path: PathBuf,
    sink: OutputSink,
}

enum OutputSink {
    Plain(BufWriter<AtomicFile>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<AtomicFile>>),
    Gzip(flate2::write::GzEncoder<BufWriter<AtomicFile>>),
}

impl Output {
    /// Starts writing `path`, compressing by its extension.
    pub(crate) fn create(path: &Path) -> Result<Output> {
        let file = BufWriter::new(AtomicFile::create(path)?);
        let sink = match Compression::of(path) {
            Compression::None => OutputSink::Plain(file),
            Compression::Zstd => OutputSink::Zstd(
                zstd::stream::write::Encoder::new(file, ZSTD_LEVEL)
                    .with_context(|| format!("cannot write {}", path.display()))?,
            ),
            Compression::Gzip => {
                OutputSink::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::best()))
            }
        };
        Ok(Output { path: path.to_path_buf(), sink })
    }

    /// Flushes everything and renames the file over its target.
    pub(crate) fn finish(self) -> Result<()> {
        let context = || format!("cannot write {}", self.path.display());
        let file = match self.sink {
            OutputSink::Plain(file) => file,
            OutputSink::Zstd(encoder) => encoder.finish().with_context(context)?,
            OutputSink::Gzip(encoder) => encoder.finish().with_context(context)?,
        };
        file.into_inner().map_err(|err| err.into_error()).with_context(context)?.commit()
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sink {
            OutputSink::Plain(w) => w.write(buf),
            OutputSink::Zstd(w) => w.write(buf),
            OutputSink::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            OutputSink::Plain(w) => w.flush(),
            OutputSink::Zstd(w) => w.flush(),
            OutputSink::Gzip(w) => w.flush(),
        }
    }
}
