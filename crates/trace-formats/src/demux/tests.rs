//! Tests of the replay: its tasks' streams under every consumption order, batch size and
//! queue limit, kept or streamed, and the errors of a trace that changed since it was
//! counted.

use super::*;
use crate::options::OpenOptions;
use expect_test::{expect, Expect};
use std::fmt::Write;
use std::io::Cursor;
use std::sync::Arc;

const PERF: &str = "\
 app 100 [000] 10.000000: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6
 app 100/101 [001] 10.000250: exceptions:page_fault_user: address=0x2000 ip=0x0 error_code=0x4
 db 200 [002] 10.001000: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x4
 app 100 [000] 10.002000: exceptions:page_fault_user: address=0x3000 ip=0x0 error_code=0x4
 app 100/101 [001] 10.002000: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6
 app 100/101 [001] 10.003500: sched:sched_switch: prev_comm=app
 app 100/101 [001] 10.004000: exceptions:page_fault_user: address=0x2000 ip=0x0 error_code=0x6
";

fn opener(text: &'static str) -> Arc<OpenFn> {
    Arc::new(move || crate::open(Box::new(Cursor::new(text.as_bytes())), OpenOptions::default()))
}

/// The tasks of a replay of the trace `open` opens, after a streaming first pass that keeps
/// the records of a trace of at most `limits.kept_records_max`, and its summary.
fn tasks_with_limits(
    open: Arc<OpenFn>,
    pace: Pace,
    limits: Limits,
) -> Result<(Vec<TaskSpec>, TraceSummary), FormatError> {
    replay(open, pace, limits, FirstPassSource::Stream(KeepRecords::IfShort))
}

/// The tasks of a replay of the trace `open` opens, after the first pass `source` names,
/// and its summary.
fn replay(
    open: Arc<OpenFn>,
    pace: Pace,
    limits: Limits,
    source: FirstPassSource,
) -> Result<(Vec<TaskSpec>, TraceSummary), FormatError> {
    let builder = ReplayBuilder { open, name: "t".to_string(), pace, limits };
    let Replay { tasks, count } = builder.build(source)?;
    match count {
        TraceCount::Before(summary) => Ok((tasks, summary)),
        TraceCount::WhileRead(_) => panic!("a replay after a first pass counts before it"),
    }
}

/// The tasks of a replay of a native trace after its summary frame, `summary`.
fn after_frame(bytes: &'static [u8], summary: &crate::native::StoredSummary) -> Vec<TaskSpec> {
    let open: Arc<OpenFn> =
        Arc::new(move || crate::open(Box::new(Cursor::new(bytes)), OpenOptions::default()));
    let stored = StoredRounds::new(summary.clone(), 1).expect("one reading");
    replay(open, Pace::Timestamps, LIMITS, FirstPassSource::Stored(stored)).expect("tasks").0
}

#[test]
fn a_one_thread_replay_finds_the_first_time_counted_before_it() {
    use crate::native::{stored_summary, NativeWriter};
    let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec");
    for (time_ns, page) in [(5, 3), (9, 4)] {
        let record = Record { pid: 1, tid: 1, time_ns: Some(time_ns), page, write: false };
        writer.write(&record).expect("a valid record");
    }
    let bytes: &'static [u8] = Box::leak(writer.finish().expect("writing to a Vec").into_boxed_slice());
    let stored = stored_summary(&mut Cursor::new(bytes)).expect("a valid frame").expect("a frame");
    let early = crate::native::StoredSummary { time_range: Some((4, 9)), ..stored.clone() };
    let mut rendered = String::new();
    for summary in [stored, early] {
        let mut tasks = after_frame(bytes, &summary);
        for line in drain(&mut tasks, false).concat().lines() {
            writeln!(rendered, "{}", line.trim_start()).expect("writing to a string");
        }
    }
    expect![[r#"
          R 0x3 think 0
          R 0x4 think 4
          R 0x3 think 1
          R 0x4 think 4
          error: the trace's first time is 5 ns, where 4 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
    "#]]
    .assert_eq(&rendered);
}

#[test]
fn a_replay_finds_what_was_counted_before_it_or_fails() {
    use crate::native::{stored_summary, NativeWriter};
    let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec");
    for (tid, time_ns, page) in [(1, 5, 3), (2, 7, 4), (1, 9, 5)] {
        let record = Record { pid: 1, tid, time_ns: Some(time_ns), page, write: false };
        writer.write(&record).expect("a valid record");
    }
    let bytes: &'static [u8] = Box::leak(writer.finish().expect("writing to a Vec").into_boxed_slice());
    let stored = stored_summary(&mut Cursor::new(bytes)).expect("a valid frame").expect("a frame");
    let mut miscounted = stored.clone();
    miscounted.tasks[0].2 += 1;
    miscounted.records += 1;
    let untimed = crate::native::StoredSummary { time_range: None, ..stored.clone() };
    let late = crate::native::StoredSummary { time_range: Some((6, 9)), ..stored.clone() };
    let early = crate::native::StoredSummary { time_range: Some((4, 9)), ..stored.clone() };
    let mut rendered = String::new();
    for summary in [stored, miscounted, untimed, late, early] {
        let mut tasks = after_frame(bytes, &summary);
        let accesses = drain(&mut tasks, false).concat();
        for line in accesses.lines() {
            writeln!(rendered, "{}", line.trim_start()).expect("writing to a string");
        }
        rendered.push('\n');
    }
    expect![[r#"
        R 0x3 think 0
        R 0x5 think 4
        R 0x4 think 2

        R 0x3 think 0
        R 0x5 think 4
        error: thread 1/1 has 2 records, where 3 were counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
        R 0x4 think 2

        error: thread 1/1 has a record at 5 ns in a trace counted as untimed before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
        error: thread 1/2 has a record at 7 ns in a trace counted as untimed before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong

        error: thread 1/1 has a record at 5 ns, before the trace's first time, 6 ns, as counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
        R 0x4 think 1
        error: the trace's first time is 5 ns, where 6 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong

        R 0x3 think 1
        R 0x5 think 4
        error: the trace's first time is 5 ns, where 4 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
        R 0x4 think 3
        error: the trace's first time is 5 ns, where 4 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong

    "#]]
    .assert_eq(&rendered);
}

/// Drains every task, taking one access from each in turn (round robin) or each task to
/// its end before the next (in order), and renders what each task received.
fn drain(tasks: &mut [TaskSpec], round_robin: bool) -> Vec<String> {
    let mut out = vec![String::new(); tasks.len()];
    let mut done = vec![false; tasks.len()];
    while done.contains(&false) {
        for (index, task) in tasks.iter_mut().enumerate() {
            while !done[index] {
                match task.accesses.next_access() {
                    Ok(Some(access)) => {
                        let operation = if access.write { "W" } else { "R" };
                        let think = access.think_ns.map_or("-".to_string(), |ns| ns.to_string());
                        writeln!(out[index], "  {operation} {:#x} think {think}", access.vpage.0)
                            .expect("writing to a string");
                    }
                    Ok(None) => done[index] = true,
                    Err(err) => {
                        writeln!(out[index], "  error: {err}").expect("writing to a string");
                        done[index] = true;
                    }
                }
                if round_robin {
                    break;
                }
            }
        }
    }
    out
}

fn check(text: &'static str, pace: Pace, expect: Expect) {
    let limits = Limits { kept_records_max: 0, ..LIMITS };
    let (mut tasks, summary) = tasks_with_limits(opener(text), pace, limits).expect("valid trace");
    let mut rendered = format!("{summary:?}\n");
    for task in &tasks {
        writeln!(rendered, "{} space {:?} regions {:?}", task.name, task.address_space, task.regions)
            .expect("writing to a string");
    }
    let received = drain(&mut tasks, true);
    for (index, accesses) in received.iter().enumerate() {
        writeln!(rendered, "task {index}:\n{accesses}").expect("writing to a string");
    }
    // Any consumption order and batch size, with or without detaching, read again or
    // kept from the first pass, gives each task the same stream.
    for queued_records_max in [0, 1, 2, QUEUED_RECORDS_MAX] {
        for batch_records_max in [1, 2, 3, BATCH_RECORDS_MAX] {
            for (round_robin, kept_records_max) in
                [(false, 0), (true, 0), (false, 3), (true, KEPT_RECORDS_MAX)]
            {
                let limits = Limits {
                    queued_records_max,
                    batch_records_max,
                    solo_batch_records: batch_records_max,
                    kept_records_max,
                };
                let (mut tasks, _) = tasks_with_limits(opener(text), pace, limits).expect("valid trace");
                assert_eq!(drain(&mut tasks, round_robin), received, "{limits:?}, round robin {round_robin}");
            }
        }
    }
    expect.assert_eq(&rendered);
}

/// A replay without a first pass counts what one finds as it reads the trace, or, when it
/// stopped before the trace's end, by a pass after it.
#[test]
fn a_solo_replay_counts_what_a_first_pass_finds() {
    let builder = ReplayBuilder {
        open: opener("# pages=8\nR 1\nW 2\n\nR 1\n"),
        name: "t".into(),
        pace: Pace::Cpu,
        limits: LIMITS,
    };
    let before = builder.first_pass(FirstPassSource::Stream(KeepRecords::No)).expect("a valid trace");
    let solo = || match builder.build(FirstPassSource::Solo(Format::Text)).expect("no pass to fail") {
        Replay { tasks, count: TraceCount::WhileRead(counting) } => (tasks, counting),
        Replay { count: TraceCount::Before(_), .. } => panic!("a solo replay counts while it reads"),
    };
    let (mut tasks, counting) = solo();
    assert_eq!((tasks.len(), tasks[0].name.as_str(), counting.records()), (1, "t:0/0", None));
    assert_eq!(drain(&mut tasks, false)[0].lines().count(), 3);
    assert_eq!(counting.records(), Some(3), "counted once read through");
    assert_eq!(counting.finish().expect("counted").summary(), before.summary());
    let (tasks, counting) = solo();
    drop(tasks);
    assert_eq!(counting.finish().expect("counted after the replay").summary(), before.summary());
}

#[test]
fn a_short_trace_is_decoded_once_and_a_longer_one_twice() {
    let text = "R 1\nW 2\nR 1\nR 3\n";
    for (kept_records_max, opens) in [(4, 1), (3, 2), (0, 2)] {
        let n_opens = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = Arc::clone(&n_opens);
        let open: Arc<OpenFn> = Arc::new(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            crate::open(Box::new(Cursor::new(text.as_bytes())), OpenOptions::default())
        });
        let limits = Limits { batch_records_max: 2, solo_batch_records: 2, kept_records_max, ..LIMITS };
        let (mut tasks, _) = tasks_with_limits(open, Pace::Cpu, limits).expect("valid trace");
        let streams = drain(&mut tasks, false);
        assert_eq!(streams.len(), 1);
        assert_eq!(streams[0].lines().count(), 4, "{streams:?}");
        assert_eq!(
            n_opens.load(std::sync::atomic::Ordering::Relaxed),
            opens,
            "keeping at most {kept_records_max}"
        );
    }
}

#[test]
fn threads_of_a_process_share_an_address_space_and_keep_their_order() {
    check(
        PERF,
        Pace::Timestamps,
        expect![[r#"
            TraceSummary { format: PerfScript, records: 6, tasks: [(100, 100, 2), (100, 101, 3), (200, 200, 1)], distinct_pages: None, first_page: 1, last_page: 3, time_span_ns: Some(4000000), reads: 3, writes: 3, skipped: SkipCounts({"other event: sched:sched_switch": 1}), declared_pages: None }
            t:100/100 space Some(100) regions []
            t:100/101 space Some(100) regions []
            t:200/200 space Some(200) regions []
            task 0:
              W 0x1 think 0
              R 0x3 think 2000000

            task 1:
              R 0x2 think 250000
              W 0x1 think 1750000
              W 0x2 think 2000000

            task 2:
              R 0x1 think 1000000

        "#]],
    );
}

#[test]
fn a_text_header_declares_the_region_in_the_summary() {
    check(
        "# pages=8\nR 1\n",
        Pace::Cpu,
        expect![[r#"
            TraceSummary { format: Text, records: 1, tasks: [(0, 0, 1)], distinct_pages: None, first_page: 1, last_page: 1, time_span_ns: None, reads: 1, writes: 0, skipped: SkipCounts({}), declared_pages: Some(8) }
            t:0/0 space Some(0) regions []
            task 0:
              R 0x1 think -

        "#]],
    );
}

#[test]
fn cpu_cost_pacing_drops_times() {
    check(
        "R 1\nW 2\n",
        Pace::Cpu,
        expect![[r#"
            TraceSummary { format: Text, records: 2, tasks: [(0, 0, 2)], distinct_pages: None, first_page: 1, last_page: 2, time_span_ns: None, reads: 1, writes: 1, skipped: SkipCounts({}), declared_pages: None }
            t:0/0 space Some(0) regions []
            task 0:
              R 0x1 think -
              W 0x2 think -

        "#]],
    );
    // Records without time never carry a think time.
    check(
        " L 1000,4\n",
        Pace::Timestamps,
        expect![[r#"
            TraceSummary { format: Lackey, records: 1, tasks: [(0, 0, 1)], distinct_pages: None, first_page: 1, last_page: 1, time_span_ns: None, reads: 1, writes: 0, skipped: SkipCounts({}), declared_pages: None }
            t:0/0 space Some(0) regions []
            task 0:
              R 0x1 think -

        "#]],
    );
}

#[test]
fn errors_of_the_first_pass_fail_and_of_later_passes_reach_every_task() {
    let err = replay(opener("R 1\nX\n"), Pace::Cpu, LIMITS, FirstPassSource::Stream(KeepRecords::No))
        .expect_err("line 2 is bad");
    assert_eq!(err.to_string(), "line 2, column 1: expected R or W, found \"X\"");

    // The trace changes between the passes: the second pass fails, after the records
    // before the failure, for every task.
    check_changed(
        &[fault(1, 0x1000), fault(2, 0x1000)],
        &[fault(1, 0x1000), fault(2, 0x1000), "??"],
        expect![[r#"
            [
                "  R 0x1 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
                "  R 0x1 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
            ]
        "#]],
    );
    check_changed(
        &[fault(1, 0x1000), fault(2, 0x1000)],
        &[fault(1, 0x1000), fault(2, 0x2000), fault(1, 0x3000), fault(3, 0x1000), fault(1, 0x4000)],
        expect![[r#"
            [
                "  R 0x1 think 0\n  R 0x3 think 0\n  error: thread 1/3 was not in the first pass over the trace: the trace changed between passes\n",
                "  R 0x2 think 0\n  error: thread 1/3 was not in the first pass over the trace: the trace changed between passes\n",
            ]
        "#]],
    );
    // The same with one thread, which reads the trace without the demultiplexer.
    check_changed(
        &[fault(1, 0x1000)],
        &[fault(1, 0x1000), fault(1, 0x2000), "??"],
        expect![[r#"
            [
                "  R 0x1 think 0\n  R 0x2 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
            ]
        "#]],
    );
    check_changed(
        &[fault(1, 0x1000)],
        &[fault(1, 0x1000), fault(1, 0x2000), fault(2, 0x1000), fault(1, 0x3000)],
        expect![[r#"
            [
                "  R 0x1 think 0\n  R 0x2 think 0\n  error: thread 1/2 was not in the first pass over the trace: the trace changed between passes\n",
            ]
        "#]],
    );
}

/// A perf script line: a read fault of thread `tid` of process 1 at `address`, at 1 s.
fn fault(tid: u32, address: u64) -> &'static str {
    let line = format!("p 1/{tid} [0] 1.0: exceptions:page_fault_user: address={address:#x} error_code=0x0");
    Box::leak(line.into_boxed_str())
}

/// Replays a trace whose first pass reads `first` and whose later passes read `later`,
/// under every batch size and queue limit and both consumption orders, checks that each
/// gives the same streams and compares them with `expect`.
fn check_changed(first: &[&'static str], later: &[&'static str], expect: Expect) {
    let text = |lines: &[&str]| -> &'static [u8] {
        Box::leak(format!("{}\n", lines.join("\n")).into_bytes().into_boxed_slice())
    };
    let (first, later) = (text(first), text(later));
    let mut received = None;
    for queued_records_max in [0, 1, 2, QUEUED_RECORDS_MAX] {
        for batch_records_max in [1, 2, 3, BATCH_RECORDS_MAX] {
            for round_robin in [false, true] {
                let n_opens = Arc::new(std::sync::atomic::AtomicU64::new(0));
                let open: Arc<OpenFn> = Arc::new(move || {
                    let text = match n_opens.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
                        0 => first,
                        _ => later,
                    };
                    crate::open(Box::new(Cursor::new(text)), OpenOptions::default())
                });
                // A kept trace is read once, so only a streamed one can change.
                let limits = Limits {
                    queued_records_max,
                    batch_records_max,
                    solo_batch_records: batch_records_max,
                    kept_records_max: 0,
                };
                let (mut tasks, _) =
                    tasks_with_limits(open, Pace::Timestamps, limits).expect("the first pass is clean");
                let streams = drain(&mut tasks, round_robin);
                // A task that ended is asked once more: it ends, or fails, again.
                for (task, stream) in tasks.iter_mut().zip(&streams) {
                    let again = match task.accesses.next_access() {
                        Ok(None) => String::new(),
                        Ok(Some(access)) => format!("{access:?}"),
                        Err(err) => format!("  error: {err}\n"),
                    };
                    assert!(stream.ends_with(&again), "{stream:?} then {again:?}");
                }
                match &received {
                    None => received = Some(streams),
                    Some(received) => {
                        assert_eq!(&streams, received, "{limits:?}, round robin {round_robin}")
                    }
                }
            }
        }
    }
    expect.assert_debug_eq(&received.expect("one run at least"));
}
