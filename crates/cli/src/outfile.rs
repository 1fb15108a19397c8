//! Trace files being written: `trace convert` and `trace generate` output, compressed
//! as the file's name says.
//!
//! Reading traces is the library's job (`swapsim::TraceSource`); writing them is only
//! ever asked for on the command line, so it lives here.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Compression level for traces written with a `.zst` name: slow to write, small to keep.
const ZSTD_LEVEL: i32 = 19;

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

/// A file being written, compressed as its name says. Call [`Output::finish`] at the end:
/// dropping it may lose the compressor's last block.
pub(crate) struct Output {
    path: PathBuf,
    sink: OutputSink,
}

enum OutputSink {
    Plain(BufWriter<File>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
}

impl Output {
    /// Creates `path`, compressing by its extension.
    pub(crate) fn create(path: &Path) -> Result<Output> {
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let file = BufWriter::new(file);
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

    /// Flushes everything and closes the file.
    pub(crate) fn finish(self) -> Result<()> {
        let context = || format!("cannot write {}", self.path.display());
        let file = match self.sink {
            OutputSink::Plain(file) => file,
            OutputSink::Zstd(encoder) => encoder.finish().with_context(context)?,
            OutputSink::Gzip(encoder) => encoder.finish().with_context(context)?,
        };
        file.into_inner().map_err(|err| err.into_error()).with_context(context)?.sync_all().ok();
        Ok(())
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
