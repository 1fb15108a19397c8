//! The per-access random draws of generated streams: a fast generator seeded from the
//! task's own `SimRng` stream, and the helpers that turn its output into uniform values.

use crate::rng::SimRng;
use rand::RngCore;

/// The per-access random generator: xoshiro256++ (D. Blackman and S. Vigna, "Scrambled
/// linear pseudorandom number generators", 2021), seeded from the task's [`SimRng`].
///
/// The task's stream is still derived from the run's seed and the task's name; only the
/// per-access draws come from this cheaper generator. ChaCha8 costs several nanoseconds
/// per draw, which alone would hold a generator to well under the tens of millions of
/// accesses per second the engine can consume. The 256-bit state makes overlap between
/// the streams of different tasks practically impossible, which a 64-bit generator could
/// not promise for thousands of tasks of 2^40 accesses.
#[derive(Clone, Debug)]
pub(super) struct AccessRng {
    state: [u64; 4],
}

impl AccessRng {
    pub(super) fn from_stream(stream: &mut SimRng) -> AccessRng {
        let mut state = [0u64; 4];
        for word in &mut state {
            *word = stream.next_u64();
        }
        // The all-zero state is the one fixed point of xoshiro; ChaCha will not produce it
        // in practice, but the generator must not depend on luck.
        if state == [0; 4] {
            state[0] = 1;
        }
        AccessRng { state }
    }

    #[inline]
    pub(super) fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

/// Turns a probability into a threshold on 53-bit uniform integers, so that `draw < threshold`
/// holds with that probability: 0 never, 1 always. NaN counts as 0.
pub(super) fn probability_threshold(probability: f64) -> u64 {
    (probability.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64
}

/// A uniform 53-bit integer, to compare against [`probability_threshold`].
#[inline]
pub(super) fn draw53(rng: &mut AccessRng) -> u64 {
    rng.next_u64() >> 11
}

/// A uniform float in [0, 1).
#[inline]
pub(super) fn draw_unit(rng: &mut AccessRng) -> f64 {
    draw53(rng) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..bound` by the multiply-high method. The bias is below
/// `bound / 2^64`, under 2^-36 for the largest region, and far cheaper than rejection.
#[inline]
pub(super) fn draw_below(rng: &mut AccessRng, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}
