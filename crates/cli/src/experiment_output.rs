//! `swapsim experiment run` output: an experiment's result as a table laid out like the
//! publication's, or as CSV.
//!
//! The experiments themselves, and the result's JSON shape, are the library's
//! (`swapsim::experiment`); this module only lays the result out for reading.

use anyhow::{Context, Result};
use std::io::Write;
use swapsim::experiment::{Column, Outcome, Table};

/// Prints the setup, a table laid out like the publication's, and the verdict: the
/// direction, then each published figure checked within its tolerance.
pub(crate) fn write_table(out: &mut impl Write, o: &Outcome) -> Result<()> {
    writeln!(out, "{}: {}", o.experiment, o.title)?;
    writeln!(out, "setup: {}", o.setup)?;
    if o.scale < 1.0 {
        writeln!(out, "scale: {} (sizes reduced; compare with the publication at scale 1)", o.scale)?;
    }
    writeln!(out, "published: {}", o.published)?;
    writeln!(out)?;
    write_rows(out, &o.table)?;
    writeln!(out)?;
    let v = &o.verdict;
    let mark = if v.direction_matches { "matches" } else { "DOES NOT match" };
    writeln!(out, "verdict ({mark} the published direction): {}", v.text)?;
    let n_reproduced = v.checks.iter().filter(|c| c.reproduced).count();
    let overall = if v.reproduced { "reproduced" } else { "NOT reproduced" };
    writeln!(out, "{overall}: {n_reproduced} of {} published figures within tolerance", v.checks.len())?;
    for check in &v.checks {
        writeln!(out, "  {}", check.text)?;
    }
    if o.scale < 1.0 {
        writeln!(
            out,
            "note: at scale {} the workload is not the published one; the verdict applies at full scale \
             only, and a smaller scale can turn it either way",
            o.scale
        )?;
    }
    Ok(())
}

/// Prints the rows as the experiment laid them out: a caption, the header, one line per
/// row, a note. Nothing when there are no rows.
fn write_rows(out: &mut impl Write, table: &Table) -> Result<()> {
    if table.rows.is_empty() {
        return Ok(());
    }
    if let Some(caption) = &table.caption {
        writeln!(out, "{caption}")?;
    }
    let headers: Vec<&str> = table.columns.iter().map(|c| c.header).chain(table.remark).collect();
    write_line(out, &table.columns, &headers)?;
    for row in &table.rows {
        write_line(out, &table.columns, row)?;
    }
    if let Some(note) = &table.note {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// One line of a table: each cell right-aligned to its column's width, one space apart,
/// then the remark, if any, two spaces after them.
fn write_line(out: &mut impl Write, columns: &[Column], cells: &[impl AsRef<str>]) -> Result<()> {
    let mut line = String::new();
    for (idx, cell) in cells.iter().enumerate() {
        let cell = cell.as_ref();
        match columns.get(idx) {
            Some(column) if idx == 0 => line.push_str(&format!("{cell:>width$}", width = column.width)),
            Some(column) => line.push_str(&format!(" {cell:>width$}", width = column.width)),
            None => line.push_str(&format!("  {cell}")),
        }
    }
    writeln!(out, "{line}")?;
    Ok(())
}

/// One CSV line per row, with a header. Fields that are lists or objects (such as a
/// zswap row's per-build figures) are left to the JSON output.
pub(crate) fn write_csv(out: &mut impl Write, o: &Outcome) -> Result<()> {
    let mut first = true;
    for r in &o.rows {
        let value = serde_json::to_value(r)?;
        let obj = value.as_object().context("rows are objects")?;
        let scalars: Vec<(&String, &serde_json::Value)> =
            obj.iter().filter(|(_, v)| !v.is_array() && !v.is_object()).collect();
        if first {
            writeln!(out, "{}", scalars.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(","))?;
            first = false;
        }
        let cells: Vec<String> = scalars
            .iter()
            .map(|(_, v)| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}
