//! Tests of how a run turns a trace into tasks: counted before the run or while it reads,
//! regions declared by a header, next uses, shared first passes.

use super::*;

/// The tasks of `input` for a run, with what is known of the trace: `None` when it is
/// counted while the run reads it.
fn for_run(input: &TraceInput) -> (Vec<TaskSpec>, TraceTally) {
    input.tasks_for_run(NextUses::Omitted).expect("the trace has tasks")
}

/// Reads every access of `tasks`; the error that ends one, if any.
fn drain(tasks: Vec<TaskSpec>) -> Option<String> {
    for mut task in tasks {
        loop {
            match task.accesses.next_access() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(err) => return Some(err.to_string()),
            }
        }
    }
    None
}

/// A text trace that declares its pages is counted by its replay's own reading, and says
/// what a first pass before the run says, whether the run read it through or stopped.
#[test]
fn a_text_trace_that_declares_its_pages_is_counted_while_it_is_read() {
    let input = embedded(b"# pages=8\nR 1\nW 2\n\nR 1\n", 1);
    let (_, before) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
    let before = format!("{before:?}");
    let (tasks, tally) = for_run(&input);
    assert!(matches!(tally, TraceTally::Counting(_)));
    assert_eq!((tasks.len(), tasks[0].name.as_str(), tasks[0].regions.len()), (1, "t", 1));
    assert_eq!(drain(tasks), None);
    assert_eq!(tally.records(), Some(3), "counted once read through");
    assert_eq!(format!("{:?}", tally.finish().expect("counted")), before);
    // A run that reads nothing: a pass after it counts the trace.
    let (tasks, tally) = for_run(&input);
    drop(tasks);
    assert_eq!(tally.records(), None);
    assert_eq!(format!("{:?}", tally.finish().expect("counted after")), before);
}

/// A bad line found while the run reads the trace is the error a first pass would have
/// given before the run.
#[test]
fn a_bad_line_counted_while_read_is_the_first_pass_error() {
    let input = embedded(b"# pages=8\nR 1\nR zz\nR 2\n", 1);
    let before = format!("{:#}", input.tasks(NextUses::Omitted).expect_err("a bad line"));
    let (tasks, tally) = for_run(&input);
    assert!(drain(tasks).is_some_and(|err| err.contains("line 3")));
    assert_eq!(format!("{:#}", tally.finish().expect_err("a bad line")), before);
    assert!(before.starts_with("trace t: line 3, column 3: "), "{before}");
}

/// A trace of one untimed thread without a header is counted while it is read too, its
/// task over regions mapped on first touch; a libCacheSim txt trace's task creates its
/// pages on first read.
#[test]
fn one_untimed_thread_is_counted_while_it_is_read_without_a_header() {
    for (bytes, reads_create) in [(&b"R 1\nW 2\n"[..], false), (b"5\n7\n5\n", true)] {
        let input = embedded(bytes, 1);
        let (_, before) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
        let (tasks, tally) = for_run(&input);
        assert!(matches!(tally, TraceTally::Counting(_)));
        assert_eq!((tasks[0].regions.len(), tasks[0].reads_create), (0, reads_create));
        assert_eq!(drain(tasks), None);
        assert_eq!(format!("{:?}", tally.finish().expect("counted")), format!("{before:?}"));
    }
}

/// Only a trace of one untimed thread, with a record, read once and by no other run, is
/// counted while it is read.
#[test]
fn other_traces_are_counted_before_the_run() {
    let perf = b" a 1/1 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x6\n";
    for (bytes, repeat) in [(&perf[..], 1), (b"# pages=8\nR 1\n", 2)] {
        let (_, tally) = for_run(&embedded(bytes, repeat));
        assert!(matches!(tally, TraceTally::Known(_)), "{:?}", String::from_utf8_lossy(bytes));
    }
    let empty = embedded(b"# pages=8\n", 1);
    let errors =
        [empty.tasks(NextUses::Omitted).map(|_| ()), empty.tasks_for_run(NextUses::Omitted).map(|_| ())]
            .map(|result| format!("{:#}", result.expect_err("no record")));
    assert_eq!(errors[0], errors[1]);
    let cache = Arc::new(TraceCache::default());
    let input = TraceInput { cache: Some(Arc::clone(&cache)), ..embedded(b"# pages=8\nR 1\n", 1) };
    cache.expect(&input.cache_key());
    cache.expect(&input.cache_key());
    assert!(matches!(for_run(&input).1, TraceTally::Known(_)), "two runs share the first pass");
    assert!(matches!(for_run(&input).1, TraceTally::Known(_)), "the second takes the pass computed");
    cache.expect(&input.cache_key());
    assert!(matches!(for_run(&input).1, TraceTally::Counting(_)), "a sole run reads on its own");
    assert!(cache.is_empty(), "and is served");
}

/// A text trace built into the test, read `repeat` times with default flags.
fn embedded(bytes: &'static [u8], repeat: u32) -> TraceInput {
    TraceInput {
        source: TraceSource::Embedded { name: "t", bytes },
        origin: PathOrigin::TraceFlag,
        format: None,
        lenient: false,
        instructions: false,
        object_map: ObjectMap::default(),
        params: TraceParams::default(),
        madvise: ThpHint::Default,
        pace: Pace::Cpu,
        repeat,
        cache: None,
    }
}

/// With next uses asked for (`lru = "opt"`), each task's accesses carry them,
/// counted across the rounds of `repeat`.
#[test]
fn next_uses_count_across_repeated_rounds() {
    let input = embedded(b"R 1\nW 2\nR 1\n", 2);
    let (mut tasks, _) = input.tasks(NextUses::Carried).expect("the trace has tasks");
    let stream = &mut tasks[0].accesses;
    assert!(stream.knows_next_uses());
    let mut seen = Vec::new();
    while let Some(access) = stream.next_access().expect("valid") {
        seen.push((access.vpage.0, stream.next_use()));
    }
    assert_eq!(seen, [(1, Some(2)), (2, Some(4)), (1, Some(3)), (1, Some(5)), (2, None), (1, None)]);
    let (tasks, _) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
    assert!(!tasks[0].accesses.knows_next_uses());
}

#[test]
fn a_text_header_declares_every_task_region_also_when_repeated() {
    for repeat in [1, 3] {
        let input = embedded(b"# pages=64\nR 1\nW 2\n", repeat);
        input.check().expect("the trace opens");
        let (tasks, report) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
        assert_eq!(report.records, 2);
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].regions, vec![RegionSpec::new(VirtPage(0), 64)]);
    }
}
