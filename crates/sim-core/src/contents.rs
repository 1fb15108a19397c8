//! Page contents, and how small each of zswap's compressors makes them.
//!
//! What a page holds decides how well it compresses, and so how much of the compressed pool
//! it takes. A region of memory is given a [`Contents`] class; for each [`Compressor`] and
//! class a measured table gives the distribution of the compressed size of one 4 KiB page.
//! [`compressed_len`] draws one page's size from it, as a fixed function of a per-page key,
//! so a run stays a pure function of its inputs.
//!
//! # Classes
//! - `random`: random bytes. Nothing compresses; every compressor's output is a little longer
//!   than the page (4106 to 4149 bytes).
//! - `half`: 2048 random bytes followed by 2048 copies of one non-zero byte: the contents of
//!   the real-kernel validation workload ("half random, half constant, compresses about 2:1").
//! - `text`: real text. Pages are aligned 4 KiB pieces of two corpora found on the machine the
//!   tables were measured on, 2048 pages from each: English prose (the copyright files of the
//!   installed Debian packages under `/usr/share/doc` and the licences in
//!   `/usr/share/common-licenses`, 17.3 MB) and program source (the Python 3.11 standard
//!   library's `.py` files under `/usr/lib/python3.11`, 11.3 MB).
//! - `zero`: all zero bytes. Such a page never reaches zswap: the swap layer finds it zero
//!   filled first and records it in the swap device's zero map without storing anything, so
//!   its compressed length is 0 and its compressor cost is 0.
//! - `sizes`: a table of (compressed size, weight) given by the scenario, the same for every
//!   compressor.
//!
//! # Where the tables come from
//! `crates/sim-core/tools/measure_compressors.py` (run it to regenerate them) compressed 4096
//! pages of each class with the userspace libraries closest to the kernel's code, called with
//! the kernel crypto API's settings: python-lzo 1.15 on LZO 2.10 (`lzo1x_1_compress`, raw
//! stream), the lz4 package on liblz4 1.9.4 (`LZ4_compress_default`, acceleration 1), the
//! zstandard package on zstd 1.5.7 (level 3 with the parameters for 256 KiB inputs, which is
//! what `crypto/zstd.c` asks for, content size written) and Python's zlib 1.2.13 (raw
//! deflate, 2 KiB window: window bits 11, memLevel 8, the default level, as
//! `crypto/deflate.c`). Seed 6180; x86-64, 2 cores.
//!
//! Each table holds 65 points: the smallest size seen, the sample quantiles at 1/64 .. 63/64,
//! and the largest. A draw picks a point between two neighbours by linear interpolation, so
//! it follows the measured distribution without repeating a handful of values.
//!
//! Simplified:
//! - The kernel's compressors are separate implementations of the same formats. Its LZO
//!   (`lib/lzo`) hashes into 2^13 dictionary entries where userspace LZO1X-1 uses 2^14, its
//!   LZ4 and zlib are older releases, its zstd is 1.5.6. On random and half pages the
//!   output is the same size to within a few bytes; on text it may differ by a few percent.
//! - `lzo-rle` has no userspace library. It is the kernel's LZO with runs of zero bytes coded
//!   as runs, and its stream starts with a two-byte version marker. No class here holds a
//!   run of zeros (`zero` pages never get this far, and 4 zero bytes in a row inside random
//!   data are too rare to matter), so its output is LZO's plus those 2 bytes. On real memory
//!   with zero runs (sparse arrays, padding) lzo-rle does better than this says.
//! - One page's draw uses the same quantile for every compressor, so a page that compresses
//!   well under one compresses well under all of them.
//!
//! # CPU costs
//! [`Compressor::compress_ns`] and [`Compressor::decompress_ns`] are the same script's
//! timings of those userspace libraries on the 2-core VM the project is developed on, the
//! fastest of nine passes over the 4096 pages, Python's call overhead subtracted: rough
//! defaults, not a model of any CPU. The kernel's code is close in speed to these
//! libraries; the kernel's deflate resets its stream per page where the script built a new
//! one (about 3 us of the deflate figure). lzo-rle takes lzo's figures.

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// Bytes in a page, as the tables count them.
const PAGE_BYTES: u32 = 4096;

/// Bytes lzo-rle's stream adds in front of LZO's: the marker and the bitstream version.
const LZO_RLE_MARKER_BYTES: u32 = 2;

/// The compressors zswap can use (serde/TOML names: "lzo", "lzo-rle", "lz4", "zstd",
/// "deflate"). The default, lzo, is the kernel's `CONFIG_ZSWAP_COMPRESSOR_DEFAULT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compressor {
    /// LZO1X-1.
    #[default]
    Lzo,
    /// The kernel's LZO with run-length coding of zero runs.
    LzoRle,
    /// LZ4, default acceleration.
    Lz4,
    /// Zstandard, level 3.
    Zstd,
    /// Raw deflate with a 2 KiB window, default level.
    Deflate,
}

impl Compressor {
    /// Every compressor, in declaration order.
    pub const ALL: [Compressor; 5] =
        [Compressor::Lzo, Compressor::LzoRle, Compressor::Lz4, Compressor::Zstd, Compressor::Deflate];

    /// The kernel's name, as written to zswap's `compressor` parameter.
    pub fn name(self) -> &'static str {
        match self {
            Compressor::Lzo => "lzo",
            Compressor::LzoRle => "lzo-rle",
            Compressor::Lz4 => "lz4",
            Compressor::Zstd => "zstd",
            Compressor::Deflate => "deflate",
        }
    }

    /// CPU time to compress one 4 KiB page of `contents`, in nanoseconds. 0 for `zero`
    /// (never compressed). A `sizes` table is priced by its mean compressed size, between the
    /// measured classes whose means bracket it (see [`Compressor::decompress_ns`]).
    pub fn compress_ns(self, contents: &Contents) -> u64 {
        self.cost_ns(contents, |pair| pair.0)
    }

    /// CPU time to decompress one page of `contents`, in nanoseconds; 0 for `zero`.
    ///
    /// For `random` this is the library's time to unpack its own incompressible output. A
    /// kernel that stores such a page uncompressed copies it instead (zswap in 6.18 keeps a
    /// page that does not shrink below `PAGE_SIZE` as it is, when the memory cgroup allows
    /// writeback); the caller decides which applies. A `sizes` table's cost is interpolated linearly in its mean compressed size
    /// between the two measured classes around it (text, half, random have increasing
    /// means), and clamped to the end classes outside them.
    pub fn decompress_ns(self, contents: &Contents) -> u64 {
        self.cost_ns(contents, |pair| pair.1)
    }

    fn cost_ns(self, contents: &Contents, pick: fn((u32, u32)) -> u32) -> u64 {
        let costs = &self.tables().ns;
        match contents {
            Contents::Zero => 0,
            Contents::Random => u64::from(pick(costs[RANDOM])),
            Contents::Half => u64::from(pick(costs[HALF])),
            Contents::Text => u64::from(pick(costs[TEXT])),
            Contents::Sizes(table) => {
                let means = &self.tables().mean;
                // Classes in order of increasing mean size.
                let order = [TEXT, HALF, RANDOM];
                let x = table.mean_len();
                let first = order[0];
                if x <= f64::from(means[first]) {
                    return u64::from(pick(costs[first]));
                }
                for pair in order.windows(2) {
                    let (lo, hi) = (pair[0], pair[1]);
                    let (x0, x1) = (f64::from(means[lo]), f64::from(means[hi]));
                    if x <= x1 {
                        let (y0, y1) = (f64::from(pick(costs[lo])), f64::from(pick(costs[hi])));
                        let t = if x1 > x0 { (x - x0) / (x1 - x0) } else { 1.0 };
                        return (y0 + (y1 - y0) * t).round() as u64;
                    }
                }
                u64::from(pick(costs[RANDOM]))
            }
        }
    }

    fn tables(self) -> &'static CompressorTables {
        match self {
            Compressor::Lzo | Compressor::LzoRle => &LZO,
            Compressor::Lz4 => &LZ4,
            Compressor::Zstd => &ZSTD,
            Compressor::Deflate => &DEFLATE,
        }
    }

    /// Bytes this compressor adds to the measured table's size for every page.
    fn extra_bytes(self) -> u32 {
        if self == Compressor::LzoRle {
            LZO_RLE_MARKER_BYTES
        } else {
            0
        }
    }
}

/// What a region's pages hold. TOML: `contents = "random"` (or `"half"`, `"text"`, `"zero"`),
/// or `contents = { sizes = [[1200, 3], [2300, 1]] }`.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Contents {
    /// Random bytes: incompressible.
    #[default]
    Random,
    /// First half random, second half one constant non-zero byte: about 2:1.
    Half,
    /// English prose and program source.
    Text,
    /// All zero bytes: caught by the swap layer's zero-page check, never compressed.
    Zero,
    /// Compressed sizes given directly, with weights, for every compressor.
    Sizes(SizeTable),
}

impl Contents {
    /// Whether every page is zero filled (and so never stored by zswap).
    pub fn is_zero(&self) -> bool {
        matches!(self, Contents::Zero)
    }

    /// Checks a `sizes` table: at least one entry, sizes in 1..=4096, weights above 0. An
    /// error names `<field>.sizes` and the entry: `regions.contents.sizes: entry 1: size 0 is
    /// outside 1..=4096`.
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let Contents::Sizes(table) = self else { return Ok(()) };
        let bad = |message: String| Err(ConfigError::Invalid { field: format!("{field}.sizes"), message });
        if table.entries.is_empty() {
            return bad("the table is empty; expected at least one [size, weight] entry".to_string());
        }
        for (i, &(size, weight)) in table.entries.iter().enumerate() {
            if !(1..=PAGE_BYTES).contains(&size) {
                return bad(format!("entry {i}: size {size} is outside 1..={PAGE_BYTES}"));
            }
            if weight == 0 {
                return bad(format!("entry {i}: weight 0 is not positive"));
            }
        }
        Ok(())
    }
}

/// A weighted table of compressed sizes, `[[size, weight], ...]` in TOML. Built from its
/// entries; the running weight totals for drawing are derived once, here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "Vec<(u32, u32)>", into = "Vec<(u32, u32)>")]
pub struct SizeTable {
    entries: Vec<(u32, u32)>,
    /// `cumulative[i]`: the weights of entries 0..=i added up.
    cumulative: Vec<u64>,
}

impl SizeTable {
    /// A table of (compressed size in bytes, weight) entries. Not checked here: see
    /// [`Contents::validate`].
    pub fn new(entries: Vec<(u32, u32)>) -> SizeTable {
        let mut total = 0u64;
        let cumulative = entries
            .iter()
            .map(|&(_, weight)| {
                total += u64::from(weight);
                total
            })
            .collect();
        SizeTable { entries, cumulative }
    }

    /// The (size, weight) entries as given.
    pub fn entries(&self) -> &[(u32, u32)] {
        &self.entries
    }

    /// The weighted mean size; a full page for a table with no weight.
    pub fn mean_len(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return f64::from(PAGE_BYTES);
        }
        let sum: f64 = self.entries.iter().map(|&(s, w)| f64::from(s) * f64::from(w)).sum();
        sum / total as f64
    }

    fn total(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// The entry whose weight interval holds `u` scaled to the total weight. A table with no
    /// weight (invalid) gives a full page.
    fn draw(&self, u: u64) -> u32 {
        let total = self.total();
        if total == 0 {
            return PAGE_BYTES;
        }
        let r = ((u128::from(u) * u128::from(total)) >> 64) as u64;
        let i = self.cumulative.partition_point(|&c| c <= r);
        self.entries[i].0
    }
}

impl From<Vec<(u32, u32)>> for SizeTable {
    fn from(entries: Vec<(u32, u32)>) -> SizeTable {
        SizeTable::new(entries)
    }
}

impl From<SizeTable> for Vec<(u32, u32)> {
    fn from(table: SizeTable) -> Vec<(u32, u32)> {
        table.entries
    }
}

/// The compressed length in bytes of one page of `contents` under `compressor`, a fixed
/// function of `key` (a per-page value the caller supplies, e.g. a hash of the page's
/// identity and how many times it was written: the same key gives the same length).
///
/// The key is scrambled, so consecutive keys give unrelated draws, and the result is read
/// as a quantile of the measured table. `zero` gives 0. `random` gives the real measured
/// length, 4106 to 4149 bytes: anything of `PAGE_SIZE` (4096) or more means the page does
/// not compress below a page. A `sizes` table gives one of its sizes, with probability
/// proportional to its weight. A table lookup; nothing is allocated.
pub fn compressed_len(compressor: Compressor, contents: &Contents, key: u64) -> u32 {
    let u = scramble(key);
    let class = match contents {
        Contents::Zero => return 0,
        Contents::Sizes(table) => return table.draw(u),
        Contents::Random => RANDOM,
        Contents::Half => HALF,
        Contents::Text => TEXT,
    };
    quantile(compressor.tables().sizes[class], u) + compressor.extra_bytes()
}

/// The mean compressed length of a page of `contents` under `compressor`, in bytes, over
/// the distribution [`compressed_len`] draws from.
pub fn mean_compressed_len(compressor: Compressor, contents: &Contents) -> f64 {
    let class = match contents {
        Contents::Zero => return 0.0,
        Contents::Sizes(table) => return table.mean_len(),
        Contents::Random => RANDOM,
        Contents::Half => HALF,
        Contents::Text => TEXT,
    };
    f64::from(compressor.tables().mean[class] + compressor.extra_bytes())
}

/// A bijective 64-bit scramble (a SplitMix64 step: add the golden-ratio increment, then
/// two xor-shift-multiply rounds and a final xor-shift).
fn scramble(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Number of intervals between a table's points.
const BINS: usize = 64;
const BIN_BITS: u32 = BINS.trailing_zeros();

/// A measured size distribution: the minimum, the quantiles at i/64, the maximum.
type Quantiles = [u16; BINS + 1];

/// Reads `u` as a uniform draw: its top 6 bits pick the interval, the next 32 bits the place
/// within it.
fn quantile(table: &Quantiles, u: u64) -> u32 {
    let bin = (u >> (64 - BIN_BITS)) as usize;
    let frac = (u >> (64 - BIN_BITS - 32)) & 0xffff_ffff;
    let (lo, hi) = (u64::from(table[bin]), u64::from(table[bin + 1]));
    (lo + (((hi - lo) * frac) >> 32)) as u32
}

/// The mean of the piecewise-linear distribution a table describes, rounded down.
const fn table_mean(table: &Quantiles) -> u32 {
    let mut sum = 0u32;
    let mut i = 0;
    while i < BINS {
        sum += table[i] as u32 + table[i + 1] as u32;
        i += 1;
    }
    sum / (2 * BINS as u32)
}

const RANDOM: usize = 0;
const HALF: usize = 1;
const TEXT: usize = 2;

/// One compressor's measurements, indexed by class (`RANDOM`, `HALF`, `TEXT`).
struct CompressorTables {
    sizes: [&'static Quantiles; 3],
    mean: [u32; 3],
    /// (compress ns, decompress ns) per page.
    ns: [(u32, u32); 3],
}

const fn tables(sizes: [&'static Quantiles; 3], ns: [(u32, u32); 3]) -> CompressorTables {
    CompressorTables { mean: [table_mean(sizes[0]), table_mean(sizes[1]), table_mean(sizes[2])], sizes, ns }
}

static LZO: CompressorTables = tables([&LZO_RANDOM, &LZO_HALF, &LZO_TEXT], LZO_NS);
static LZ4: CompressorTables = tables([&LZ4_RANDOM, &LZ4_HALF, &LZ4_TEXT], LZ4_NS);
static ZSTD: CompressorTables = tables([&ZSTD_RANDOM, &ZSTD_HALF, &ZSTD_TEXT], ZSTD_NS);
static DEFLATE: CompressorTables = tables([&DEFLATE_RANDOM, &DEFLATE_HALF, &DEFLATE_TEXT], DEFLATE_NS);

// Measured by tools/measure_compressors.py (defaults: 4096 pages per class, seed 6180, nine
// timing passes). Sample means in bytes, for reference: lzo 4116 / 2213 / 1806.2, lz4 4114 /
// 2082 / 1885.5, zstd 4106 / 2075 / 1289.2, deflate 4140.7 / 2110.5 / 1248.1 (random / half /
// text).

/// (compress ns, decompress ns) per page: random, half, text.
const LZO_NS: [(u32, u32); 3] = [(1424, 843), (1481, 784), (8688, 6730)];
const LZ4_NS: [(u32, u32); 3] = [(2532, 967), (2267, 1107), (9147, 2069)];
const ZSTD_NS: [(u32, u32); 3] = [(5465, 950), (6072, 1323), (21970, 8317)];
const DEFLATE_NS: [(u32, u32); 3] = [(106706, 17200), (92220, 15120), (96467, 15381)];

const LZO_RANDOM: Quantiles = [4116; BINS + 1];
const LZO_HALF: Quantiles = [2213; BINS + 1];
const LZO_TEXT: Quantiles = [
    443, 714, 805, 870, 912, 954, 1007, 1048, 1087, 1133, 1170, 1197, 1241, 1280, 1318, 1358, 1391, 1429,
    1465, 1501, 1537, 1567, 1595, 1627, 1661, 1692, 1720, 1748, 1774, 1803, 1828, 1852, 1873, 1898, 1922,
    1943, 1964, 1983, 2002, 2018, 2037, 2057, 2078, 2097, 2119, 2141, 2165, 2189, 2209, 2230, 2247, 2269,
    2298, 2330, 2366, 2404, 2439, 2475, 2513, 2557, 2608, 2658, 2706, 2772, 3355,
];
const LZ4_RANDOM: Quantiles = [4114; BINS + 1];
const LZ4_HALF: Quantiles = [
    2081, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082,
    2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082,
    2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082,
    2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082, 2082,
];
const LZ4_TEXT: Quantiles = [
    442, 702, 799, 861, 917, 963, 1014, 1070, 1116, 1158, 1209, 1247, 1292, 1339, 1386, 1423, 1458, 1489,
    1532, 1565, 1599, 1628, 1661, 1694, 1731, 1766, 1796, 1828, 1859, 1889, 1915, 1940, 1964, 1992, 2013,
    2030, 2055, 2078, 2099, 2120, 2134, 2162, 2182, 2204, 2225, 2251, 2276, 2302, 2325, 2341, 2364, 2389,
    2416, 2449, 2481, 2518, 2563, 2595, 2632, 2675, 2720, 2763, 2817, 2884, 3321,
];
const ZSTD_RANDOM: Quantiles = [4106; BINS + 1];
const ZSTD_HALF: Quantiles = [
    2067, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075,
    2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075,
    2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075,
    2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075, 2075,
];
const ZSTD_TEXT: Quantiles = [
    315, 477, 540, 585, 619, 651, 687, 717, 742, 767, 795, 825, 851, 881, 910, 936, 968, 1000, 1035, 1060,
    1088, 1115, 1138, 1162, 1187, 1210, 1230, 1252, 1275, 1295, 1316, 1332, 1349, 1369, 1386, 1401, 1414,
    1429, 1441, 1454, 1469, 1486, 1499, 1513, 1530, 1543, 1559, 1576, 1588, 1606, 1624, 1641, 1662, 1681,
    1706, 1728, 1753, 1787, 1815, 1851, 1883, 1922, 1961, 2003, 2372,
];
const DEFLATE_RANDOM: Quantiles = [
    4133, 4136, 4136, 4137, 4137, 4137, 4138, 4138, 4138, 4138, 4138, 4139, 4139, 4139, 4139, 4139, 4139,
    4139, 4139, 4139, 4140, 4140, 4140, 4140, 4140, 4140, 4140, 4140, 4140, 4140, 4140, 4141, 4141, 4141,
    4141, 4141, 4141, 4141, 4141, 4141, 4141, 4141, 4142, 4142, 4142, 4142, 4142, 4142, 4142, 4142, 4142,
    4143, 4143, 4143, 4143, 4143, 4143, 4144, 4144, 4144, 4144, 4145, 4145, 4146, 4149,
];
const DEFLATE_HALF: Quantiles = [
    2105, 2107, 2108, 2108, 2108, 2108, 2108, 2108, 2109, 2109, 2109, 2109, 2109, 2109, 2109, 2109, 2109,
    2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2110, 2111, 2111,
    2111, 2111, 2111, 2111, 2111, 2111, 2111, 2111, 2111, 2111, 2111, 2111, 2111, 2112, 2112, 2112, 2112,
    2112, 2112, 2112, 2112, 2112, 2112, 2113, 2113, 2113, 2113, 2113, 2114, 2114, 2118,
];
const DEFLATE_TEXT: Quantiles = [
    278, 436, 492, 530, 561, 596, 630, 666, 695, 729, 757, 788, 815, 849, 877, 910, 934, 962, 986, 1018,
    1039, 1063, 1088, 1111, 1137, 1163, 1182, 1203, 1223, 1241, 1259, 1279, 1298, 1317, 1332, 1348, 1363,
    1378, 1388, 1404, 1424, 1438, 1454, 1469, 1484, 1501, 1517, 1532, 1548, 1566, 1584, 1602, 1627, 1651,
    1674, 1709, 1738, 1773, 1799, 1839, 1878, 1908, 1940, 1990, 2271,
];

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [Contents; 3] = [Contents::Random, Contents::Half, Contents::Text];

    fn mean_of(c: Compressor, contents: &Contents, n: u64) -> f64 {
        (0..n).map(|k| f64::from(compressed_len(c, contents, k))).sum::<f64>() / n as f64
    }

    #[test]
    fn names_match_serde() {
        for c in Compressor::ALL {
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.name()));
            let back: Compressor = serde_json::from_str(&format!("\"{}\"", c.name())).unwrap();
            assert_eq!(back, c);
        }
        assert_eq!(Compressor::default(), Compressor::Lzo);
    }

    #[test]
    fn draws_are_deterministic_and_vary_with_the_key() {
        for c in Compressor::ALL {
            for contents in &KINDS {
                let a: Vec<u32> = (0..64).map(|k| compressed_len(c, contents, k)).collect();
                let b: Vec<u32> = (0..64).map(|k| compressed_len(c, contents, k)).collect();
                assert_eq!(a, b);
            }
            let text: std::collections::BTreeSet<u32> =
                (0..256).map(|k| compressed_len(c, &Contents::Text, k)).collect();
            assert!(text.len() > 100, "{}: only {} distinct text sizes", c.name(), text.len());
        }
    }

    #[test]
    fn random_pages_never_compress_below_a_page() {
        for c in Compressor::ALL {
            for k in 0..10_000 {
                assert!(compressed_len(c, &Contents::Random, k) >= PAGE_BYTES, "{}", c.name());
            }
        }
    }

    #[test]
    fn zero_pages_have_no_length_and_no_cost() {
        assert!(Contents::Zero.is_zero());
        assert!(!Contents::Half.is_zero());
        for c in Compressor::ALL {
            assert_eq!(compressed_len(c, &Contents::Zero, 7), 0);
            assert_eq!(c.compress_ns(&Contents::Zero), 0);
            assert_eq!(c.decompress_ns(&Contents::Zero), 0);
        }
    }

    #[test]
    fn half_pages_under_lzo_take_about_2_1_kib() {
        // Every measured half page came to 2213 bytes under LZO1X-1: the 2048 random bytes as
        // literals, plus the constant run's first ~120 bytes that the compressor's skip-ahead
        // steps over as literals, then one long match.
        let mean = mean_of(Compressor::Lzo, &Contents::Half, 10_000);
        assert!((2150.0..2250.0).contains(&mean), "{mean}");
        assert_eq!(compressed_len(Compressor::LzoRle, &Contents::Half, 3), 2213 + 2);
        for c in Compressor::ALL {
            let mean = mean_of(c, &Contents::Half, 4096);
            assert!((2048.0..2300.0).contains(&mean), "{}: {mean}", c.name());
        }
    }

    #[test]
    fn text_compresses_and_stronger_compressors_do_better() {
        let lzo = mean_of(Compressor::Lzo, &Contents::Text, 20_000);
        let zstd = mean_of(Compressor::Zstd, &Contents::Text, 20_000);
        let deflate = mean_of(Compressor::Deflate, &Contents::Text, 20_000);
        assert!((1700.0..1900.0).contains(&lzo), "{lzo}");
        assert!(zstd < lzo && deflate < lzo, "{zstd} {deflate} {lzo}");
        // The drawn mean follows the table's mean.
        let expect = mean_compressed_len(Compressor::Lzo, &Contents::Text);
        assert!((lzo - expect).abs() < 15.0, "{lzo} vs {expect}");
    }

    #[test]
    fn quantile_interpolates_between_neighbours() {
        let mut t: Quantiles = [0; BINS + 1];
        for (i, v) in t.iter_mut().enumerate() {
            *v = (i * 100) as u16;
        }
        assert_eq!(quantile(&t, 0), 0);
        assert_eq!(quantile(&t, u64::MAX), 6399);
        // Halfway into interval 5.
        assert_eq!(quantile(&t, (5u64 << 58) | (1u64 << 57)), 550);
        assert_eq!(table_mean(&t), 3200);
    }

    #[test]
    fn sizes_draws_follow_the_weights() {
        let table = Contents::Sizes(SizeTable::new(vec![(1200, 3), (2300, 1), (4096, 4)]));
        let n = 80_000u64;
        let mut counts = [0u64; 3];
        for k in 0..n {
            match compressed_len(Compressor::Zstd, &table, k) {
                1200 => counts[0] += 1,
                2300 => counts[1] += 1,
                4096 => counts[2] += 1,
                other => panic!("{other} is not in the table"),
            }
        }
        // Expected 3/8, 1/8, 4/8; a binomial's standard deviation here is under 0.2%.
        for (count, expect) in counts.iter().zip([0.375, 0.125, 0.5]) {
            let share = *count as f64 / n as f64;
            assert!((share - expect).abs() < 0.01, "{counts:?}");
        }
        // Same for every compressor, and the same draw for the same key.
        for k in 0..100 {
            assert_eq!(
                compressed_len(Compressor::Lzo, &table, k),
                compressed_len(Compressor::Deflate, &table, k)
            );
        }
        let Contents::Sizes(t) = &table else { unreachable!() };
        assert!((t.mean_len() - (3.0 * 1200.0 + 2300.0 + 4.0 * 4096.0) / 8.0).abs() < 1e-9);
    }

    #[test]
    fn sizes_costs_sit_between_the_measured_classes() {
        for c in Compressor::ALL {
            let at_half = Contents::Sizes(SizeTable::new(vec![(c.tables().mean[HALF], 1)]));
            assert_eq!(c.compress_ns(&at_half), c.compress_ns(&Contents::Half));
            let tiny = Contents::Sizes(SizeTable::new(vec![(10, 1)]));
            assert_eq!(c.decompress_ns(&tiny), c.decompress_ns(&Contents::Text));
            let huge = Contents::Sizes(SizeTable::new(vec![(4096, 1)]));
            let (lo, hi) = (c.compress_ns(&Contents::Half), c.compress_ns(&Contents::Random));
            let got = c.compress_ns(&huge);
            assert!(got >= lo.min(hi) && got <= lo.max(hi), "{}: {got}", c.name());
        }
    }

    #[test]
    fn validation_names_the_field_and_the_entry() {
        let check =
            |entries: Vec<(u32, u32)>| Contents::Sizes(SizeTable::new(entries)).validate("task.a.contents");
        assert_eq!(check(vec![(1, 1), (4096, 9)]), Ok(()));
        for c in [Contents::Random, Contents::Half, Contents::Text, Contents::Zero] {
            assert_eq!(c.validate("x"), Ok(()));
        }
        let err = check(vec![]).unwrap_err().to_string();
        assert!(err.starts_with("task.a.contents.sizes: ") && err.contains("empty"), "{err}");
        let err = check(vec![(100, 1), (0, 1)]).unwrap_err().to_string();
        assert_eq!(err, "task.a.contents.sizes: entry 1: size 0 is outside 1..=4096");
        let err = check(vec![(4097, 1)]).unwrap_err().to_string();
        assert_eq!(err, "task.a.contents.sizes: entry 0: size 4097 is outside 1..=4096");
        let err = check(vec![(100, 0)]).unwrap_err().to_string();
        assert_eq!(err, "task.a.contents.sizes: entry 0: weight 0 is not positive");
    }

    #[test]
    fn serde_forms_round_trip() {
        // serde_json stands in for TOML: both see the same serde data model, so
        // `contents = "half"` and `contents = { sizes = [[1200, 3], [2300, 1]] }` read alike.
        for (text, value) in [
            ("\"random\"", Contents::Random),
            ("\"half\"", Contents::Half),
            ("\"text\"", Contents::Text),
            ("\"zero\"", Contents::Zero),
            (r#"{"sizes":[[1200,3],[2300,1]]}"#, Contents::Sizes(SizeTable::new(vec![(1200, 3), (2300, 1)]))),
        ] {
            let parsed: Contents = serde_json::from_str(text).unwrap();
            assert_eq!(parsed, value);
            assert_eq!(serde_json::to_string(&value).unwrap(), text);
        }
        assert_eq!(Contents::default(), Contents::Random);
        assert!(serde_json::from_str::<Contents>("\"compressible\"").is_err());
    }
}
