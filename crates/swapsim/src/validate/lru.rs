//! The validation cases replayed under both LRU models, side by side.
//!
//! The kernel the cases were measured on ran the classic LRU (it was built without
//! `CONFIG_LRU_GEN`), so only the classic replay is scored against it. The MGLRU replay of
//! the same trace on the same machine is no validation of MGLRU; it is a sanity check: the
//! run must not be OOM-killed, and its swap-ins (`pswpin`, plus `zswpin` when zswap is on)
//! must stay within [`SWAP_IN_RATIO`] of the classic replay's, the same order of magnitude.

use serde::Serialize;
use serde_json::Value;
use swapsim_core::Outcome;

use super::{lookup, CaseGroup, CaseResult, KernelOomKills};

/// The range MGLRU's swap-ins may fall in, as a multiple of the classic LRU's,
/// for its result to count as sane: within one order of magnitude either way.
pub const SWAP_IN_RATIO: (f64, f64) = (0.1, 10.0);

/// Every case replayed under the classic LRU and under MGLRU.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct LruComparison {
    /// Per case, in file-name order.
    pub cases: Vec<LruCase>,
}

/// One case under both LRU models.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct LruCase {
    /// The case's id.
    pub id: String,
    /// "live" or "swapoff".
    pub kind: String,
    /// The kernel's OOM kills, when the case records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_oom_kills: Option<KernelOomKills>,
    /// How the classic replay ended (absent when skipped).
    pub classic: Option<Outcome>,
    /// How the MGLRU replay ended (absent when skipped).
    pub mglru: Option<Outcome>,
    /// The figures compared: the kernel's median, and each replay's value.
    pub figures: Vec<LruFigure>,
}

/// One figure of a case: the kernel's median (when it measured the figure) and the two
/// replays' values.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct LruFigure {
    /// Its dotted path in the case's `measured` shape, e.g. `vmstat.pswpin`.
    pub figure: String,
    /// The kernel's median.
    pub kernel: Option<f64>,
    /// The classic replay's value.
    pub classic: Option<f64>,
    /// The MGLRU replay's value.
    pub mglru: Option<f64>,
}

/// The figures compared for a case: the reclaim counters a kernel developer reads first
/// and the run time. A swapoff case's counters are split into its fill and its swapoff.
fn figures(kind: &str, group: CaseGroup) -> Vec<&'static str> {
    match kind {
        "swapoff" => vec![
            "fill.vmstat.pswpin",
            "fill.vmstat.pswpout",
            "fill.vmstat.pgmajfault",
            "fill.vmstat.workingset_refault_anon",
            "swapoff.vmstat.pswpin",
            "timing.fill_s",
            "timing.swapoff_s",
        ],
        _ => {
            let mut f = vec![
                "vmstat.pswpin",
                "vmstat.pswpout",
                "vmstat.pgmajfault",
                "vmstat.workingset_refault_anon",
            ];
            if group == CaseGroup::Zswap {
                f.extend(["vmstat.zswpout", "vmstat.zswpin"]);
            }
            f.push("timing.total_s");
            f
        }
    }
}

/// The swap-in figures of a case, summed over its phases: `pswpin`, the pages read from
/// the swap device, and `zswpin`, those taken from zswap's pool (compared on zswap cases
/// only: a zswap case reads nothing from the device).
fn swap_in_figures(kind: &str) -> &'static [&'static str] {
    match kind {
        "swapoff" => &["fill.vmstat.pswpin", "swapoff.vmstat.pswpin"],
        _ => &["vmstat.pswpin", "vmstat.zswpin"],
    }
}

fn number(tree: &Value, path: &str) -> Option<f64> {
    lookup(tree, path).and_then(Value::as_f64)
}

impl LruComparison {
    /// Pairs the two replays of each case (`classic` and `mglru` hold the same cases in the
    /// same order).
    pub(crate) fn new(classic: &[CaseResult], mglru: &[CaseResult]) -> LruComparison {
        let cases = classic
            .iter()
            .zip(mglru)
            .map(|(c, m)| {
                debug_assert_eq!(c.id, m.id);
                let figures = figures(&c.kind, c.group)
                    .into_iter()
                    .map(|path| LruFigure {
                        figure: path.to_string(),
                        kernel: number(&c.real, path),
                        classic: number(&c.sim_all, path),
                        mglru: number(&m.sim_all, path),
                    })
                    .collect();
                LruCase {
                    id: c.id.clone(),
                    kind: c.kind.clone(),
                    kernel_oom_kills: c.kernel_oom_kills.clone(),
                    classic: c.outcome.clone(),
                    mglru: m.outcome.clone(),
                    figures,
                }
            })
            .collect();
        LruComparison { cases }
    }

    /// The cases where MGLRU's result is not sane, each with why.
    pub fn insane(&self) -> impl Iterator<Item = (&LruCase, Vec<String>)> {
        self.cases.iter().filter_map(|c| {
            let why = c.insane();
            (!why.is_empty()).then_some((c, why))
        })
    }
}

impl LruCase {
    /// The figure at `path`, if compared.
    pub fn figure(&self, path: &str) -> Option<&LruFigure> {
        self.figures.iter().find(|f| f.figure == path)
    }

    /// Swap-ins (`pswpin`, plus `zswpin` on a zswap case, over every phase of the case) of
    /// the classic and the MGLRU replay; `None` when a replay has none of these figures.
    pub fn swap_ins(&self) -> (Option<f64>, Option<f64>) {
        let sum = |side: fn(&LruFigure) -> Option<f64>| -> Option<f64> {
            let values: Vec<f64> =
                swap_in_figures(&self.kind).iter().filter_map(|p| self.figure(p).and_then(side)).collect();
            (!values.is_empty()).then(|| values.iter().sum())
        };
        (sum(|f| f.classic), sum(|f| f.mglru))
    }

    /// MGLRU's swap-ins over the classic LRU's; 1 when both are zero, infinite when only
    /// the classic replay's are.
    pub fn swap_in_ratio(&self) -> Option<f64> {
        let (Some(classic), Some(mglru)) = self.swap_ins() else { return None };
        Some(match (classic == 0.0, mglru == 0.0) {
            (true, true) => 1.0,
            (true, false) => f64::INFINITY,
            _ => mglru / classic,
        })
    }

    /// Why MGLRU's result on this case is not sane, if it is not: it did not complete (an
    /// OOM kill, or a limit), or its swap-ins are outside [`SWAP_IN_RATIO`] of the classic
    /// LRU's. Empty when it is sane.
    pub fn insane(&self) -> Vec<String> {
        let mut why = Vec::new();
        match &self.mglru {
            Some(Outcome::Completed) | None => {}
            Some(Outcome::OomKilled { at_s, .. }) => why.push(format!("MGLRU run OOM-killed at {at_s:.3} s")),
            Some(other) => why.push(format!("MGLRU run did not complete: {other:?}")),
        }
        if let Some(ratio) = self.swap_in_ratio() {
            let (lo, hi) = SWAP_IN_RATIO;
            if !(lo..=hi).contains(&ratio) {
                let (classic, mglru) = self.swap_ins();
                why.push(format!(
                    "MGLRU swap-ins {} are {ratio:.2}x classic's {}, outside {lo}x..{hi}x",
                    mglru.unwrap_or(f64::NAN),
                    classic.unwrap_or(f64::NAN)
                ));
            }
        }
        why
    }
}
