//! `swapsim mrc`: its arguments, and the glue from them to the library's miss-ratio
//! curves and to their table, CSV and plot.

use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use swapsim::TraceSource;

use crate::traceargs::TraceReadArgs;
use crate::{outfile, output, plot, tracecmd};

#[derive(Debug, clap::Args)]
pub(crate) struct MrcArgs {
    /// The trace (any supported format, plain, gzip or zstd).
    file: PathBuf,
    #[command(flatten)]
    read: TraceReadArgs,
    /// Memory sizes, comma-separated: a number of pages (`512`) or a size (`2MiB`, a
    /// multiple of 4 KiB).
    #[arg(long, value_delimiter = ',', required = true, value_parser = parse_mrc_size)]
    sizes: Vec<u64>,
    /// Print one JSON document instead of the table.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV, one line per size, instead of the table.
    #[arg(long)]
    csv: bool,
    /// Also draw the curves as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// A memory size of `mrc --sizes`, in pages: a plain number is pages, anything else a size.
fn parse_mrc_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
        return text.parse::<u64>().map_err(|_| format!("\"{text}\" is too many pages"));
    }
    let size = swapsim_core::ByteSize::parse(text).map_err(|e| e.to_string())?;
    if size.0 % 4096 != 0 {
        return Err(format!("{text} is not a whole number of 4 KiB pages"));
    }
    Ok(size.0 / 4096)
}

/// `swapsim mrc`.
pub(crate) fn run(out: &mut impl Write, args: MrcArgs) -> Result<()> {
    if let Some(path) = &args.plot {
        outfile::refuse_same_file(&args.file, path)?;
    }
    let mrc = swapsim::mrc::compute(&TraceSource::File(args.file), args.read.options()?, &args.sizes)?;
    if let Some(path) = &args.plot {
        outfile::write_atomically(path, plot::mrc_svg(&mrc)?.as_bytes())?;
    }
    if args.json {
        output::write_json(out, &mrc)?;
    } else if args.csv {
        tracecmd::write_mrc_csv(out, &mrc)?;
    } else {
        tracecmd::write_mrc_table(out, &mrc)?;
    }
    Ok(())
}
