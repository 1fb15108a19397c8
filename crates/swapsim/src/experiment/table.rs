//! An experiment's rows laid out for reading, as its publication laid out its table.
//!
//! Each experiment lays out its own rows (the columns, their order and the precision of
//! each figure are part of comparing with the publication); the caller only aligns the
//! cells and prints them. Nothing here is in the JSON of a result, which holds the rows
//! themselves.

/// An experiment's rows laid out like the publication's table: what `swapsim experiment
/// run` prints between the setup and the verdict. Cells are formatted already.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Table {
    /// A line above the header, e.g. "swapoff time (s)".
    pub caption: Option<String>,
    /// The columns, each right-aligned to its width, one space from the one before.
    pub columns: Vec<Column>,
    /// The header of a last column of free text (how a run ended), left-aligned two spaces
    /// after the others; `None` when there is no such column.
    pub remark: Option<&'static str>,
    /// Each row's cells: one per column, then its remark when there is a remark column.
    pub rows: Vec<Vec<String>>,
    /// A line below the table, e.g. what a column means.
    pub note: Option<String>,
}

/// A column of a [`Table`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Column {
    /// Its header.
    pub header: &'static str,
    /// The width its header and cells are right-aligned to.
    pub width: usize,
}

/// Columns from (header, width) pairs.
pub(super) fn columns(spec: &[(&'static str, usize)]) -> Vec<Column> {
    spec.iter().map(|&(header, width)| Column { header, width }).collect()
}
