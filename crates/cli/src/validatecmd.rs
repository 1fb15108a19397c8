//! `swapsim validate`: its arguments, and the glue from them to the library's validation
//! and to `validate_output.rs`.

use anyhow::Result;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;

use crate::{alloc, output, progress, validate_output};

#[derive(Debug, clap::Args)]
pub(crate) struct ValidateArgs {
    /// A directory of cases in the validation format (cases/*.json, traces/), e.g.
    /// validation/linux-6.18.
    dir: PathBuf,
    /// Only this case (by id); may be repeated.
    #[arg(long = "case", value_name = "ID")]
    cases: Vec<String>,
    /// Output format; markdown is what docs/validation.md holds. Markdown also replays
    /// every case under both LRU models and lays them side by side.
    #[arg(long, value_enum, default_value_t = ValidateFormat::Table)]
    format: ValidateFormat,
    /// LRU model to replay the cases with. The kernel ran the classic LRU, so only
    /// `classic` is a validation; `mglru` figures are printed as not validated.
    #[arg(long, value_enum, default_value_t = ValidateLru::Classic)]
    lru: ValidateLru,
    /// How many seeds each case is replayed with (1 to 64). The bounds in bounds.json and
    /// docs/validation.md come from the default; fewer seeds are quicker and their medians
    /// and ranges coarser.
    #[arg(long, default_value_t = swapsim::validate::SEEDS, value_name = "N")]
    seeds: u64,
    /// Exit with status 3 when any scored figure is outside its target (for CI jobs); the
    /// report is printed in full first, and stderr lists the figures outside.
    #[arg(long)]
    strict: bool,
    /// Print the scenario file (TOML) the one case given with --case is replayed with at
    /// seed N, instead of replaying anything: `swapsim run` on it gives that seed's replay,
    /// with every option of `run` (`--sample-every` for a time series). Its trace paths are
    /// absolute.
    #[arg(long, value_name = "N", conflicts_with_all = ["format", "seeds", "strict"])]
    scenario_of_seed: Option<u64>,
}

/// The LRU models `validate` replays with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ValidateLru {
    Classic,
    Mglru,
}

impl ValidateLru {
    fn model(self) -> swapsim_core::config::LruModel {
        match self {
            ValidateLru::Classic => swapsim_core::config::LruModel::Classic,
            ValidateLru::Mglru => swapsim_core::config::LruModel::Mglru,
        }
    }
}

/// How validation results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ValidateFormat {
    Table,
    Json,
    Markdown,
}

/// `swapsim validate`.
pub(crate) fn run(out: &mut impl Write, args: &ValidateArgs) -> Result<crate::Ended> {
    if let Some(seed) = args.scenario_of_seed {
        let [id] = args.cases.as_slice() else {
            anyhow::bail!("--scenario-of-seed needs exactly one --case (given {})", args.cases.len());
        };
        out.write_all(swapsim::validate::case_scenario(&args.dir, id, args.lru.model(), seed)?.as_bytes())?;
        return Ok(crate::Ended::Ok);
    }
    if args.cases.len() == 1 && args.format != ValidateFormat::Markdown {
        // One run, whose arrays live to its end: as `swapsim run`.
        alloc::use_huge_pages();
    } else {
        alloc::keep_freed_memory();
    }
    let lru = args.lru.model();
    let v = if args.format == ValidateFormat::Markdown {
        let (v, cmp) = progress::watch("cases", |bar| {
            swapsim::validate::run_compared(&args.dir, &args.cases, lru, args.seeds, bar)
        })?;
        validate_output::write_markdown(out, &v, &cmp, &args.dir)?;
        v
    } else {
        let v = progress::watch("cases", |bar| {
            swapsim::validate::run_lru(&args.dir, &args.cases, lru, args.seeds, bar)
        })?;
        match args.format {
            ValidateFormat::Json => output::write_json(out, &v)?,
            _ => validate_output::write_table(out, &v)?,
        }
        v
    };
    if !args.strict {
        return Ok(crate::Ended::Ok);
    }
    let outside: Vec<&str> = v
        .summary
        .iter()
        .filter(|s| s.scored && s.within_target() == Some(false))
        .map(|s| s.counter.as_str())
        .collect();
    if outside.is_empty() {
        return Ok(crate::Ended::Ok);
    }
    out.flush()?;
    eprintln!(
        "validate --strict: {} scored figure(s) outside their targets: {}",
        outside.len(),
        outside.join(", ")
    );
    Ok(crate::Ended::OutsideTargets)
}
