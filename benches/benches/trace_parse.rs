//! Parse rates of the text readers, in lines per second, on generated in-memory traces.
//!
//! Each input is generated from a fixed seed, read through `open` with the format named
//! (so detection is not measured, decompression is not involved), and the record count is
//! checked once so that a broken code path cannot post a fast time.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::io::Cursor;
use std::sync::Arc;
use swapsim_trace_formats::{open, Format, OpenOptions};

const LINES: u64 = 200_000;

/// A small deterministic generator (xorshift64*), enough for varied addresses.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn generate(format: Format) -> String {
    let mut generator = Generator(0x5eed);
    let mut out = String::new();
    let mut time_us: u64 = 2_364_742_742;
    for _ in 0..LINES {
        let random = generator.next();
        let address = 0x7f00_0000_0000 + (random % (1 << 30)) * 8;
        let write = random >> 63 == 1;
        let tid = 14561 + (random >> 40) % 4;
        time_us += random % 7;
        let time = format!("{}.{:06}", time_us / 1_000_000, time_us % 1_000_000);
        out += &match format {
            Format::PerfScript => format!(
                "         python3 14561/{tid} [001]  {time}: exceptions:page_fault_user: address={address:#x} ip=0x7f1f04a0c7ad error_code={:#x}\n",
                if write { 6 } else { 4 }
            ),
            Format::Ftrace => format!(
                "         python3-{tid}   [001] d....  {time}: page_fault_user: address={address:#x} ip=0x7f1f04a0c7ad error_code={:#x}\n",
                if write { 6 } else { 4 }
            ),
            Format::Lackey => format!(" {} {:x},8\n", if write { "S" } else { "L" }, address),
            Format::Text => format!("{} {}\n", if write { "W" } else { "R" }, (address >> 12) % (1 << 30)),
            Format::Native
            | Format::OracleGeneral
            | Format::Lcs
            | Format::LibCacheSimTxt
            | Format::LibCacheSimCsv => unreachable!("not a format this benchmark writes"),
        };
    }
    out
}

fn count_records(input: &Arc<[u8]>, format: Format) -> u64 {
    let options = OpenOptions { format: Some(format), ..OpenOptions::default() };
    let mut source = open(Box::new(Cursor::new(Arc::clone(input))), options).expect("generated input opens");
    let mut n_records = 0;
    while let Some(record) = source.next_record().expect("generated input parses") {
        black_box(record);
        n_records += 1;
    }
    n_records
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(LINES));
    group.sample_size(20);
    for format in [Format::PerfScript, Format::Ftrace, Format::Lackey, Format::Text] {
        let input: Arc<[u8]> = generate(format).into_bytes().into();
        assert_eq!(count_records(&input, format), LINES, "{}", format.name());
        group.bench_function(format!("{}/lines={LINES}", format.name()), |b| {
            b.iter(|| count_records(black_box(&input), format))
        });
    }
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
