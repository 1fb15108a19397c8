//! `swapsim probe exec`: the workload program a probe runs on the real kernel.
//!
//! It performs exactly the accesses of one text trace (`R|W <page>` lines after a `#`
//! header declaring `pages=N`, as the validation traces are written) on an anonymous region
//! of that many pages, the way the bundled cases were measured: the region is aligned to
//! 2 MiB and given the THP hint asked for; a page's first touch fills it with the content
//! class asked for plus a unique non-zero stamp in its first word; every other access reads
//! or writes that one 8-byte word. It prints one JSON line with the time the fill took, the
//! total time and the number of accesses.
//!
//! The whole trace is loaded before the process joins the memory cgroup, so that its own
//! memory (8 bytes an access) is not charged there. The fill ends after the header's
//! `fill_accesses` first accesses when it says so, otherwise once every page was touched
//! (or at the end, if some page never is).
//!
//! What it deliberately does not do: set up the cgroup, swap or knobs (see `setup`), or
//! measure the kernel's counters; it is started by the probe as a child process.

use crate::outfile;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use swapsim_trace_formats::{Format, OpenOptions};

/// The page size the traces index by.
const PAGE_BYTES: usize = 4096;
/// 8-byte words in a page.
const PAGE_WORDS: usize = PAGE_BYTES / 8;
/// The region's alignment: a PMD-sized huge page, so that THP can map it.
const ALIGN_BYTES: usize = 2 << 20;
/// The most accesses loaded: 8 bytes each, so 32 GiB of this process's memory at most.
const ACCESSES_MAX: usize = 1 << 32;
/// The longest header line read for `fill_accesses`.
const HEADER_LINE_BYTES_MAX: u64 = 4096;
/// The high bits of every page's stamp, so that no stamp is zero or a small number.
const STAMP_TAG: u64 = 0x5357_0000_0000_0000;
/// The constant second half of a `half` page.
const HALF_CONSTANT: u64 = 0x5a5a_5a5a_5a5a_5a5a;
/// What a `text` page repeats.
const TEXT: &[u8] = b"swapped out, swapped in: the quick brown fox jumps over the lazy dog. ";

/// `swapsim probe exec`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExecArgs {
    /// The trace to perform: `R|W <page>` lines after a `#` header that declares `pages=N`,
    /// plain, zstd- or gzip-compressed.
    trace: PathBuf,
    /// What a page holds from its first touch on.
    #[arg(long, value_enum, default_value_t = ContentClass::Random)]
    contents: ContentClass,
    /// The region's transparent-huge-page hint.
    #[arg(long, value_enum, default_value_t = ThpHint::Nohugepage)]
    thp: ThpHint,
    /// The `cgroup.procs` file of the memory cgroup to join once the trace is loaded.
    #[arg(long, value_name = "FILE")]
    cgroup_procs: Option<PathBuf>,
    /// The CPU to pin this process to.
    #[arg(long)]
    cpu: Option<usize>,
}

/// The content class of a page, as the simulator's `contents` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ContentClass {
    /// Random words: incompressible.
    Random,
    /// The first half random words, the second half one constant: compresses about 2:1.
    Half,
    /// Repetitive printable text.
    Text,
    /// Zeros (but for the stamp).
    Zero,
}

/// The region's `madvise` hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ThpHint {
    /// `MADV_NOHUGEPAGE`: no huge page of any size.
    Nohugepage,
    /// `MADV_HUGEPAGE`.
    Hugepage,
    /// No hint: the sysfs settings decide.
    Default,
}

/// One access, packed: the page index shifted left by one, the low bit set for a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Access(u64);

impl Access {
    fn new(page: u64, write: bool) -> Access {
        Access(page << 1 | u64::from(write))
    }
    fn page(self) -> u64 {
        self.0 >> 1
    }
    fn is_write(self) -> bool {
        self.0 & 1 == 1
    }
}

/// A trace loaded into memory.
#[derive(Debug)]
pub(crate) struct Workload {
    /// The region's size in pages (`pages=N`).
    pages: u64,
    /// The header's `fill_accesses=N`, if it says.
    fill_accesses: Option<u64>,
    accesses: Vec<Access>,
}

/// How long the accesses took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Timing {
    pub(crate) fill_s: f64,
    pub(crate) total_s: f64,
    pub(crate) accesses: u64,
}

/// Runs `probe exec`.
pub(crate) fn run(out: &mut dyn Write, args: &ExecArgs) -> Result<()> {
    // Loaded first, so that the trace's memory is charged to the parent's cgroup.
    let workload = load(&args.trace)?;
    if let Some(procs) = &args.cgroup_procs {
        outfile::write_in_place(procs, &format!("{}\n", std::process::id()))
            .context("cannot join the memory cgroup")?;
    }
    if let Some(cpu) = args.cpu {
        pin_to_cpu(cpu)?;
    }
    let mut region = Region::map(workload.pages, args.thp)?;
    let timing = perform(region.words_mut(), &workload, args.contents);
    let line = serde_json::json!({
        "fill_s": timing.fill_s,
        "total_s": timing.total_s,
        "accesses": timing.accesses,
    });
    writeln!(out, "{line}")?;
    Ok(())
}

/// Reads the whole trace at `path`.
pub(crate) fn load(path: &Path) -> Result<Workload> {
    let name = path.display();
    let header = first_line(path)?;
    let fill_accesses = fill_accesses(&header).with_context(|| format!("{name}: line 1"))?;
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let options = OpenOptions { format: Some(Format::Text), ..OpenOptions::default() };
    let mut source =
        swapsim_trace_formats::open(Box::new(file), options).with_context(|| name.to_string())?;
    let Some(pages) = source.declared_pages() else {
        bail!("{name}: line 1: the header declares no pages=N (the region's size)");
    };
    let mut accesses = Vec::new();
    let mut batch = Vec::with_capacity(4096);
    loop {
        batch.clear();
        let res = source.next_records(&mut batch, 4096);
        accesses.extend(batch.iter().map(|record| Access::new(record.page, record.write)));
        res.with_context(|| name.to_string())?;
        if batch.is_empty() {
            break;
        }
        if accesses.len() > ACCESSES_MAX {
            bail!("{name}: more than {ACCESSES_MAX} accesses, more than probe exec loads");
        }
    }
    Ok(Workload { pages, fill_accesses, accesses })
}

/// The first line of the trace at `path`, decompressed, without its line end.
fn first_line(path: &Path) -> Result<String> {
    let name = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let mut buffered = BufReader::new(file);
    let magic = buffered.fill_buf().with_context(|| format!("cannot read {name}"))?;
    let reader: Box<dyn Read> = if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(zstd::stream::read::Decoder::with_buffer(buffered).with_context(|| name.to_string())?)
    } else if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    };
    let mut line = Vec::new();
    BufReader::new(reader.take(HEADER_LINE_BYTES_MAX))
        .read_until(b'\n', &mut line)
        .with_context(|| format!("cannot read {name}"))?;
    Ok(String::from_utf8_lossy(&line).trim_end().to_string())
}

/// The header's `fill_accesses=N`: `None` when the line is no header or does not say.
fn fill_accesses(line: &str) -> Result<Option<u64>> {
    let value =
        swapsim_trace_formats::text::header_value(line, "fill_accesses").map_err(anyhow::Error::msg)?;
    value
        .map(|v| v.parse().map_err(|_| anyhow::anyhow!("fill_accesses=\"{v}\" is not a whole number")))
        .transpose()
}

/// Performs `workload` on `memory`, a region of at least `workload.pages` pages of words.
pub(crate) fn perform(memory: &mut [u64], workload: &Workload, class: ContentClass) -> Timing {
    assert!(memory.len() as u64 >= workload.pages * PAGE_WORDS as u64, "the region holds every page");
    let n_accesses = workload.accesses.len();
    let fill_end = workload.fill_accesses.map(|n| usize::try_from(n).unwrap_or(usize::MAX).min(n_accesses));
    let mut touched = vec![0u64; usize::try_from(workload.pages.div_ceil(64)).expect("a mapped region")];
    let mut n_touched = 0u64;
    let start = Instant::now();
    let mut fill_s = (fill_end == Some(0) || workload.pages == 0).then_some(0.0);
    let mut checksum = 0u64;
    for (access_idx, access) in workload.accesses.iter().enumerate() {
        let page = access.page();
        let page_idx = usize::try_from(page).expect("a page of the mapped region");
        let words = &mut memory[page_idx * PAGE_WORDS..(page_idx + 1) * PAGE_WORDS];
        let bit = 1u64 << (page % 64);
        if touched[page_idx / 64] & bit == 0 {
            touched[page_idx / 64] |= bit;
            n_touched += 1;
            fill_page(words, class, page);
        } else if access.is_write() {
            // SAFETY: a valid, aligned word of the region; volatile so that the store is made.
            unsafe { std::ptr::write_volatile(&mut words[0], stamp(page)) };
        } else {
            // SAFETY: as above; volatile so that the load is made.
            checksum = checksum.wrapping_add(unsafe { std::ptr::read_volatile(&words[0]) });
        }
        if fill_s.is_none() {
            let filled = match fill_end {
                Some(end) => access_idx + 1 == end,
                None => n_touched == workload.pages,
            };
            if filled {
                fill_s = Some(start.elapsed().as_secs_f64());
            }
        }
    }
    std::hint::black_box(checksum);
    let total_s = start.elapsed().as_secs_f64();
    Timing { fill_s: fill_s.unwrap_or(total_s), total_s, accesses: n_accesses as u64 }
}

/// The stamp in the first word of `page`: unique and never zero.
fn stamp(page: u64) -> u64 {
    STAMP_TAG | (page + 1)
}

/// Fills one page's words with `class`, then stamps it.
pub(crate) fn fill_page(words: &mut [u64], class: ContentClass, page: u64) {
    let mut state = page.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    let half = words.len() / 2;
    for (word_idx, word) in words.iter_mut().enumerate() {
        *word = match class {
            ContentClass::Random => splitmix64(&mut state),
            ContentClass::Half if word_idx < half => splitmix64(&mut state),
            ContentClass::Half => HALF_CONSTANT,
            ContentClass::Text => text_word(word_idx),
            ContentClass::Zero => 0,
        };
    }
    words[0] = stamp(page);
}

/// The eight bytes of the repeated text at word `word_idx` of a page.
fn text_word(word_idx: usize) -> u64 {
    let mut bytes = [0u8; 8];
    for (byte_idx, byte) in bytes.iter_mut().enumerate() {
        *byte = TEXT[(word_idx * 8 + byte_idx) % TEXT.len()];
    }
    u64::from_le_bytes(bytes)
}

/// One step of splitmix64: cheap, well-mixed words for page contents (not for statistics).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Pins this process to `cpu`.
fn pin_to_cpu(cpu: usize) -> Result<()> {
    let set_size = std::mem::size_of::<libc::cpu_set_t>();
    if cpu >= set_size * 8 {
        bail!("--cpu {cpu}: CPU numbers go up to {}", set_size * 8 - 1);
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET stays within it (checked above);
    // sched_setaffinity reads `set_size` bytes of it.
    let res = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, set_size, &set)
    };
    if res != 0 {
        bail!("cannot pin this process to CPU {cpu}: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// An anonymous private mapping aligned to [`ALIGN_BYTES`], unmapped on drop.
struct Region {
    /// Where the mapping starts (unaligned) and its length, for `munmap`.
    mapping: *mut libc::c_void,
    mapping_bytes: usize,
    /// The aligned start and the region's length.
    start: *mut u64,
    bytes: usize,
}

impl Region {
    fn map(pages: u64, thp: ThpHint) -> Result<Region> {
        let bytes = usize::try_from(pages)
            .ok()
            .and_then(|pages| pages.checked_mul(PAGE_BYTES))
            .filter(|&bytes| bytes > 0)
            .with_context(|| format!("a region of {pages} pages cannot be mapped"))?;
        let mapping_bytes = bytes + ALIGN_BYTES;
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let mapping = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapping_bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if mapping == libc::MAP_FAILED {
            bail!("cannot map a region of {bytes} bytes: {}", std::io::Error::last_os_error());
        }
        let offset = (ALIGN_BYTES - mapping as usize % ALIGN_BYTES) % ALIGN_BYTES;
        // SAFETY: `offset` < ALIGN_BYTES, so the region lies inside the mapping.
        let start = unsafe { mapping.cast::<u8>().add(offset) }.cast::<u64>();
        let region = Region { mapping, mapping_bytes, start, bytes };
        let advice = match thp {
            ThpHint::Nohugepage => Some(libc::MADV_NOHUGEPAGE),
            ThpHint::Hugepage => Some(libc::MADV_HUGEPAGE),
            ThpHint::Default => None,
        };
        if let Some(advice) = advice {
            // SAFETY: advice on the region this process just mapped.
            if unsafe { libc::madvise(start.cast(), bytes, advice) } != 0 {
                bail!("madvise({thp:?}) failed: {}", std::io::Error::last_os_error());
            }
        }
        Ok(region)
    }

    fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: the region is mapped readable and writable, aligned, owned by `self`, and
        // lives as long as the borrow.
        unsafe { std::slice::from_raw_parts_mut(self.start, self.bytes / 8) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping `map` made; nothing borrows it any more.
        unsafe { libc::munmap(self.mapping, self.mapping_bytes) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(pages: u64, fill_accesses: Option<u64>, accesses: &[(u64, bool)]) -> Workload {
        let accesses = accesses.iter().map(|&(page, write)| Access::new(page, write)).collect();
        Workload { pages, fill_accesses, accesses }
    }

    /// A scratch file, removed when dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            // A file left behind by a failed removal is harmless: the next run replaces it.
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn scratch_file(name: &str, bytes: &[u8]) -> Scratch {
        let path = std::env::temp_dir().join(format!("swapsim-exec-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).expect("a scratch file");
        Scratch(path)
    }

    #[test]
    fn fill_accesses_is_read_from_the_header_past_quoted_values() {
        let line = r#"# gtwork pages=4 format="<R|W> <page_index>" fill_accesses=4"#;
        assert_eq!(fill_accesses(line).expect("a number"), Some(4));
        assert_eq!(fill_accesses("# pages=4 fill_accesses=4").expect("a number"), Some(4));
        assert_eq!(fill_accesses("# pages=4").expect("absent"), None);
        assert_eq!(fill_accesses("R 1").expect("no header"), None);
        let err = fill_accesses("# fill_accesses=x1").expect_err("not a number");
        assert_eq!(err.to_string(), "fill_accesses=\"x1\" is not a whole number");
    }

    #[test]
    fn load_reads_plain_and_zstd_traces() {
        let text =
            "# gtwork pages=3 fill_accesses=3 format=\"<R|W> <page_index>\"\nW 0\nW 1\nW 2\nR 1\nW 2\n";
        let plain = scratch_file("plain.trace", text.as_bytes());
        let compressed = zstd::stream::encode_all(text.as_bytes(), 3).expect("compressing in memory");
        let zstd = scratch_file("packed.trace.zst", &compressed);
        for path in [plain, zstd] {
            let workload = load(&path.0).expect("a good trace");
            assert_eq!(workload.pages, 3);
            assert_eq!(workload.fill_accesses, Some(3));
            let got: Vec<(u64, bool)> = workload.accesses.iter().map(|a| (a.page(), a.is_write())).collect();
            assert_eq!(got, [(0, true), (1, true), (2, true), (1, false), (2, true)]);
        }
    }

    #[test]
    fn load_names_the_file_line_and_field_of_a_bad_trace() {
        let no_pages = scratch_file("no-pages.trace", b"# gtwork\nW 0\n");
        let err = format!("{:#}", load(&no_pages.0).expect_err("no pages="));
        assert!(err.contains("no-pages.trace: line 1: the header declares no pages=N"), "{err}");
        let bad_op = scratch_file("bad-op.trace", b"# pages=2\nW 0\nX 1\n");
        let err = format!("{:#}", load(&bad_op.0).expect_err("a bad line"));
        assert!(err.contains("bad-op.trace") && err.contains("line 3"), "{err}");
        let beyond = scratch_file("beyond.trace", b"# pages=2\nW 0\nR 2\n");
        let err = format!("{:#}", load(&beyond.0).expect_err("a page past the region"));
        assert!(err.contains("beyond.trace") && err.contains("line 3"), "{err}");
        let bad_fill = scratch_file("bad-fill.trace", b"# pages=2 fill_accesses=two\nW 0\n");
        let err = format!("{:#}", load(&bad_fill.0).expect_err("a bad fill_accesses"));
        assert!(err.contains("bad-fill.trace: line 1: fill_accesses=\"two\" is not a whole number"), "{err}");
        let missing = std::env::temp_dir().join("swapsim-exec-no-such-dir/none.trace");
        let err = format!("{:#}", load(&missing).expect_err("no file"));
        assert!(err.contains("cannot open") && err.contains("none.trace"), "{err}");
    }

    #[test]
    fn every_class_is_stamped_and_shaped() {
        let mut words = vec![0u64; PAGE_WORDS];
        fill_page(&mut words, ContentClass::Zero, 7);
        assert_eq!(words[0], STAMP_TAG | 8);
        assert!(words[1..].iter().all(|&w| w == 0));
        fill_page(&mut words, ContentClass::Half, 7);
        assert!(words[PAGE_WORDS / 2..].iter().all(|&w| w == HALF_CONSTANT));
        let distinct: std::collections::BTreeSet<u64> = words[1..PAGE_WORDS / 2].iter().copied().collect();
        assert_eq!(distinct.len(), PAGE_WORDS / 2 - 1, "the random half has no repeats");
        fill_page(&mut words, ContentClass::Text, 7);
        let bytes: Vec<u8> = words[1..].iter().flat_map(|w| w.to_le_bytes()).collect();
        assert!(bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' '), "printable text");
        let mut other = vec![0u64; PAGE_WORDS];
        fill_page(&mut words, ContentClass::Random, 7);
        fill_page(&mut other, ContentClass::Random, 8);
        assert_ne!(words[1..], other[1..], "pages differ");
        assert_eq!(other[0], STAMP_TAG | 9);
    }

    #[test]
    fn perform_fills_on_first_touch_and_keeps_contents_on_later_accesses() {
        let mut memory = vec![0u64; 3 * PAGE_WORDS];
        let work = workload(3, None, &[(2, false), (0, true), (2, true), (1, false), (0, false)]);
        let timing = perform(&mut memory, &work, ContentClass::Half);
        assert_eq!(timing.accesses, 5);
        assert!(timing.fill_s <= timing.total_s);
        for page in 0..3u64 {
            let mut expected = vec![0u64; PAGE_WORDS];
            fill_page(&mut expected, ContentClass::Half, page);
            let at = page as usize * PAGE_WORDS;
            assert_eq!(memory[at..at + PAGE_WORDS], expected[..], "page {page}");
        }
    }

    #[test]
    fn a_region_never_fully_touched_ends_its_fill_at_the_end() {
        let mut memory = vec![0u64; 4 * PAGE_WORDS];
        let timing = perform(&mut memory, &workload(4, None, &[(0, true), (1, false)]), ContentClass::Zero);
        assert_eq!(timing.fill_s, timing.total_s);
        assert!(memory[2 * PAGE_WORDS..].iter().all(|&w| w == 0), "untouched pages stay unfilled");
        let timing = perform(&mut memory, &workload(4, Some(0), &[(0, true)]), ContentClass::Zero);
        assert_eq!(timing.fill_s, 0.0);
    }
}
