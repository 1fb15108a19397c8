//! libCacheSim's `csv` traces (format `libcachesim-csv`): delimited lines whose columns the
//! trace parameters name, read as page accesses.
//!
//! libCacheSim's csv reader (`traceReader/generalReader/csv.c`, over its copy of libcsv)
//! reads the columns its `--trace-type-params` name ([`crate::TraceParams`]): the object id
//! (`obj-id-col`, required), the time (`time-col`) and the object size (`obj-size-col`).
//! Each data line here is a read of one page by task 0/0; the object becomes a page by the
//! [`ObjectMap`](crate::ObjectMap) in [`OpenOptions::object_map`], as for oracleGeneral.
//! There is no operation column (libCacheSim's csv reader has none either): every request
//! is a read.
//!
//! - **Fields.** A line splits at the delimiter. Blanks (spaces, tabs) around a field are
//!   dropped, unless the blank is the delimiter. A field may be double-quoted (`"a,b"`),
//!   with `""` for a quote inside, as libcsv allows; a quoted field ends on its line
//!   (libCacheSim reads one line at a time too), and only blanks may follow its closing
//!   quote. A quote inside an unquoted field is an ordinary character. Columns count from
//!   1; fields after the last column asked for are not looked at. A line with fewer fields
//!   than a column asked for is an error naming the line and the column key.
//! - **Delimiter.** `delimiter=` names it. Otherwise it is detected as libCacheSim does:
//!   in the first non-empty line, tabs, commas, `|` and `:` are counted and weighted 4, 3,
//!   2 and 1, and the largest weighted count wins (a tie goes to the earlier of that
//!   list). When the line holds none of them, every line is one field.
//! - **Header.** `has-header=` says whether the first non-empty line is a header.
//!   Otherwise it is detected as libCacheSim does: a line with more digits than letters is
//!   data, any other is a header. A header line is skipped.
//! - **Object id.** With `obj-id-is-num` (the default) a number as C's `strtoull(s, &end,
//!   0)` reads it, whole (see [`crate::cachesim_txt`] for the syntax); with
//!   `obj-id-is-num=false` the field's text (unquoted) is the id, one object per distinct
//!   string.
//! - **Time.** Seconds as libCacheSim reads them (`atof`, then truncated to a whole
//!   number): decimal digits with an optional fraction and exponent (`12`, `12.75`,
//!   `1.2e3`), no sign; the record's time is the whole seconds, in nanoseconds, below
//!   2^32 s (libCacheSim keeps 32-bit seconds), as oracleGeneral's `clock_time`. Times are
//!   taken as they come: one earlier than the line before it is not an error (timestamp
//!   pacing then gives no think time before it). Without `time-col` records have no time.
//! - **Size.** Checked to be an unsigned number in the same syntax as ids, then unused,
//!   like oracleGeneral's size.
//!
//! Empty lines are skipped. A line must be UTF-8 and at most 4096 bytes. In lenient mode
//! a bad line is skipped and counted by reason instead of being an error.
//!
//! This format is never detected (libCacheSim too needs it named): it is read only as
//! `libcachesim-csv`, and opening it without `obj-id-col` is an error.

use crate::cachesim_txt::TOO_MANY_OBJECTS;
use crate::error::FormatError;
use crate::format::Format;
use crate::lines::{is_blank, quote, BadLines, LineAccess, LineFormat, LineSource, Step};
use crate::objects::{parse_c_integer, ObjectPages, ID_EXPECTED};
use crate::options::OpenOptions;
use std::io::BufRead;

/// Delimiters detection considers, with their weights, in the order that wins ties.
const DELIMITER_WEIGHTS: [(u8, usize); 4] = [(b'\t', 4), (b',', 3), (b'|', 2), (b':', 1)];

/// Seconds must be below this: libCacheSim keeps times as 32-bit seconds.
const SECONDS_LIMIT: f64 = 4_294_967_296.0;

/// A streaming reader of libCacheSim's `csv` traces.
pub struct CachesimCsvReader {
    source: LineSource<CsvLines>,
}

impl CachesimCsvReader {
    /// A reader of `reader` (already decompressed) with the columns of `options.params`;
    /// fails when `obj-id-col` is missing.
    pub fn new(
        reader: Box<dyn BufRead + Send>,
        options: OpenOptions,
    ) -> Result<CachesimCsvReader, FormatError> {
        let params = options.params;
        let Some(obj_id_col) = params.obj_id_col else {
            return Err(FormatError::Params(
                "libcachesim-csv needs obj-id-col, the 1-based column of object ids (e.g. obj-id-col=2)"
                    .into(),
            ));
        };
        let columns: Vec<(&'static str, u32)> = [
            ("obj-id-col", Some(obj_id_col)),
            ("time-col", params.time_col),
            ("obj-size-col", params.size_col),
        ]
        .into_iter()
        .filter_map(|(key, col)| col.map(|col| (key, col.get())))
        .collect();
        let n_columns = columns.iter().map(|&(_, col)| col).max().unwrap_or(1);
        let lines = CsvLines {
            obj_id_col: obj_id_col.get(),
            time_col: params.time_col.map(|col| col.get()),
            size_col: params.size_col.map(|col| col.get()),
            columns,
            n_columns,
            delimiter: params.delimiter,
            delimiter_given: params.delimiter.is_some(),
            has_header: params.has_header,
            first_line_seen: false,
            obj_id_is_num: params.obj_id_is_num(),
            pages: ObjectPages::new(options.object_map),
            unquoted: Vec::new(),
        };
        Ok(CachesimCsvReader { source: LineSource::new(reader, lines, BadLines::of(&options)) })
    }
}

crate::lines::line_reader!(CachesimCsvReader, Format::LibCacheSimCsv);

/// The columns asked for, what the first line decided, and the pages of the objects seen.
pub(crate) struct CsvLines {
    obj_id_col: u32,
    time_col: Option<u32>,
    size_col: Option<u32>,
    /// The columns asked for, by key, for messages.
    columns: Vec<(&'static str, u32)>,
    /// The largest column asked for: fields after it are not looked at.
    n_columns: u32,
    /// The field separator; `None` when detection found none (each line is one field).
    delimiter: Option<u8>,
    delimiter_given: bool,
    has_header: Option<bool>,
    /// The first non-empty line has been seen (and the delimiter and header decided).
    first_line_seen: bool,
    obj_id_is_num: bool,
    pages: ObjectPages,
    /// A quoted string id with `""` in it, unescaped; reused from line to line.
    unquoted: Vec<u8>,
}

/// One field of a line: its text is `line[start..end]`, without blanks around it or the
/// quotes around a quoted field.
#[derive(Clone, Copy, Debug)]
struct Field {
    start: usize,
    end: usize,
    /// A quoted field whose text holds `""` for each quote.
    escaped: bool,
    /// Where the next field starts, or `None` when this one ends the line.
    next: Option<usize>,
}

impl LineFormat for CsvLines {
    fn parse_line(&mut self, line: &[u8]) -> Step {
        if line.is_empty() {
            return Step::Blank;
        }
        if !self.first_line_seen {
            self.first_line_seen = true;
            if !self.delimiter_given {
                self.delimiter = detect_delimiter(line);
            }
            if self.has_header.unwrap_or_else(|| looks_like_header(line)) {
                return Step::Blank;
            }
        }
        self.data_line(line)
    }

    fn checks_time_order(&self) -> bool {
        false
    }
}

impl CsvLines {
    /// A data line: the fields asked for, checked and turned into an access.
    fn data_line(&mut self, line: &[u8]) -> Step {
        let mut id_field = None;
        let mut time_field = None;
        let mut size_field = None;
        let mut at = 0;
        let mut col = 1;
        loop {
            let field = match next_field(line, at, self.delimiter) {
                Ok(field) => field,
                Err(step) => return step,
            };
            if col == self.obj_id_col {
                id_field = Some(field);
            }
            if Some(col) == self.time_col {
                time_field = Some(field);
            }
            if Some(col) == self.size_col {
                size_field = Some(field);
            }
            if col == self.n_columns {
                break;
            }
            match field.next {
                Some(next_at) => at = next_at,
                None => return self.missing_column(line, col),
            }
            col += 1;
        }
        let id_field = id_field.expect("the loop reads up to the largest column, the id's included");
        let time_ns = match time_field {
            Some(field) => match parse_seconds(&line[field.start..field.end]) {
                Ok(seconds) => Some(seconds * 1_000_000_000),
                Err(message) => return self.bad_field("time-col", field, message),
            },
            None => None,
        };
        if let Some(field) = size_field {
            let size = &line[field.start..field.end];
            if let Err((at, message)) = parse_c_integer(size, "an object size (a whole number of bytes)") {
                let key = "obj-size-col";
                return Step::malformed_at(
                    field.start + at,
                    format!("{key}={}: {message}", self.col_of(key)),
                );
            }
        }
        let id = &line[id_field.start..id_field.end];
        let page = if self.obj_id_is_num {
            match parse_c_integer(id, ID_EXPECTED) {
                Ok(obj_id) => self.pages.page_of_id(obj_id),
                Err((at, message)) => {
                    return Step::malformed_at(
                        id_field.start + at,
                        format!("obj-id-col={}: {message}", self.obj_id_col),
                    )
                }
            }
        } else if id_field.escaped {
            unescape_quotes(id, &mut self.unquoted);
            self.pages.page_of_name(&self.unquoted)
        } else {
            self.pages.page_of_name(id)
        };
        match page {
            Ok(page) => Step::Access(LineAccess {
                pid: 0,
                tid: 0,
                time_ns,
                first_page: page,
                last_page: page,
                write: false,
            }),
            Err(message) => Step::Bad { reason: TOO_MANY_OBJECTS, at: None, message },
        }
    }

    /// The column asked for under `key`.
    fn col_of(&self, key: &str) -> u32 {
        self.columns.iter().find(|(name, _)| *name == key).map_or(0, |&(_, col)| col)
    }

    fn bad_field(&self, key: &str, field: Field, message: String) -> Step {
        Step::malformed_at(field.start, format!("{key}={}: {message}", self.col_of(key)))
    }

    /// The error of a line that ends after `n_fields` fields, before a column asked for.
    fn missing_column(&self, line: &[u8], n_fields: u32) -> Step {
        let (key, col) = self
            .columns
            .iter()
            .filter(|&&(_, col)| col > n_fields)
            .min_by_key(|&&(_, col)| col)
            .copied()
            .unwrap_or(("obj-id-col", self.obj_id_col));
        let fields = if n_fields == 1 { "field" } else { "fields" };
        let separated = match self.delimiter {
            Some(delimiter) => format!("separated by {}", shown_delimiter(delimiter)),
            None => {
                "(the first line holds no tab, comma, | or :, so no delimiter was detected; give delimiter=)"
                    .to_string()
            }
        };
        Step::malformed_at(
            line.len(),
            format!("{key}={col}: the line has {n_fields} {fields} {separated}, expected at least {col}"),
        )
    }
}

/// How a delimiter is named in messages.
fn shown_delimiter(delimiter: u8) -> String {
    match delimiter {
        b'\t' => "tabs".to_string(),
        b' ' => "spaces".to_string(),
        other => format!("{:?}", char::from(other)),
    }
}

/// Reads the field that starts at byte `at` (just after a delimiter, or 0).
fn next_field(line: &[u8], at: usize, delimiter: Option<u8>) -> Result<Field, Step> {
    let is_space = |byte: u8| is_blank(byte) && Some(byte) != delimiter;
    let mut pos = at;
    while pos < line.len() && is_space(line[pos]) {
        pos += 1;
    }
    if line.get(pos) != Some(&b'"') {
        let end_raw = match delimiter {
            Some(delimiter) => memchr::memchr(delimiter, &line[pos..]).map_or(line.len(), |idx| pos + idx),
            None => line.len(),
        };
        let mut end = end_raw;
        while end > pos && is_space(line[end - 1]) {
            end -= 1;
        }
        let next = (end_raw < line.len()).then_some(end_raw + 1);
        return Ok(Field { start: pos, end, escaped: false, next });
    }
    let open = pos;
    let start = open + 1;
    let mut search = start;
    let mut escaped = false;
    let end = loop {
        let Some(idx) = memchr::memchr(b'"', &line[search..]) else {
            return Err(Step::malformed_at(
                open,
                "a quoted field has no closing quote (a field cannot span lines)".to_string(),
            ));
        };
        let quote_at = search + idx;
        if line.get(quote_at + 1) == Some(&b'"') {
            escaped = true;
            search = quote_at + 2;
            continue;
        }
        break quote_at;
    };
    let mut after = end + 1;
    while after < line.len() && is_space(line[after]) {
        after += 1;
    }
    let next = match line.get(after) {
        None => None,
        Some(&byte) if Some(byte) == delimiter => Some(after + 1),
        Some(_) => {
            return Err(Step::malformed_at(
                after,
                format!(
                    "expected the delimiter or the end of the line after a quoted field, found {}",
                    quote(&line[after..])
                ),
            ))
        }
    };
    Ok(Field { start, end, escaped, next })
}

/// Copies a quoted field's text into `out`, each `""` as one quote.
fn unescape_quotes(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut rest = text;
    while let Some(idx) = memchr::memchr(b'"', rest) {
        out.extend_from_slice(&rest[..=idx]);
        rest = rest.get(idx + 2..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
}

/// libCacheSim's delimiter detection: the candidate with the largest weighted count in
/// `line`, ties to the earlier; `None` when the line holds none.
fn detect_delimiter(line: &[u8]) -> Option<u8> {
    let mut best: Option<(u8, usize)> = None;
    for (delimiter, weight) in DELIMITER_WEIGHTS {
        let score = memchr::memchr_iter(delimiter, line).count() * weight;
        if score > best.map_or(0, |(_, best_score)| best_score) {
            best = Some((delimiter, score));
        }
    }
    best.map(|(delimiter, _)| delimiter)
}

/// libCacheSim's header detection: a line with more digits than letters is data.
fn looks_like_header(line: &[u8]) -> bool {
    let n_digits = line.iter().filter(|byte| byte.is_ascii_digit()).count();
    let n_letters = line.iter().filter(|byte| byte.is_ascii_alphabetic()).count();
    n_digits <= n_letters
}

/// Parses a time in seconds as libCacheSim's `atof` and truncation do, for the syntax
/// documented in the module doc; returns the whole seconds.
fn parse_seconds(text: &[u8]) -> Result<u64, String> {
    let bad = || format!("expected a time in seconds (such as 12, 12.75 or 1.2e3), found {}", quote(text));
    let digits =
        |at: usize| text[at.min(text.len())..].iter().take_while(|byte| byte.is_ascii_digit()).count();
    let n_whole = digits(0);
    let mut at = n_whole;
    let mut n_fraction = 0;
    if text.get(at) == Some(&b'.') {
        n_fraction = digits(at + 1);
        at += 1 + n_fraction;
    }
    if n_whole + n_fraction == 0 {
        return Err(bad());
    }
    if matches!(text.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(text.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let n_exponent = digits(at);
        if n_exponent == 0 {
            return Err(bad());
        }
        at += n_exponent;
    }
    if at != text.len() {
        return Err(bad());
    }
    let value: f64 = std::str::from_utf8(text).ok().and_then(|text| text.parse().ok()).ok_or_else(bad)?;
    // The syntax checked above rules out NaN; an overflowing exponent gives infinity.
    if value >= SECONDS_LIMIT {
        return Err(format!(
            "time {} is beyond the largest, 2^32 - 1 seconds (libCacheSim keeps 32-bit seconds)",
            quote(text)
        ));
    }
    // As C's conversion of a double to an integer: towards zero.
    Ok(value as u64)
}

#[cfg(test)]
mod tests;
