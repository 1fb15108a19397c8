//! libCacheSim's `txt` traces (format `libcachesim-txt`): one object id per line, read as
//! page accesses.
//!
//! libCacheSim's plain-text reader (`traceReader/generalReader/txt.c`) takes each line as
//! one request of the object it names and nothing else: no time, no size, no operation.
//! Each request here is a read of one page by task 0/0 with no time; the object becomes a
//! page by the [`ObjectMap`](crate::ObjectMap) in
//! [`OpenOptions::object_map`], as for oracleGeneral.
//!
//! Ids are numbers unless the trace parameters say `obj-id-is-num=false`:
//!
//! - A number is written as C's `strtoull(line, &end, 0)` reads one, which is how
//!   libCacheSim reads it: `0x` (or `0X`) and hex digits, a leading `0` and octal digits
//!   (`010` is 8), or decimal digits, up to 2^64 - 1. Blanks (spaces, tabs) around it are
//!   allowed. Anything else on the line (a sign, a second number, trailing text, a
//!   non-octal digit after a leading `0`) is an error naming the line and the column,
//!   where strtoull would stop silently; a line of blanks only is an error too.
//! - With `obj-id-is-num=false` the whole line, blanks included, is the id, as libCacheSim
//!   interns it; distinct lines are distinct objects (see [`crate::objects`] for how a
//!   string becomes a page).
//!
//! Empty lines are skipped, as libCacheSim skips them; there are no comments (a `#` line
//! is an id, or an error when ids are numbers). A line must be UTF-8 and at most 4096
//! bytes, as in every text format here; a trailing `\r` is dropped. In lenient mode a bad
//! line is skipped and counted by reason instead of being an error.
//!
//! Detection recognises this format when every line of the first 64 KiB is empty or one
//! decimal or `0x` hexadecimal number with nothing around it (see `detect`); a trace of
//! string ids must be named with `libcachesim-txt`.

use crate::error::FormatError;
use crate::format::Format;
use crate::lines::{BadLines, LineAccess, LineFormat, LineSource, Step};
use crate::objects::{parse_c_integer, ObjectPages, ID_EXPECTED};
use crate::options::OpenOptions;
use std::io::BufRead;

/// The skip reason of a line whose object would need a page beyond the dense mapping's
/// limit.
pub(crate) const TOO_MANY_OBJECTS: &str = "too many distinct objects";

/// A streaming reader of libCacheSim's `txt` traces.
pub struct CachesimTxtReader {
    source: LineSource<TxtLines>,
}

impl CachesimTxtReader {
    /// A reader of `reader` (already decompressed). Only the `obj-id-is-num` parameter of
    /// `options.params` applies; `detect` refuses the others before this is called.
    pub fn new(reader: Box<dyn BufRead + Send>, options: OpenOptions) -> CachesimTxtReader {
        let lines = TxtLines {
            obj_id_is_num: options.params.obj_id_is_num(),
            pages: ObjectPages::new(options.object_map),
        };
        CachesimTxtReader { source: LineSource::new(reader, lines, BadLines::of(&options)) }
    }
}

crate::lines::line_reader!(CachesimTxtReader, Format::LibCacheSimTxt);

/// The line syntax, and the pages of the objects seen.
pub(crate) struct TxtLines {
    obj_id_is_num: bool,
    pages: ObjectPages,
}

impl LineFormat for TxtLines {
    fn parse_line(&mut self, line: &[u8]) -> Step {
        if line.is_empty() {
            return Step::Blank;
        }
        let page = if self.obj_id_is_num {
            let id_text = crate::lines::trim_end(crate::lines::trim_start(line));
            let id_at = crate::lines::offset_in(line, id_text);
            if id_text.is_empty() {
                return Step::malformed_at(0, format!("expected {ID_EXPECTED}, found a line of blanks"));
            }
            let obj_id = match parse_c_integer(id_text, ID_EXPECTED) {
                Ok(obj_id) => obj_id,
                Err((at, message)) => return Step::malformed_at(id_at + at, message),
            };
            self.pages.page_of_id(obj_id)
        } else {
            self.pages.page_of_name(line)
        };
        match page {
            Ok(page) => Step::Access(read_of(page)),
            Err(message) => Step::Bad { reason: TOO_MANY_OBJECTS, at: None, message },
        }
    }

    /// A line of 1 to 19 decimal digits without a leading zero (or `0` alone), under the
    /// modulo mapping: what nearly every line of a numeric trace is.
    #[inline]
    fn plain_access(&self, line: &[u8]) -> Option<LineAccess> {
        if !self.obj_id_is_num || line.len() > 19 || (line.len() > 1 && line[0] == b'0') {
            return None;
        }
        let obj_id = crate::lines::parse_decimal(line)?;
        self.pages.modulo_page(obj_id).map(read_of)
    }
}

/// A read of `page` by task 0/0, untimed.
fn read_of(page: u64) -> LineAccess {
    LineAccess { pid: 0, tid: 0, time_ns: None, first_page: page, last_page: page, write: false }
}

/// Whether `line` is what detection accepts as a line of this format: empty, or one
/// decimal number or `0x` hexadecimal one and nothing else.
pub(crate) fn is_plain_id_line(line: &[u8]) -> bool {
    match line {
        [] => true,
        [b'0', b'x' | b'X', digits @ ..] => !digits.is_empty() && digits.iter().all(u8::is_ascii_hexdigit),
        digits => digits.iter().all(u8::is_ascii_digit),
    }
}

/// Guesses whether `prefix` starts a txt trace of numeric ids: every whole line in it
/// passes [`is_plain_id_line`], and at least one is not empty. The text after the last
/// newline counts as a line only when it ends the trace (`at_end` before `peek_bytes`);
/// otherwise it may be a line cut short. Undecided (`None`) until `at_end`, since a later
/// line may disqualify the trace.
pub(crate) fn guess(prefix: &[u8], at_end: bool, peek_bytes: usize) -> Option<bool> {
    let whole = at_end && prefix.len() < peek_bytes;
    let mut n_ids = 0;
    let mut lines = prefix.split(|&byte| byte == b'\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_none() && !whole {
            break;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !is_plain_id_line(line) {
            return Some(false);
        }
        n_ids += usize::from(!line.is_empty());
    }
    at_end.then_some(n_ids > 0)
}

/// Fails when the trace parameters hold anything but `obj-id-is-num`.
pub(crate) fn check_params(options: &OpenOptions) -> Result<(), FormatError> {
    let extra: Vec<&str> = options.params.given().into_iter().filter(|key| *key != "obj-id-is-num").collect();
    if let Some(key) = extra.first() {
        return Err(FormatError::Params(format!(
            "{key} only applies to libcachesim-csv; libcachesim-txt takes obj-id-is-num only"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
