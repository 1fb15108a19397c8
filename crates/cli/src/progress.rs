//! What a person sees while long work runs: a progress bar on stderr with a rate and the
//! time left, and after a panic in a sweep the `swapsim run` command that replays the
//! variant it happened in.
//!
//! Bars are drawn only when stderr is a terminal, so that scripts, pipes and JSON output
//! see nothing of them, and they are cleared when the work ends; stdout is never touched.
//! The library reports counts (accesses of a run, runs of an experiment, cases of a
//! validation) through [`swapsim::progress::Progress`], and each variant's start and end
//! of a sweep through [`swapsim::sweep::Progress`] on the thread that runs it; this module
//! turns those calls into indicatif bars and a per-thread note for the panic hook.

use std::cell::RefCell;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

thread_local! {
    /// The `swapsim run` command that replays the variant this thread is running.
    static REPRODUCE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The name this command line was started under, for the commands it prints: `swapsim`, or
/// the binary a crate of one's own built around [`crate::main_with`].
pub(crate) fn program_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0).file_name().map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "swapsim".to_string())
}

/// A panic is a broken invariant in the simulator; print the `run` command that replays
/// the variant it happened in. The hook runs on the panicking thread, which is the one
/// whose slot names the variant.
pub(crate) fn install_reproduce_hint() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        let command = REPRODUCE.with(|slot| slot.borrow().clone());
        if let Some(command) = command {
            eprintln!("this is a bug in swapsim; reproduce with: {command}");
        }
    }));
}

/// The sweep's progress: a bar, only for a person watching a terminal and only when there
/// is more than one run to wait for, and the reproduce note of each running variant.
pub(crate) struct SweepProgress {
    /// How the reproduce command names the scenario.
    scenario: String,
    bar: Option<indicatif::ProgressBar>,
}

impl SweepProgress {
    /// Progress of `n_runs` runs (variants times seeds) of the scenario named `scenario`.
    pub(crate) fn new(scenario: &str, n_runs: usize) -> SweepProgress {
        let bar = (n_runs > 1 && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(n_runs as u64), ProgressDrawTarget::stderr());
            bar.set_style(style(BAR_TEMPLATE));
            bar.set_message("runs");
            bar.enable_steady_tick(TICK);
            bar
        });
        SweepProgress { scenario: scenario.to_string(), bar }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl swapsim::sweep::Progress for SweepProgress {
    fn started(&self, _index: usize, edits: &[String], seed: u64) {
        let mut command = format!("{} run {} --seed {seed}", program_name(), self.scenario);
        for set in edits {
            command.push_str(&format!(" --set '{set}'"));
        }
        REPRODUCE.with(|slot| *slot.borrow_mut() = Some(command));
    }

    fn finished(&self, _index: usize, _done: usize, _total: usize) {
        REPRODUCE.with(|slot| *slot.borrow_mut() = None);
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

/// How often a bar redraws on its own, so that the elapsed time and the estimate of the
/// time left move while no count arrives (a swapoff after the workload, a long variant).
const TICK: Duration = Duration::from_millis(200);

/// A bar toward a known total: what is done, how fast, and when it will be finished.
const BAR_TEMPLATE: &str = "{wide_bar} {human_pos}/{human_len} {msg}, {rate}, ETA {eta}";

/// A count without a total: what is done, how fast, and for how long.
const SPINNER_TEMPLATE: &str = "{spinner} {human_pos} {msg}, {rate}, {elapsed} elapsed";

/// A style from one of the templates above, with `{rate}`: units per second, short.
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).expect("the templates are valid").with_key(
        "rate",
        |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let per_s = state.per_sec();
            let _ = match per_s {
                r if r >= 1e6 => write!(out, "{:.1}M/s", r / 1e6),
                r if r >= 1e4 => write!(out, "{:.0}k/s", r / 1e3),
                r if r >= 10.0 => write!(out, "{r:.0}/s"),
                r => write!(out, "{r:.2}/s"),
            };
        },
    )
}

/// The progress of one long call that reports counts: a run's accesses, an experiment's
/// runs, a validation's cases. A spinner until the total is known, then a bar.
pub(crate) struct CountBar {
    bar: Option<ProgressBar>,
    /// The largest count reported: parallel work can report out of order.
    done_max: AtomicU64,
}

impl CountBar {
    /// A bar counting `unit` on stderr, or nothing when stderr is not a terminal.
    fn new(unit: &'static str) -> CountBar {
        let target = std::io::stderr().is_terminal().then(ProgressDrawTarget::stderr);
        CountBar::drawn_to(unit, target)
    }

    /// A bar counting `unit` drawn to `target`, or nothing without one.
    fn drawn_to(unit: &'static str, target: Option<ProgressDrawTarget>) -> CountBar {
        let bar = target.map(|target| {
            let bar = ProgressBar::with_draw_target(None, target);
            bar.set_style(style(SPINNER_TEMPLATE));
            bar.set_message(unit);
            bar.enable_steady_tick(TICK);
            bar
        });
        CountBar { bar, done_max: AtomicU64::new(0) }
    }
}

impl swapsim::progress::Progress for CountBar {
    fn advanced(&self, done: u64, total: Option<u64>) {
        let Some(bar) = &self.bar else { return };
        if let Some(total) = total {
            if bar.length() != Some(total) {
                bar.set_length(total);
                bar.set_style(style(BAR_TEMPLATE));
            }
        }
        let done_max = self.done_max.fetch_max(done, Ordering::Relaxed).max(done);
        bar.set_position(done_max);
    }
}

impl Drop for CountBar {
    /// Removes the bar from the terminal, whether the work succeeded or failed.
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Runs `work` with a progress bar counting `unit` (only when stderr is a terminal), and
/// clears the bar before returning what `work` returned.
pub(crate) fn watch<T>(unit: &'static str, work: impl FnOnce(&CountBar) -> T) -> T {
    let bar = CountBar::new(unit);
    work(&bar)
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim::progress::Progress;

    /// A bar drawn nowhere, to look at its state.
    fn hidden(unit: &'static str) -> CountBar {
        CountBar::drawn_to(unit, Some(ProgressDrawTarget::hidden()))
    }

    fn state(bar: &CountBar) -> (u64, Option<u64>) {
        let bar = bar.bar.as_ref().expect("a drawn bar");
        (bar.position(), bar.length())
    }

    #[test]
    fn a_count_with_a_total_becomes_a_bar_that_never_goes_back() {
        let bar = hidden("runs");
        assert_eq!(state(&bar), (0, None), "a spinner until the total is known");
        bar.advanced(0, Some(32));
        assert_eq!(state(&bar), (0, Some(32)));
        bar.advanced(5, Some(32));
        // A thread that finished earlier reports after a later one.
        bar.advanced(4, Some(32));
        assert_eq!(state(&bar), (5, Some(32)));
        bar.advanced(32, Some(32));
        assert_eq!(state(&bar), (32, Some(32)));
    }

    #[test]
    fn a_count_without_a_total_stays_a_spinner() {
        let bar = hidden("accesses");
        bar.advanced(65_536, None);
        bar.advanced(131_072, None);
        assert_eq!(state(&bar), (131_072, None));
    }

    #[test]
    fn without_a_terminal_nothing_is_drawn() {
        let bar = CountBar::drawn_to("cases", None);
        bar.advanced(1, Some(2));
        assert!(bar.bar.is_none());
    }
}
