//! Next uses for Belady's optimal policy (`lru = "opt"`): for every access of a trace,
//! the position of the next access to the same page.
//!
//! A page is a (process, page) pair, as the engine's address spaces are. Positions count
//! the trace's records in file order from 0 (after whatever the reader skips, and across
//! the rounds of `repeat`), the order libCacheSim numbers requests in. One forward pass
//! fills them: each record starts as "never", and a later record of the same page writes
//! its own position into the earlier one, found through a map from each page to where its
//! latest record sits. The result is kept per thread, in each thread's order, so that the
//! task replaying a thread hands the engine the next use of each access it returns.
//!
//! Next uses always come from the page sequence, never from a next-access field the
//! format may carry (libCacheSim's `oracleGeneral` records one per object): objects map
//! onto pages modulo a region, and two objects that share a page share its next use. With
//! the dense object mapping every object has a page of its own, and the two agree (a test
//! checks it).
//!
//! Memory: 4 bytes per record for as long as the run lasts, plus the map of distinct
//! pages during the pass. This is the one place a trace's replay holds memory in
//! proportion to its length (ARCHITECTURE.md names the exception); only `lru = "opt"`
//! pays it.

use anyhow::{bail, Result};
use std::collections::HashMap;
use swapsim_core::{Access, AccessSource, TraceError};
use swapsim_trace_formats::RecordSource;

/// Whether a run's tasks carry each access's next use: only for `lru = "opt"`, which needs
/// them, since computing them costs a pass over the trace and 4 bytes per record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextUses {
    /// Every task's stream carries its accesses' next uses.
    Carried,
    /// No stream carries them.
    Omitted,
}

/// The stored next use of an access whose page is never accessed again.
const NEVER: u32 = u32::MAX;

fn thread_key(pid: u32, tid: u32) -> u64 {
    (u64::from(pid) << 32) | u64::from(tid)
}

/// Reads `source` to its end and returns the next uses of each thread's records, one
/// vector per entry of `threads` (`(pid, tid, records)`, as the trace's summary lists
/// them), each in that thread's order. `name` names the trace in errors.
pub(crate) fn per_thread(
    source: &mut dyn RecordSource,
    threads: &[(u32, u32, u64)],
    name: &str,
) -> Result<Vec<Vec<u32>>> {
    let index_of: HashMap<u64, usize> =
        threads.iter().enumerate().map(|(index, &(pid, tid, _))| (thread_key(pid, tid), index)).collect();
    let mut next_uses: Vec<Vec<u32>> =
        threads.iter().map(|&(_, _, n)| Vec::with_capacity(usize::try_from(n).unwrap_or(0))).collect();
    // Where each page's latest record sits: (thread index, position in the thread).
    let mut latest: HashMap<(u32, u64), (u32, u32)> = HashMap::new();
    let mut position: u64 = 0;
    while let Some(record) = source.next_record()? {
        if position >= u64::from(NEVER) {
            bail!("trace {name}: lru = \"opt\" numbers accesses in 32 bits, and the trace has more than {} records", NEVER - 1);
        }
        let Some(&thread) = index_of.get(&thread_key(record.pid, record.tid)) else {
            bail!(
                "trace {name}: thread {}/{} was not in the first pass over the trace: the trace changed between passes",
                record.pid,
                record.tid
            );
        };
        let at = next_uses[thread].len() as u32;
        next_uses[thread].push(NEVER);
        if let Some((earlier_thread, earlier_at)) =
            latest.insert((record.pid, record.page), (thread as u32, at))
        {
            next_uses[earlier_thread as usize][earlier_at as usize] = position as u32;
        }
        position += 1;
    }
    Ok(next_uses)
}

/// A task's access stream with the next use of each access attached.
pub(crate) struct WithNextUses {
    inner: Box<dyn AccessSource>,
    next_uses: Vec<u32>,
    /// Accesses returned so far.
    n_returned: usize,
    /// The next use of the access last returned.
    last: Option<u64>,
}

impl WithNextUses {
    pub(crate) fn new(inner: Box<dyn AccessSource>, next_uses: Vec<u32>) -> WithNextUses {
        WithNextUses { inner, next_uses, n_returned: 0, last: None }
    }
}

impl AccessSource for WithNextUses {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let access = self.inner.next_access()?;
        self.last = None;
        if access.is_some() {
            let Some(&next) = self.next_uses.get(self.n_returned) else {
                return Err(TraceError::Malformed {
                    line: 0,
                    column: None,
                    message: format!(
                        "record {} of this thread is past the {} the next-use pass read: the trace changed between passes",
                        self.n_returned + 1,
                        self.next_uses.len()
                    ),
                });
            };
            self.n_returned += 1;
            self.last = (next != NEVER).then_some(u64::from(next));
        }
        Ok(access)
    }

    fn knows_next_uses(&self) -> bool {
        true
    }

    fn next_use(&self) -> Option<u64> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim_trace_formats::{NextAccess, ObjectMap, OpenOptions};

    fn open(bytes: &'static [u8], object_map: ObjectMap) -> Box<dyn RecordSource> {
        let options = OpenOptions { object_map, ..OpenOptions::default() };
        swapsim_trace_formats::open(Box::new(bytes), options).expect("the trace opens")
    }

    /// The next uses of a one-thread trace, "-" for never.
    fn check(text: &'static str, threads: &[(u32, u32, u64)], expect: expect_test::Expect) {
        let mut source = open(text.as_bytes(), ObjectMap::default());
        let next = per_thread(&mut *source, threads, "t").expect("the pass succeeds");
        let rendered: Vec<String> = next
            .iter()
            .map(|thread| {
                thread
                    .iter()
                    .map(|&n| if n == NEVER { "-".to_string() } else { n.to_string() })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        expect.assert_eq(&rendered.join("\n"));
    }

    #[test]
    fn each_access_points_at_the_next_one_to_its_page() {
        check("R 1\nW 2\nR 1\nR 3\nR 2\nR 1\n", &[(0, 0, 6)], expect_test::expect!["2 4 5 - - -"]);
    }

    #[test]
    fn threads_share_a_process_pages_and_positions_stay_global() {
        // Process 1's threads 1 and 2 touch page 0x1 in turn; process 2's page 0x1 is
        // another page.
        let perf = " a 1/1 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x6
 a 1/2 [0] 1.1: exceptions:page_fault_user: address=0x1000 error_code=0x6
 b 2/2 [0] 1.2: exceptions:page_fault_user: address=0x1000 error_code=0x6
 a 1/1 [0] 1.3: exceptions:page_fault_user: address=0x1000 error_code=0x6
";
        check(
            perf,
            &[(1, 1, 2), (1, 2, 1), (2, 2, 1)],
            expect_test::expect![[r#"
            1 -
            3
            -"#]],
        );
    }

    #[test]
    fn the_stream_attaches_next_uses_in_order() {
        let accesses: Vec<Access> = [1u64, 2, 1]
            .iter()
            .map(|&p| Access { vpage: swapsim_core::VirtPage(p), write: false, think_ns: None })
            .collect();
        let mut stream = WithNextUses::new(Box::new(accesses.into_iter()), vec![2, NEVER, NEVER]);
        assert!(stream.knows_next_uses());
        let mut seen = Vec::new();
        while stream.next_access().expect("canned").is_some() {
            seen.push(stream.next_use());
        }
        assert_eq!(seen, [Some(2), None, None]);
        assert_eq!(stream.next_use(), None);
        // More accesses than next uses: the trace changed under the run.
        let mut short = WithNextUses::new(
            Box::new(std::iter::repeat(Access {
                vpage: swapsim_core::VirtPage(0),
                write: false,
                think_ns: None,
            })),
            vec![NEVER],
        );
        short.next_access().expect("one next use");
        let err = short.next_access().expect_err("none left");
        assert!(err.to_string().contains("the trace changed between passes"), "{err}");
    }

    /// Under the dense object mapping each object is a page of its own, so the computed
    /// next uses are the ones libCacheSim's `oracleGeneral` records carry.
    #[test]
    fn with_dense_objects_they_equal_the_oracle_general_field() {
        let bytes: &'static [u8] = include_bytes!("../../../traces/sample.oracleGeneral");
        let mut source = open(bytes, ObjectMap::Dense);
        let mut from_file = Vec::new();
        while source.next_record().expect("valid sample").is_some() {
            from_file.push(match source.next_access().expect("oracleGeneral records it") {
                NextAccess::At(at) => at as u32,
                NextAccess::Never => NEVER,
            });
        }
        let mut source = open(bytes, ObjectMap::Dense);
        let computed = per_thread(&mut *source, &[(0, 0, from_file.len() as u64)], "sample").expect("pass");
        assert_eq!(computed, [from_file.clone()]);
        assert!(from_file.iter().any(|&n| n != NEVER), "the sample has reuse");
        // Modulo a 16 KiB region, objects collide on pages, and the page sequence decides.
        let options =
            OpenOptions { object_map: ObjectMap::Modulo { region_pages: 4 }, ..OpenOptions::default() };
        let mut source = swapsim_trace_formats::open(Box::new(bytes), options).expect("opens");
        let modulo = per_thread(&mut *source, &[(0, 0, from_file.len() as u64)], "sample").expect("pass");
        assert_ne!(modulo, [from_file]);
    }
}
