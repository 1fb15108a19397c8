//! `swapsim trace info|head|convert|generate` (and `write-trace`, the older spelling of
//! `trace generate`): their arguments, the flags every command that reads a trace shares
//! (`--format`, `--lenient`, `--object-map`, ...), and the glue from them to `tracecmd.rs`.

use anyhow::{anyhow, Result};
use clap::{Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use swapsim::{Registry, Scenario, TraceSource};

use crate::{output, tracecmd};

#[derive(Debug, Subcommand)]
pub(crate) enum TraceCommand {
    /// Summarise a trace: format, records, tasks, pages, footprint, time span, reads and
    /// writes, skipped lines.
    Info(TraceInfoArgs),
    /// Print the first records as `pid/tid time_s R|W 0xADDRESS`.
    Head(TraceHeadArgs),
    /// Rewrite a trace as native, text or libCacheSim oracleGeneral.
    Convert(TraceConvertArgs),
    /// Write a built-in generator's accesses as a trace.
    Generate(TraceGenerateArgs),
}

/// How a trace is read, shared by the `trace` subcommands.
#[derive(Debug, clap::Args)]
pub(crate) struct TraceReadArgs {
    /// The trace's format [default: detected from the first bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_trace_format)]
    format: Option<swapsim_trace_formats::Format>,
    /// Skip malformed lines, counting them by reason, instead of failing.
    #[arg(long)]
    lenient: bool,
    #[command(flatten)]
    decoding: DecodingArgs,
}

impl TraceReadArgs {
    pub(crate) fn options(&self) -> Result<swapsim_trace_formats::OpenOptions> {
        self.decoding.open_options(self.format, self.lenient)
    }
}

/// `--object-map`: how libCacheSim's object ids become pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ObjectMapArg {
    /// Page = object id modulo --object-region: no memory, the identity below the region,
    /// and objects may share a page.
    Modulo,
    /// Pages 0, 1, 2, ... in order of each object's first request: one page per object,
    /// at the cost of a hash map entry per object.
    Dense,
}

/// How the records of the formats that need more than their name are decoded: lackey's
/// instruction fetches, and for libCacheSim's traces how object ids map to pages and the
/// trace parameters of its txt and csv formats.
#[derive(Debug, clap::Args)]
pub(crate) struct DecodingArgs {
    /// lackey: count instruction fetches as reads of their pages.
    #[arg(long)]
    pub(crate) instructions: bool,
    /// libCacheSim traces (oracle-general, lcs, libcachesim-txt, libcachesim-csv): how
    /// object ids become pages [default: modulo].
    #[arg(long, value_enum, value_name = "MAP")]
    object_map: Option<ObjectMapArg>,
    /// libCacheSim traces with --object-map modulo: the region object ids wrap around, a
    /// whole number of 4 KiB pages up to 128 TiB [default: 1GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_object_region)]
    object_region: Option<u64>,
    /// libcachesim-csv and libcachesim-txt: trace parameters in libCacheSim's own
    /// `--trace-type-params` syntax, e.g. 'obj-id-col=2,time-col=1,delimiter=,'. Keys:
    /// obj-id-col (csv, required), time-col, obj-size-col, delimiter, has-header,
    /// obj-id-is-num (also txt). See traces/README.md.
    #[arg(long, value_name = "PARAMS", alias = "trace-type-params", value_parser = parse_trace_params)]
    pub(crate) trace_params: Option<swapsim_trace_formats::TraceParams>,
}

impl DecodingArgs {
    /// The options to open a trace in `format` (detected when `None`) with, skipping
    /// malformed lines when `lenient`, decoding records as these flags ask.
    pub(crate) fn open_options(
        &self,
        format: Option<swapsim_trace_formats::Format>,
        lenient: bool,
    ) -> Result<swapsim_trace_formats::OpenOptions> {
        Ok(swapsim_trace_formats::OpenOptions {
            format,
            lenient,
            instructions: self.instructions,
            object_map: self.object_map()?,
            params: self.trace_params.unwrap_or_default(),
        })
    }

    /// The object mapping the flags ask for, or `None` when neither `--object-map` nor
    /// `--object-region` was given.
    pub(crate) fn object_map_given(&self) -> Result<Option<swapsim_trace_formats::ObjectMap>> {
        if self.object_map.is_none() && self.object_region.is_none() {
            return Ok(None);
        }
        self.object_map().map(Some)
    }

    /// The flags as typed, for the reproducing command.
    pub(crate) fn command_text(&self) -> String {
        let mut text = String::new();
        if self.instructions {
            text.push_str(" --instructions");
        }
        if let Some(object_map) = self.object_map {
            text.push_str(if object_map == ObjectMapArg::Dense {
                " --object-map dense"
            } else {
                " --object-map modulo"
            });
        }
        if let Some(region_pages) = self.object_region {
            text.push_str(&format!(" --object-region {}", region_pages * 4096));
        }
        if let Some(params) = self.trace_params {
            text.push_str(&format!(" --trace-params '{params}'"));
        }
        text
    }

    fn object_map(&self) -> Result<swapsim_trace_formats::ObjectMap> {
        use swapsim_trace_formats::oracle::{ObjectMap, REGION_PAGES_DEFAULT};
        Ok(match (self.object_map, self.object_region) {
            (Some(ObjectMapArg::Dense), Some(_)) => {
                anyhow::bail!("--object-region: only applies to --object-map modulo")
            }
            (Some(ObjectMapArg::Dense), None) => ObjectMap::Dense,
            (Some(ObjectMapArg::Modulo) | None, region_pages) => {
                ObjectMap::Modulo { region_pages: region_pages.unwrap_or(REGION_PAGES_DEFAULT) }
            }
        })
    }
}

/// Parses `--object-region` into pages.
fn parse_object_region(text: &str) -> Result<u64, String> {
    use swapsim_trace_formats::oracle::REGION_PAGES_MAX;
    let size = swapsim_core::ByteSize::parse(text).map_err(|err| err.to_string())?;
    let bytes = size.0;
    if bytes == 0 || !bytes.is_multiple_of(4096) {
        return Err(format!("{text} is not a positive whole number of 4 KiB pages"));
    }
    let pages = bytes / 4096;
    if pages > REGION_PAGES_MAX {
        return Err(format!("{text} is above the largest region, 128 TiB ({REGION_PAGES_MAX} pages)"));
    }
    Ok(pages)
}

/// Parses `--trace-params`.
fn parse_trace_params(text: &str) -> Result<swapsim_trace_formats::TraceParams, String> {
    swapsim_trace_formats::TraceParams::parse(text)
}

pub(crate) fn parse_trace_format(name: &str) -> Result<swapsim_trace_formats::Format, String> {
    swapsim::parse_format(name)
}

#[derive(Debug, clap::Args)]
pub(crate) struct TraceInfoArgs {
    /// The trace (any supported format, plain, gzip or zstd).
    file: PathBuf,
    #[command(flatten)]
    read: TraceReadArgs,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct TraceHeadArgs {
    /// The trace.
    file: PathBuf,
    /// Records to print.
    #[arg(short = 'n', default_value_t = 10)]
    n: u64,
    #[command(flatten)]
    read: TraceReadArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct TraceConvertArgs {
    /// The trace to read.
    input: PathBuf,
    /// Where to write; a name ending in `.zst` or `.gz` is compressed.
    output: PathBuf,
    /// Output format [default: native when OUTPUT ends in .swt or .swapsim, oracle-general
    /// when it ends in .oracleGeneral, text otherwise]. oracle-general keeps the whole trace
    /// in memory (about 20 bytes per record) to compute each request's next access.
    #[arg(long, value_enum)]
    to: Option<tracecmd::WriteFormat>,
    /// The input's format [default: detected].
    #[arg(long, value_name = "FORMAT", value_parser = parse_trace_format)]
    from: Option<swapsim_trace_formats::Format>,
    /// Skip malformed input lines instead of failing.
    #[arg(long)]
    lenient: bool,
    #[command(flatten)]
    decoding: DecodingArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct TraceGenerateArgs {
    /// A scenario whose workload is a `[workload.generator]` section; or give --pattern or
    /// --phase instead.
    scenario: Option<PathBuf>,
    /// One phase: PATTERN:REGION:PASSES[:WRITE_FRACTION], e.g. `zipf:64MiB:2`. Repeat to run
    /// phases one after another in one task, over one region as large as the largest phase.
    /// PATTERN is seq, rand, zipf, hotcold or stride; other generator settings take their
    /// defaults (zipf exponent 0.9, 10 % hot pages taking 90 % of accesses, stride 16);
    /// WRITE_FRACTION defaults to 0.2.
    #[arg(long = "phase", value_name = "SPEC", value_parser = parse_phase, conflicts_with = "scenario")]
    phases: Vec<tracecmd::Phase>,
    /// A single phase, given as --pattern, --region and --passes.
    #[arg(long, conflicts_with_all = ["scenario", "phases"], requires = "region")]
    pattern: Option<String>,
    /// With --pattern: the region size, e.g. 64MiB (sizes as in a scenario: KiB/MiB/GiB and
    /// K/M/G are powers of 1024, kB/MB/GB powers of 1000).
    #[arg(long, requires = "pattern")]
    region: Option<String>,
    /// With --pattern: passes over the region.
    #[arg(long, default_value_t = 1, requires = "pattern")]
    passes: u32,
    /// With --pattern: the probability that an access is a write.
    #[arg(long, requires = "pattern")]
    write_fraction: Option<f64>,
    /// With --phase or --pattern: skip the fill that writes every page once, in order,
    /// before the first phase.
    #[arg(long, conflicts_with = "scenario")]
    no_fill: bool,
    /// Where to write the trace; a name ending in `.zst` or `.gz` is compressed.
    #[arg(long, short)]
    output: PathBuf,
    /// Output format [default: native when OUTPUT ends in .swt or .swapsim, oracle-general
    /// when it ends in .oracleGeneral, text otherwise]. oracle-general keeps the whole trace
    /// in memory (about 20 bytes per record) to compute each request's next access.
    #[arg(long, value_enum)]
    to: Option<tracecmd::WriteFormat>,
    /// Root seed; overrides the scenario's `seed` [default: the scenario's, or 1].
    #[arg(long)]
    seed: Option<u64>,
    /// Edit the scenario before it is read, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "scenario")]
    sets: Vec<String>,
}

fn parse_phase(text: &str) -> Result<tracecmd::Phase, String> {
    tracecmd::Phase::parse(text)
}

/// `swapsim trace` and `swapsim write-trace`.
pub(crate) fn run(out: &mut impl Write, command: TraceCommand, registry: &Arc<Registry>) -> Result<()> {
    match command {
        TraceCommand::Info(args) => {
            let info = tracecmd::info(&TraceSource::File(args.file), args.read.options()?)?;
            if args.json {
                output::write_json(out, &info)?;
            } else {
                tracecmd::write_info(out, &info)?;
            }
        }
        TraceCommand::Head(args) => {
            tracecmd::head(out, &TraceSource::File(args.file), args.read.options()?, args.n)?;
        }
        TraceCommand::Convert(args) => {
            let options = args.decoding.open_options(args.from, args.lenient)?;
            let input = TraceSource::File(args.input);
            let done = tracecmd::convert(&input, options, &args.output, args.to)?;
            let to = done.to.name();
            writeln!(
                out,
                "wrote {} records ({} to {to}) to {}, {}",
                done.records,
                done.from.name(),
                args.output.display(),
                output::skipped_text(&done.skipped)
            )?;
        }
        TraceCommand::Generate(args) => {
            let n_records = match &args.scenario {
                Some(path) => {
                    let mut scenario = Scenario::load_with(path, Arc::clone(registry))?.edits(&args.sets)?;
                    if let Some(seed) = args.seed {
                        scenario = scenario.with_seed(seed);
                    }
                    let prepared = scenario.prepare()?;
                    tracecmd::generate(tracecmd::GenerateInput::Scenario(&prepared), &args.output, args.to)?
                }
                None => {
                    let mut phases = args.phases.clone();
                    if let Some(pattern) = &args.pattern {
                        let region = args.region.as_deref().unwrap_or_default();
                        let mut spec = format!("{pattern}:{region}:{}", args.passes);
                        if let Some(fraction) = args.write_fraction {
                            spec.push_str(&format!(":{fraction}"));
                        }
                        phases.push(
                            tracecmd::Phase::parse(&spec)
                                .map_err(|message| anyhow!("--pattern: {message}"))?,
                        );
                    }
                    let input = tracecmd::GenerateInput::Phases {
                        phases: &phases,
                        fill: !args.no_fill,
                        seed: args.seed.unwrap_or(1),
                    };
                    tracecmd::generate(input, &args.output, args.to)?
                }
            };
            writeln!(out, "wrote {n_records} records to {}", args.output.display())?;
        }
    }
    Ok(())
}
