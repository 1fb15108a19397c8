//! What a person sees while a sweep runs: a progress bar, and after a panic the
//! `swapsim run` command that replays the variant it happened in.
//!
//! The library's sweep reports each variant's start and end through
//! [`swapsim::sweep::Progress`], on the thread that runs the variant; this module turns
//! those calls into an indicatif bar on stderr and a per-thread note for the panic hook.

use std::cell::RefCell;
use std::io::IsTerminal;

thread_local! {
    /// The `swapsim run` command that replays the variant this thread is running.
    static REPRODUCE: RefCell<Option<String>> = const { RefCell::new(None) };
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
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(n_runs as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let style =
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} elapsed")
                    .expect("the template is valid");
            bar.set_style(style);
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
        let mut command = format!("swapsim run {} --seed {seed}", self.scenario);
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
