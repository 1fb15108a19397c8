//! `repeat`: a trace read several times in a row, as one stream of records.

use std::sync::Arc;
use swapsim_trace_formats::{Format, FormatError, Record, RecordSource, SkipCounts};

/// Opens the trace again from its start.
pub(super) type Reopen = Arc<dyn Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync>;

/// A trace replayed `rounds` times in a row.
///
/// Later rounds are shifted in time so that time never runs backwards: round `r + 1` starts
/// where round `r` ended, keeping the gaps between records of the original. Skip counts are
/// summed over the rounds read so far.
pub(super) struct Repeat {
    current: Box<dyn RecordSource>,
    reopen: Reopen,
    rounds_left: u32,
    /// Time of the first timed record of the trace, once seen.
    first_ns: Option<u64>,
    /// Added to `time - first_ns` in the current round.
    base_ns: u64,
    /// Latest time handed out.
    last_ns: u64,
    /// Skips of the finished rounds.
    finished: SkipCounts,
    /// `finished` plus the current round's skips.
    total: SkipCounts,
    /// The current round's skip total when `total` was last brought up to date.
    seen_skips: u64,
}

impl Repeat {
    pub(super) fn new(first: Box<dyn RecordSource>, reopen: Reopen, rounds: u32) -> Repeat {
        Repeat {
            current: first,
            reopen,
            rounds_left: rounds - 1,
            first_ns: None,
            base_ns: 0,
            last_ns: 0,
            finished: SkipCounts::default(),
            total: SkipCounts::default(),
            seen_skips: 0,
        }
    }

    fn refresh_skips(&mut self) {
        let current = self.current.skipped();
        if current.total() == self.seen_skips {
            return;
        }
        self.seen_skips = current.total();
        self.total = add_skips(&self.finished, current);
    }
}

fn add_skips(a: &SkipCounts, b: &SkipCounts) -> SkipCounts {
    let mut sum = a.clone();
    for (reason, n) in &b.0 {
        *sum.0.entry(reason.clone()).or_insert(0) += n;
    }
    sum
}

impl RecordSource for Repeat {
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        loop {
            let next = self.current.next_record()?;
            self.refresh_skips();
            match next {
                Some(mut record) => {
                    if let Some(time_ns) = record.time_ns {
                        let first_ns = *self.first_ns.get_or_insert_with(|| {
                            // The first round keeps its own times.
                            self.base_ns = time_ns;
                            time_ns
                        });
                        let shifted = self.base_ns.saturating_add(time_ns.saturating_sub(first_ns));
                        self.last_ns = self.last_ns.max(shifted);
                        record.time_ns = Some(shifted);
                    }
                    return Ok(Some(record));
                }
                None if self.rounds_left == 0 => return Ok(None),
                None => {
                    self.rounds_left -= 1;
                    self.finished = add_skips(&self.finished, self.current.skipped());
                    self.total = self.finished.clone();
                    self.seen_skips = 0;
                    self.current = (self.reopen)()?;
                    self.base_ns = self.last_ns;
                }
            }
        }
    }

    fn skipped(&self) -> &SkipCounts {
        &self.total
    }

    fn declared_pages(&self) -> Option<u64> {
        self.current.declared_pages()
    }

    fn format(&self) -> Format {
        self.current.format()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace held in memory that counts one skipped line with every write record.
    struct Canned {
        records: Vec<Record>,
        next_idx: usize,
        skipped: SkipCounts,
    }

    impl RecordSource for Canned {
        fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
            let record = self.records.get(self.next_idx).copied();
            self.next_idx += 1;
            if record.is_some_and(|r| r.write) {
                self.skipped.add("bad line");
            }
            Ok(record)
        }
        fn skipped(&self) -> &SkipCounts {
            &self.skipped
        }
        fn format(&self) -> Format {
            Format::PerfScript
        }
    }

    fn record(time_ns: Option<u64>, page: u64, write: bool) -> Record {
        Record { pid: 1, tid: 1, time_ns, page, write }
    }

    /// Replays `records` `rounds` times; renders `time page` per record, then the skips.
    fn check(records: Vec<Record>, rounds: u32) -> String {
        let canned = move || -> Result<Box<dyn RecordSource>, FormatError> {
            Ok(Box::new(Canned { records: records.clone(), next_idx: 0, skipped: SkipCounts::default() }))
        };
        let first = canned().expect("canned");
        let mut repeat = Repeat::new(first, Arc::new(canned), rounds);
        let mut lines = Vec::new();
        while let Some(r) = repeat.next_record().expect("canned records do not fail") {
            lines.push(format!("{:?} {}", r.time_ns, r.page));
        }
        lines.push(format!("skipped {:?}", repeat.skipped().0));
        lines.join("\n")
    }

    #[test]
    fn repeat_shifts_later_rounds_in_time_and_sums_skips() {
        let records =
            vec![record(Some(100), 1, false), record(Some(130), 2, true), record(Some(160), 1, false)];
        expect_test::expect![[r#"
            Some(100) 1
            Some(130) 2
            Some(160) 1
            Some(160) 1
            Some(190) 2
            Some(220) 1
            Some(220) 1
            Some(250) 2
            Some(280) 1
            skipped {"bad line": 3}"#]]
        .assert_eq(&check(records, 3));
    }

    #[test]
    fn repeat_without_time_and_once() {
        let records = vec![record(None, 5, false), record(None, 6, false)];
        expect_test::expect![[r#"
            None 5
            None 6
            None 5
            None 6
            skipped {}"#]]
        .assert_eq(&check(records.clone(), 2));
        assert_eq!(check(records, 1), "None 5\nNone 6\nskipped {}");
    }
}
