//! Zipf rank samplers (an alias table for small regions, rejection-inversion for large
//! ones) and the keyed bijection that scatters ranks over a region.

use super::draw::{draw_unit, AccessRng};
use crate::rng::SimRng;
use rand::RngCore;
use std::sync::Arc;

/// Largest region, in pages, whose zipf ranks come from an alias table: 1 GiB, a 2 MiB
/// table. Larger regions use rejection-inversion, which needs no memory but costs a
/// logarithm and an exponential per sample. Measured on a machine with 2 MiB of L2 per
/// core, the table is about twice as fast while it stays in cache and slower than
/// rejection-inversion once it spills, because every sample then misses the cache.
pub(super) const ZIPF_TABLE_PAGES_MAX: u64 = 1 << 18;

/// Draws zipf ranks, with a table when the region is small enough to afford one.
#[derive(Clone, Debug)]
pub(super) enum ZipfSampler {
    Table(Arc<AliasTable>),
    Inversion(ZipfInversion),
}

impl ZipfSampler {
    pub(super) fn new(n: u64, exponent: f64) -> ZipfSampler {
        if n <= ZIPF_TABLE_PAGES_MAX {
            ZipfSampler::Table(Arc::new(AliasTable::zipf(n, exponent)))
        } else {
            ZipfSampler::Inversion(ZipfInversion::new(n, exponent))
        }
    }

    /// A rank in `0..n`, 0 being the most popular.
    #[inline]
    pub(super) fn sample(&self, rng: &mut AccessRng) -> u64 {
        match self {
            ZipfSampler::Table(table) => table.sample(rng),
            ZipfSampler::Inversion(inversion) => inversion.sample(rng),
        }
    }
}

/// Walker's alias method (in Vose's construction): each of the n cells holds its own
/// rank, a second rank, and the probability of keeping the first. A sample is one draw,
/// one table read and one comparison.
#[derive(Debug)]
pub(super) struct AliasTable {
    cells: Vec<AliasCell>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct AliasCell {
    /// Keep the cell's own rank when the 32-bit draw is below this; `u32::MAX` also keeps
    /// it on the draw `u32::MAX`, whose probability (2^-32) the table cannot resolve.
    keep_below: u32,
    alias: u32,
}

impl AliasTable {
    /// The table for ranks `0..n` with weights `1 / (rank + 1)^exponent`; n must be at
    /// most [`ZIPF_TABLE_PAGES_MAX`].
    pub(super) fn zipf(n: u64, exponent: f64) -> AliasTable {
        assert!((1..=ZIPF_TABLE_PAGES_MAX).contains(&n), "alias table of {n} ranks");
        let weights: Vec<f64> = (1..=n).map(|rank| (rank as f64).powf(-exponent)).collect();
        let total: f64 = weights.iter().sum();
        // Scaled so that the average cell holds exactly 1.
        let mut scaled: Vec<f64> = weights.iter().map(|weight| weight * n as f64 / total).collect();
        let mut cells: Vec<AliasCell> =
            (0..n as u32).map(|rank| AliasCell { keep_below: u32::MAX, alias: rank }).collect();
        let mut small: Vec<u32> = Vec::new();
        let mut large: Vec<u32> = Vec::new();
        for (rank, &value) in scaled.iter().enumerate() {
            if value < 1.0 {
                small.push(rank as u32);
            } else {
                large.push(rank as u32);
            }
        }
        while let (Some(&small_rank), Some(&large_rank)) = (small.last(), large.last()) {
            small.pop();
            let share = scaled[small_rank as usize];
            cells[small_rank as usize] =
                AliasCell { keep_below: (share * 4_294_967_296.0) as u32, alias: large_rank };
            scaled[large_rank as usize] -= 1.0 - share;
            if scaled[large_rank as usize] < 1.0 {
                large.pop();
                small.push(large_rank);
            }
        }
        // Whatever is left holds 1 up to rounding and keeps its own rank, as initialised.
        AliasTable { cells }
    }

    #[inline]
    pub(super) fn sample(&self, rng: &mut AccessRng) -> u64 {
        let draw = rng.next_u64();
        let n = self.cells.len() as u64;
        let product = u128::from(draw) * u128::from(n);
        let cell = self.cells[(product >> 64) as usize];
        // The low half of the product is the draw's position within its cell, uniform and
        // independent of which cell was picked.
        let within = ((product as u64) >> 32) as u32;
        if within < cell.keep_below || cell.keep_below == u32::MAX {
            (product >> 64) as u64
        } else {
            u64::from(cell.alias)
        }
    }
}

/// Zipf ranks by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
/// to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996),
/// in the formulation of Apache Commons RNG's `RejectionInversionZipfSampler`.
///
/// It needs no table, so memory is constant whatever the region, and it accepts the first
/// candidate in the large majority of draws: about one `ln_1p` and one `exp` per sample.
#[derive(Clone, Debug)]
pub(super) struct ZipfInversion {
    /// Number of ranks, as a float and as an integer.
    n_float: f64,
    n: u64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    /// Candidates within this distance of their rounded value are accepted without the
    /// exact test.
    s: f64,
}

impl ZipfInversion {
    pub(super) fn new(n: u64, exponent: f64) -> ZipfInversion {
        let mut sampler =
            ZipfInversion { n_float: n as f64, n, exponent, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        sampler.h_integral_x1 = sampler.h_integral(1.5) - 1.0;
        sampler.h_integral_n = sampler.h_integral(sampler.n_float + 0.5);
        sampler.s = 2.0 - sampler.h_integral_inverse(sampler.h_integral(2.5) - sampler.h(2.0));
        sampler
    }

    /// A rank in `0..n`, 0 being the most popular.
    #[inline]
    pub(super) fn sample(&self, rng: &mut AccessRng) -> u64 {
        loop {
            let u = self.h_integral_n + draw_unit(rng) * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            // The float to integer cast saturates, and the clamp keeps k within 1..=n.
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let k_float = k as f64;
            if k_float - x <= self.s || u >= self.h_integral(k_float + 0.5) - self.h(k_float) {
                return k - 1;
            }
        }
    }

    /// The integral of `h` from 1 to `x`: `(x^(1 - e) - 1) / (1 - e)`, or `ln x` for e = 1.
    pub(super) fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper_expm1_over_x((1.0 - self.exponent) * log_x) * log_x
    }

    /// The unnormalised probability density `x^-e`.
    pub(super) fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    pub(super) fn h_integral_inverse(&self, x: f64) -> f64 {
        // Rounding can push t slightly below -1, where ln_1p is undefined.
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper_ln1p_over_x(t) * x).exp()
    }
}

/// `ln(1 + x) / x`, continuous at 0.
///
/// `ln_1p` is only needed where `1 + x` loses the low bits of a small x; elsewhere `ln`
/// is as accurate here and about twice as fast, and this runs on every zipf sample.
pub(super) fn helper_ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-3 {
        (1.0 + x).ln() / x
    } else if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, continuous at 0.
pub(super) fn helper_expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// A seeded bijection of `0..n` that needs no table.
///
/// The rounds mix a value in `0..2^bits` (the smallest power of two not below n) with
/// steps that are each bijections of that range: xor with a key, multiplication by an odd
/// key, and `x ^= x >> shift`. Values that land at or above n are mixed again ("cycle
/// walking"); since the mix is a bijection, the walk returns below n, on average in fewer
/// than two rounds.
#[derive(Clone, Debug)]
pub(super) struct Scatter {
    n: u64,
    mask: u64,
    shift: u32,
    xor_keys: [u64; 3],
    mul_keys: [u64; 3],
}

impl Scatter {
    pub(super) fn new(n: u64, rng: &mut SimRng) -> Scatter {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut xor_keys = [0; 3];
        let mut mul_keys = [0; 3];
        for (xor_key, mul_key) in xor_keys.iter_mut().zip(mul_keys.iter_mut()) {
            *xor_key = rng.next_u64() & mask;
            *mul_key = rng.next_u64() | 1;
        }
        Scatter { n, mask, shift: bits.div_ceil(2).max(1), xor_keys, mul_keys }
    }

    #[inline]
    pub(super) fn mix(&self, mut x: u64) -> u64 {
        for (xor_key, mul_key) in self.xor_keys.iter().zip(self.mul_keys.iter()) {
            x ^= xor_key;
            x = x.wrapping_mul(*mul_key) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The page of `rank`, which must be below n.
    #[inline]
    pub(super) fn apply(&self, rank: u64) -> u64 {
        let mut x = self.mix(rank);
        while x >= self.n {
            x = self.mix(x);
        }
        x
    }
}
