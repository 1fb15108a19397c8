//! The bounded line reader the text formats share: lines of at most [`LINE_BYTES_MAX`]
//! bytes, borrowed from the reader's buffer when they do not straddle two fills of it,
//! numbered from 1.
//!
//! What it does not do: decode lines (they are bytes here) or know any format.

use super::LINE_BYTES_MAX;
use std::io::{BufRead, ErrorKind};

/// Why a line could not be read.
#[derive(Debug)]
pub(crate) enum LineError {
    Io(std::io::Error),
    TooLong,
}

/// Reads lines of at most [`LINE_BYTES_MAX`] bytes.
pub(crate) struct LineReader {
    reader: Box<dyn BufRead + Send>,
    /// A line that straddles fills of the reader's buffer, gathered here.
    partial: Vec<u8>,
    /// Number of the last line read, 0 before the first.
    line: u64,
    /// The last line was too long: its rest is still to be skipped.
    discarding: bool,
}

impl LineReader {
    /// A reader whose next line is line 1.
    pub(crate) fn new(reader: Box<dyn BufRead + Send>) -> LineReader {
        LineReader { reader, partial: Vec::new(), line: 0, discarding: false }
    }

    /// The number of the last line read.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next line and hands its bytes, without the terminator and a trailing
    /// `\r`, to `parse`. `Ok(None)` at the end of the input. A line longer than the limit is
    /// an error as soon as the limit is passed; its rest is skipped, without buffering, on
    /// the next call.
    #[inline]
    pub(crate) fn next_line<T>(&mut self, parse: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, LineError> {
        if self.discarding {
            self.discard_rest_of_line()?;
        }
        self.partial.clear();
        loop {
            let available = fill(&mut self.reader)?;
            if available.is_empty() {
                if self.partial.is_empty() {
                    return Ok(None);
                }
                // A last line without a terminator.
                self.line += 1;
                return Ok(Some(parse(strip_cr(&self.partial))));
            }
            let newline = memchr::memchr(b'\n', available);
            let taken = newline.unwrap_or(available.len());
            if self.partial.len() + taken > LINE_BYTES_MAX {
                self.line += 1;
                self.discarding = true;
                return Err(LineError::TooLong);
            }
            match newline {
                Some(end) if self.partial.is_empty() => {
                    // The common case: the whole line sits in the reader's buffer.
                    self.line += 1;
                    let res = parse(strip_cr(&available[..end]));
                    self.reader.consume(end + 1);
                    return Ok(Some(res));
                }
                Some(end) => {
                    self.partial.extend_from_slice(&available[..end]);
                    self.reader.consume(end + 1);
                    self.line += 1;
                    return Ok(Some(parse(strip_cr(&self.partial))));
                }
                None => {
                    self.partial.extend_from_slice(available);
                    self.reader.consume(taken);
                }
            }
        }
    }

    /// Whether the next line starts with `byte`, looked at without consuming anything;
    /// `false` at the end of the input. The `R|W` text format tells its header lines apart
    /// this way.
    pub(crate) fn next_line_starts_with(&mut self, byte: u8) -> Result<bool, LineError> {
        if self.discarding {
            self.discard_rest_of_line()?;
        }
        Ok(fill(&mut self.reader)?.first() == Some(&byte))
    }

    /// The bytes in the reader's buffer, filled first if it is empty; for a caller that
    /// reads whole lines in place ([`LineReader::consume_lines`]). Only between lines: not
    /// while the rest of a too-long line is to be skipped ([`LineReader::is_discarding`]).
    #[inline]
    pub(super) fn buffer(&mut self) -> std::io::Result<&[u8]> {
        debug_assert!(!self.discarding, "between lines");
        self.reader.fill_buf()
    }

    /// Consumes the first `n_bytes` of [`LineReader::buffer`], which hold `n_lines` whole
    /// lines, terminators included.
    #[inline]
    pub(super) fn consume_lines(&mut self, n_bytes: usize, n_lines: u64) {
        self.reader.consume(n_bytes);
        self.line += n_lines;
    }

    /// Whether the rest of a too-long line is still to be skipped.
    #[inline]
    pub(super) fn is_discarding(&self) -> bool {
        self.discarding
    }

    /// Counts the line that a read error kept from being read, so that the error names it,
    /// and returns its number.
    pub(super) fn count_unread_line(&mut self) -> u64 {
        self.line += 1;
        self.line
    }

    /// Consumes input up to and including the next newline.
    fn discard_rest_of_line(&mut self) -> Result<(), LineError> {
        loop {
            let available = fill(&mut self.reader)?;
            if available.is_empty() {
                self.discarding = false;
                return Ok(());
            }
            match memchr::memchr(b'\n', available) {
                Some(end) => {
                    self.reader.consume(end + 1);
                    self.discarding = false;
                    return Ok(());
                }
                None => {
                    let n = available.len();
                    self.reader.consume(n);
                }
            }
        }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `reader`'s buffer, filled if it is empty, retrying a read the OS interrupted.
#[inline]
fn fill<R: BufRead>(reader: &mut R) -> Result<&[u8], LineError> {
    loop {
        match reader.fill_buf() {
            // The borrow checker cannot see that the retry ends the first borrow: read
            // the buffer again once it is known to be filled.
            Ok(_) => return reader.fill_buf().map_err(LineError::Io),
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => return Err(LineError::Io(err)),
        }
    }
}
