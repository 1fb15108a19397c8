//! Compression and format detection, and the entry point that opens a trace.
//!
//! [`open`] peeks at the first bytes: gzip (`1f 8b`) and zstd (`28 b5 2f fd`) streams are
//! decompressed on the fly, then the format is recognised from the decompressed start:
//! the native magic `SWAPSIMT`, the lcs magic, an ftrace `# tracer:` header, or else the
//! first line that is neither blank nor a `#` comment, matched against each text format's
//! own line parser (for the `R|W` format, its shape: `R` or `W` and one more field, so that
//! a bad page number gets that reader's precise error). libCacheSim's formats without magic
//! come last, when no other format matches: its `txt` format (`libcachesim-txt`) when every
//! line of the peeked bytes is empty or one decimal or `0x` hexadecimal number and nothing
//! else, at least one of them a number (see [`crate::cachesim_txt`]); then oracleGeneral,
//! when every 24-byte record in the peeked bytes is plausible (see [`crate::oracle`]) and,
//! when the whole trace fits in the peek, its length is a multiple of 24. libCacheSim's
//! `csv` format is never detected: it must be named, with its trace parameters.
//! Parameters given for a format that does not take them are an error here, once the format
//! is known.
//! Detection looks at most [`PEEK_BYTES`] bytes ahead, and the peeked bytes are replayed to
//! the reader, so nothing is read twice from the caller's stream.
//!
//! What this module does not do: open files (the caller hands it a `Read`), or guess a
//! format from a file name.

use crate::cachesim_csv::CachesimCsvReader;
use crate::cachesim_txt::CachesimTxtReader;
use crate::error::FormatError;
use crate::ftrace::FtraceReader;
use crate::lackey::{LackeyLines, LackeyReader};
use crate::lines::{quote, LineFormat, Step};
use crate::oracle::{guess_oracle_general, Guess, OracleReader};
use crate::perf::PerfScriptReader;
use crate::record::RecordSource;
use crate::text::TextReader;
use std::io::{BufReader, Cursor, ErrorKind, Read};

// Re-exported so that the paths `detect::Format` and `detect::OpenOptions` keep working.
pub use crate::format::Format;
pub use crate::options::OpenOptions;

/// How far detection looks ahead, in decompressed bytes: room for perf's `--header` block.
pub const PEEK_BYTES: usize = 64 * 1024;

/// The magic bytes that start a native trace.
const NATIVE_MAGIC: &[u8] = crate::native::MAGIC;
const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
/// The magic bytes that start an lcs trace.
const LCS_MAGIC: [u8; 8] = crate::oracle::LCS_MAGIC.to_le_bytes();

/// Size of the read buffer of text readers.
const BUFFER_BYTES: usize = 64 * 1024;

/// Opens a trace: undoes gzip or zstd compression (detected by magic bytes), detects the
/// format from the first bytes unless `options.format` names it, and returns a streaming
/// reader.
pub fn open(
    reader: Box<dyn Read + Send>,
    options: OpenOptions,
) -> Result<Box<dyn RecordSource>, FormatError> {
    let (prefix, rest) = peek(reader, |prefix| prefix.len() >= ZSTD_MAGIC.len());
    let raw = replay(prefix.clone(), rest);
    let stream: Box<dyn Read + Send> = if prefix.starts_with(GZIP_MAGIC) {
        Box::new(Decompressed { inner: flate2::read::MultiGzDecoder::new(raw), what: "gzip" })
    } else if prefix.starts_with(ZSTD_MAGIC) {
        let decoder = zstd::stream::read::Decoder::new(raw)?;
        Box::new(Decompressed { inner: decoder, what: "zstd" })
    } else {
        raw
    };
    let (format, stream) = match options.format {
        Some(format) => (format, stream),
        None => {
            let (prefix, rest) = peek(stream, |prefix| !matches!(detect(prefix, false), Detected::Undecided));
            let format = match detect(&prefix, true) {
                Detected::Format(format) => format,
                // Detection failed because reading did: report the read error itself, at
                // the first decompressed byte that could not be read.
                _ if rest.is_err() => {
                    let err = rest.err().expect("checked");
                    return Err(FormatError::Offset {
                        offset: prefix.len() as u64,
                        message: format!("read error: {err}"),
                    });
                }
                Detected::Unknown(message) => return Err(FormatError::Unknown(message)),
                Detected::Undecided => unreachable!("detection decides at the end of its input"),
            };
            (format, replay(prefix, rest))
        }
    };
    check_params(format, &options)?;
    match format {
        Format::Native => return open_native(stream),
        Format::OracleGeneral => return Ok(Box::new(OracleReader::oracle_general(stream, options))),
        Format::Lcs => return Ok(Box::new(OracleReader::lcs(stream, options)?)),
        _ => {}
    }
    let buffered = Box::new(BufReader::with_capacity(BUFFER_BYTES, stream));
    Ok(match format {
        Format::PerfScript => Box::new(PerfScriptReader::new(buffered, options)),
        Format::Ftrace => Box::new(FtraceReader::new(buffered, options)),
        Format::Lackey => Box::new(LackeyReader::new(buffered, options)),
        Format::Text => Box::new(TextReader::new(buffered, options)?),
        Format::LibCacheSimTxt => Box::new(CachesimTxtReader::new(buffered, options)),
        Format::LibCacheSimCsv => Box::new(CachesimCsvReader::new(buffered, options)?),
        Format::Native | Format::OracleGeneral | Format::Lcs => unreachable!("opened above"),
    })
}

/// Trace parameters are for libCacheSim's txt and csv formats only, and txt takes just
/// `obj-id-is-num`: anything else is refused by name rather than ignored.
fn check_params(format: Format, options: &OpenOptions) -> Result<(), FormatError> {
    match format {
        Format::LibCacheSimCsv => Ok(()),
        Format::LibCacheSimTxt => crate::cachesim_txt::check_params(options),
        _ if options.params.is_empty() => Ok(()),
        other => Err(FormatError::Params(format!(
            "{} given, but {} traces take none (only libcachesim-txt and libcachesim-csv do)",
            options.params.given().join(", "),
            other.name()
        ))),
    }
}

/// A native trace, read by [`crate::native::NativeReader`].
fn open_native(reader: Box<dyn Read + Send>) -> Result<Box<dyn RecordSource>, FormatError> {
    Ok(Box::new(crate::native::NativeReader::new(reader)?))
}

/// Reads from `reader` until `enough` holds, the input ends or [`PEEK_BYTES`] are read.
/// Returns the bytes read and the rest of the stream, or the read error that cut peeking
/// short (the bytes before it are still returned).
fn peek(
    mut reader: Box<dyn Read + Send>,
    enough: impl Fn(&[u8]) -> bool,
) -> (Vec<u8>, Result<Box<dyn Read + Send>, std::io::Error>) {
    let mut prefix = Vec::new();
    let mut chunk = vec![0; 8 * 1024];
    while prefix.len() < PEEK_BYTES && !enough(&prefix) {
        let want = chunk.len().min(PEEK_BYTES - prefix.len());
        match reader.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => prefix.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => return (prefix, Err(err)),
        }
    }
    (prefix, Ok(reader))
}

/// A stream that yields `prefix` and then the rest (or the error that interrupted
/// peeking, so that the reader reports it where it happened).
fn replay(prefix: Vec<u8>, rest: Result<Box<dyn Read + Send>, std::io::Error>) -> Box<dyn Read + Send> {
    match rest {
        Ok(rest) => Box::new(Cursor::new(prefix).chain(rest)),
        Err(err) => {
            Box::new(Cursor::new(prefix).chain(Failing { kind: err.kind(), message: err.to_string() }))
        }
    }
}

/// A reader that only fails.
struct Failing {
    kind: ErrorKind,
    message: String,
}

impl Read for Failing {
    fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(self.kind, self.message.clone()))
    }
}

/// A decoder whose errors say which compression failed and how.
struct Decompressed<R> {
    inner: R,
    what: &'static str,
}

impl<R: Read> Read for Decompressed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|err| match err.kind() {
            ErrorKind::Interrupted => err,
            ErrorKind::UnexpectedEof => {
                std::io::Error::new(ErrorKind::UnexpectedEof, format!("{} stream is truncated", self.what))
            }
            kind => std::io::Error::new(kind, format!("{} stream is corrupt: {err}", self.what)),
        })
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Detected {
    Format(Format),
    Unknown(String),
    /// More bytes are needed.
    Undecided,
}

/// Recognises the format from the start of the decompressed stream; `at_end` says that no
/// more bytes will come (the input ended, or the peek limit was reached).
fn detect(prefix: &[u8], at_end: bool) -> Detected {
    for (magic, format) in [(NATIVE_MAGIC, Format::Native), (&LCS_MAGIC[..], Format::Lcs)] {
        if prefix.starts_with(magic) {
            return Detected::Format(format);
        }
    }
    if !at_end && (NATIVE_MAGIC.starts_with(prefix) || LCS_MAGIC.starts_with(prefix)) {
        return Detected::Undecided;
    }
    match detect_lines(prefix, at_end) {
        // Lines of bare numbers match no other text format; they cannot be plausible
        // oracleGeneral records either, whose sizes and next accesses hold bytes that are
        // not digits or newlines.
        Detected::Unknown(message) => match crate::cachesim_txt::guess(prefix, at_end, PEEK_BYTES) {
            Some(true) => Detected::Format(Format::LibCacheSimTxt),
            None => Detected::Undecided,
            Some(false) => match guess_oracle_general(prefix, at_end, PEEK_BYTES) {
                Guess::Yes => Detected::Format(Format::OracleGeneral),
                Guess::NeedMore => Detected::Undecided,
                // Text has no NUL byte: say why a binary trace is not oracleGeneral instead.
                Guess::No(reason) if prefix.len() >= crate::oracle::RECORD_BYTES && prefix.contains(&0) => {
                    Detected::Unknown(format!("binary data that is not libCacheSim oracleGeneral: {reason}"))
                }
                Guess::No(_) => Detected::Unknown(message),
            },
        },
        detected => detected,
    }
}

/// Recognises a text format from its first data line.
fn detect_lines(prefix: &[u8], at_end: bool) -> Detected {
    let mut rest = prefix;
    let mut n_lines = 0;
    loop {
        let (line, complete) = match memchr::memchr(b'\n', rest) {
            Some(end) => (&rest[..end], true),
            None if at_end && !rest.is_empty() => (rest, true),
            None => (rest, false),
        };
        if !complete {
            if !at_end {
                return Detected::Undecided;
            }
            return Detected::Unknown(if n_lines == 0 {
                "the trace is empty".to_string()
            } else if prefix.len() >= PEEK_BYTES {
                format!("no data line in the first {PEEK_BYTES} bytes")
            } else {
                format!("the trace holds only {n_lines} blank or comment lines")
            });
        }
        rest = rest.get(line.len() + 1..).unwrap_or_default();
        n_lines += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(format) = line_format(line) {
            return Detected::Format(format);
        }
        // A text trace without records, as swapsim writes it: header lines, then the end
        // marker as the last line.
        if at_end && rest.is_empty() && crate::text::is_end_marker(line) {
            return Detected::Format(Format::Text);
        }
        let trimmed = crate::lines::trim_start(line);
        if trimmed.is_empty() || trimmed[0] == b'#' {
            continue;
        }
        return Detected::Unknown(format!(
            "first data line {} is not perf script, ftrace, lackey or R|W text",
            quote(&line[..line.len().min(200)])
        ));
    }
}

/// The format one line belongs to, if it is a data line of one (or an ftrace header).
fn line_format(line: &[u8]) -> Option<Format> {
    if line.starts_with(b"# tracer:") {
        return Some(Format::Ftrace);
    }
    if is_valgrind_banner(line) {
        return Some(Format::Lackey);
    }
    if matches!(
        LackeyLines { instructions: true }.parse_line(line),
        Step::Access(_) | Step::Bad { reason: crate::lines::OUT_OF_RANGE, .. }
    ) {
        return Some(Format::Lackey);
    }
    if crate::text::is_access_shaped(line) {
        return Some(Format::Text);
    }
    if crate::perf::parse_head(line).is_some() {
        return Some(Format::PerfScript);
    }
    if crate::ftrace::parse_head(line).is_some() {
        return Some(Format::Ftrace);
    }
    None
}

/// `==<pid>==`, the prefix of valgrind's messages.
fn is_valgrind_banner(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"==") else {
        return false;
    };
    let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
    digits > 0 && rest[digits..].starts_with(b"==")
}

#[cfg(test)]
mod tests;
