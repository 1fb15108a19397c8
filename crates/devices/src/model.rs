//! The latency model behind every profile: channels, a shared transfer pipe, optional
//! seek and rotation, and lognormal jitter.
//!
//! The block layer decides which requests exist and when they are dispatched; this module
//! decides only when each one completes. It does not reorder requests (no NCQ or internal
//! scheduling: requests are serviced in dispatch order), models no caches, no garbage
//! collection and no failures. Time is integer nanoseconds; floating point is used only to
//! compute one request's service time and is clamped before it touches the clock.
//! Results are reproducible for a given stream on a given platform; the jitter goes through
//! the platform's `exp` and `ln`, whose last bit may differ between math libraries, which
//! can move a completion by a nanosecond.

use rand_distr::{Distribution, LogNormal};
use std::collections::VecDeque;
use swapsim_core::{BlockDevice, ConfigError, DeviceTraits, IoDir, IoRequest, SimDuration, SimRng, SimTime};

use crate::profile::DeviceProfile;

/// Bytes in a 512-byte sector, the unit of `IoRequest::sector`.
const SECTOR_BYTES: u64 = 512;
/// Longest service time one request can be charged, in nanoseconds (about 146 years).
/// Extreme requests saturate here instead of overflowing the clock.
const SERVICE_NS_MAX: u64 = 1 << 62;

impl DeviceProfile {
    /// Validates the profile and builds its latency model, drawing jitter from `rng`.
    ///
    /// This lives with the model rather than with the profile, so that the profile stays
    /// plain data that knows nothing of the model built from it.
    pub fn build(&self, rng: SimRng) -> Result<Box<dyn BlockDevice>, ConfigError> {
        self.validate()?;
        Ok(Box::new(ProfileDevice::new(self.clone(), rng)))
    }
}

/// A device serviced according to a validated [`DeviceProfile`].
///
/// For a request dispatched at `now`:
/// 1. It starts on the channel that frees up first, at `start = max(now, channel_free)`.
/// 2. Its service time is `base × jitter + per_kib × KiB + positioning`, where positioning
///    is zero for a sequential continuation (the request starts where the previous one
///    ended) and otherwise `full_stroke × sqrt(distance / span) + rotation / 2`.
/// 3. Its transfer goes through one pipe shared by all channels: it cannot finish before
///    `max(start, pipe_free) + bytes / bandwidth`, where a write's bandwidth is
///    `write_bandwidth_mib_s` when the profile sets one.
/// 4. It completes at the later of 2 and 3, and holds its channel until then. On a
///    profile with `pass_signal_us` that is when the host has served it: the guest sees
///    it complete with the rest of its pass, `pass_signal_us × jitter` after the pass's
///    last request (`pass_signal`, one draw per pass).
#[derive(Clone, Debug)]
pub(crate) struct ProfileDevice {
    profile: DeviceProfile,
    /// Lognormal with mean 1 and the profile's CV; `None` when the CV is 0, so a
    /// deterministic profile draws nothing from its stream.
    jitter: Option<LogNormal<f64>>,
    rng: SimRng,
    /// When each channel finishes its current request.
    channels: Channels,
    /// When the shared transfer pipe finishes the transfers already given to it.
    pipe_free: SimTime,
    /// Sector just past the previous request, where the head of a disk now is. Starts at 0.
    head_sector: u64,
}

impl ProfileDevice {
    /// Builds the model. `profile` must have passed `validate`.
    pub(crate) fn new(profile: DeviceProfile, rng: SimRng) -> ProfileDevice {
        debug_assert_eq!(profile.validate(), Ok(()));
        let jitter = if profile.jitter_cv > 0.0 {
            // For a lognormal with mean 1 and coefficient of variation c:
            // sigma² = ln(1 + c²) and mu = -sigma² / 2.
            let sigma_sq = (1.0 + profile.jitter_cv * profile.jitter_cv).ln();
            Some(
                LogNormal::new(-sigma_sq / 2.0, sigma_sq.sqrt())
                    .expect("a validated jitter_cv gives a finite, positive sigma"),
            )
        } else {
            None
        };
        let n_channels = profile.channels.max(1) as usize;
        ProfileDevice {
            profile,
            jitter,
            rng,
            channels: Channels::new(n_channels),
            pipe_free: SimTime::ZERO,
            head_sector: 0,
        }
    }

    /// One draw of the jitter factor, or 1 without drawing when the profile has no jitter.
    fn jitter_factor(&mut self) -> f64 {
        match &self.jitter {
            Some(jitter) => jitter.sample(&mut self.rng),
            None => 1.0,
        }
    }

    /// Time to move the heads to `sector` and wait for it to come round, in microseconds.
    fn positioning_us(&self, sector: u64) -> f64 {
        let profile = &self.profile;
        if profile.seek_us_full_stroke <= 0.0 && profile.rotation_us <= 0.0 {
            return 0.0;
        }
        if sector == self.head_sector {
            return 0.0;
        }
        let span_sectors = profile.seek_span_gib as f64 * (1u64 << 30) as f64 / SECTOR_BYTES as f64;
        let distance_fraction = (sector.abs_diff(self.head_sector) as f64 / span_sectors).min(1.0);
        profile.seek_us_full_stroke * distance_fraction.sqrt() + profile.rotation_us / 2.0
    }
}

/// When each of a device's channels finishes its current request, in ascending order: the
/// front is the channel that frees up first.
///
/// Channels are alike, so which of two channels free at the same time takes a request
/// changes no completion: only the times matter, not which channel has which. A request
/// usually ends after every request before it, so its channel's time goes to the back
/// without a search (48 channels for the nvme preset, where a heap of `(time, channel)`
/// spent more on sifting than the rest of the model did).
#[derive(Clone, Debug)]
struct Channels(VecDeque<SimTime>);

impl Channels {
    /// `n` channels (at least one), all free from time 0.
    fn new(n: usize) -> Channels {
        Channels(vec![SimTime::ZERO; n.max(1)].into())
    }

    /// When the channel that frees up first is free.
    fn first_free(&self) -> SimTime {
        self.0[0]
    }

    /// The channel that frees up first takes a request that ends at `done`.
    fn occupy_first(&mut self, done: SimTime) {
        let free = &mut self.0;
        free.pop_front();
        if free.back().is_none_or(|&last| last <= done) {
            free.push_back(done);
        } else {
            let at = free.partition_point(|&t| t <= done);
            free.insert(at, done);
        }
    }
}

/// Converts microseconds to whole nanoseconds, mapping NaN and negatives to 0 and
/// saturating at [`SERVICE_NS_MAX`].
fn us_to_ns(us: f64) -> u64 {
    let ns = us * 1_000.0;
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= SERVICE_NS_MAX as f64 {
        SERVICE_NS_MAX
    } else {
        round_half_away(ns)
    }
}

/// `x.round() as u64` for a finite `x` in `[0, 2^62]`, computed inline: on x86-64's
/// baseline, which has no rounding instruction, `round` is a library call, and every
/// request converts two times. The truncation is exact, and so is the fraction
/// `x - trunc(x)` (the two lie within a factor of two of each other, or the truncation
/// is 0), so comparing the fraction with one half decides as `round` does, halves going
/// away from zero. Signed conversions, one instruction each way, cover the range.
#[inline]
fn round_half_away(x: f64) -> u64 {
    debug_assert!((0.0..=SERVICE_NS_MAX as f64).contains(&x));
    let t = x as i64;
    (if x - t as f64 >= 0.5 { t + 1 } else { t }) as u64
}

impl BlockDevice for ProfileDevice {
    fn kind(&self) -> &str {
        &self.profile.name
    }

    fn traits(&self) -> DeviceTraits {
        DeviceTraits {
            rotational: self.profile.rotational,
            synchronous: self.profile.synchronous,
            queue_depth: self.profile.queue_depth,
            max_sectors_kb: self.profile.max_sectors_kb,
        }
    }

    fn service(&mut self, now: SimTime, req: &IoRequest) -> SimTime {
        let start = now.max(self.channels.first_free());

        let (base_us, us_per_kib) = match req.dir {
            IoDir::Read => (self.profile.read_base_us, self.profile.read_us_per_kib),
            IoDir::Write => (self.profile.write_base_us, self.profile.write_us_per_kib),
        };
        // Exactly one draw per request when jitter is on, none when it is off.
        let factor = self.jitter_factor();
        let kib = req.bytes as f64 / 1024.0;
        let service_us = base_us * factor + us_per_kib * kib + self.positioning_us(req.sector);
        let service_done = SimTime(start.0.saturating_add(us_to_ns(service_us)));

        let bandwidth_mib_s = match req.dir {
            IoDir::Write => self.profile.write_bandwidth_mib_s.unwrap_or(self.profile.bandwidth_mib_s),
            IoDir::Read => self.profile.bandwidth_mib_s,
        };
        let transfer_us = req.bytes as f64 / (bandwidth_mib_s * 1_048_576.0) * 1e6;
        let pipe_done = SimTime(start.max(self.pipe_free).0.saturating_add(us_to_ns(transfer_us)));
        self.pipe_free = pipe_done;

        let done = service_done.max(pipe_done).max(now);
        self.channels.occupy_first(done);
        self.head_sector = req.sector.saturating_add(req.bytes / SECTOR_BYTES);
        done
    }

    fn pass_signal(&mut self) -> Option<SimDuration> {
        let signal_us = self.profile.pass_signal_us?;
        Some(SimDuration(us_to_ns(signal_us * self.jitter_factor())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};
    use proptest::prelude::*;
    use swapsim_core::PAGE_SIZE;

    const SWAP0: &str = "devices.swap0";

    fn device(profile: DeviceProfile, stream: &str) -> ProfileDevice {
        assert_eq!(profile.validate(), Ok(()));
        ProfileDevice::new(profile, SimRng::derive(42, stream))
    }

    fn quiet(profile: DeviceProfile) -> DeviceProfile {
        DeviceProfile { jitter_cv: 0.0, ..profile }
    }

    /// One request: dispatched at `at_us`, direction, first sector, size in KiB.
    type Req = (f64, IoDir, u64, u64);

    /// Services `requests` in order and returns each completion time in nanoseconds.
    fn completions(dev: &mut ProfileDevice, requests: &[Req]) -> Vec<u64> {
        requests
            .iter()
            .map(|&(at_us, dir, sector, kib)| {
                let now = SimTime(us_to_ns(at_us));
                let done = dev.service(now, &IoRequest { dir, sector, bytes: kib * 1024 });
                assert!(done >= now);
                done.0
            })
            .collect()
    }

    /// Services `requests` on a fresh device and renders one line per request.
    fn check(profile: DeviceProfile, requests: &[Req], expect: Expect) {
        let mut dev = device(profile, SWAP0);
        let done = completions(&mut dev, requests);
        let lines: Vec<String> = requests
            .iter()
            .zip(done)
            .map(|(&(at_us, dir, sector, kib), done_ns)| {
                let dir = match dir {
                    IoDir::Read => "read ",
                    IoDir::Write => "write",
                };
                format!(
                    "{dir} {kib:>4}KiB @{sector:<10} at {at_us:>8.1}us -> {:>10.3}us",
                    done_ns as f64 / 1e3
                )
            })
            .collect();
        expect.assert_eq(&(lines.join("\n") + "\n"));
    }

    /// Service time of one request on an idle device, in microseconds.
    fn idle_us(profile: &DeviceProfile, dir: IoDir, kib: u64) -> f64 {
        let mut dev = device(profile.clone(), SWAP0);
        completions(&mut dev, &[(0.0, dir, 0, kib)])[0] as f64 / 1e3
    }

    #[test]
    fn virtio_4k_read_lands_in_the_fio_band() {
        // fio saw 25.7 µs mean (p50 24.7 µs) from user space; the block layer sees 7-9 µs
        // less, and tracepoints measured ~18 µs.
        let read_us = idle_us(&quiet(DeviceProfile::virtio()), IoDir::Read, 4);
        assert!((16.0..=20.0).contains(&read_us), "{read_us}");
        let write_us = idle_us(&quiet(DeviceProfile::virtio()), IoDir::Write, 4);
        assert!((17.0..=22.0).contains(&write_us), "{write_us}");
    }

    #[test]
    fn virtio_requests_of_growing_size() {
        // From 128 KiB up the shared pipe (915 MiB/s) binds before the channel does, as
        // fio's 128 KiB (906 MiB/s at depth 1) and 512 KiB (852 MiB/s) reads suggest.
        check(
            quiet(DeviceProfile::virtio()),
            &[
                (0.0, IoDir::Read, 0, 4),
                (1_000.0, IoDir::Read, 0, 8),
                (2_000.0, IoDir::Read, 0, 32),
                (3_000.0, IoDir::Read, 0, 128),
                (4_000.0, IoDir::Read, 0, 1024),
                (10_000.0, IoDir::Write, 0, 4),
            ],
            expect![[r#"
                read     4KiB @0          at      0.0us ->     18.100us
                read     8KiB @0          at   1000.0us ->   1021.700us
                read    32KiB @0          at   2000.0us ->   2043.300us
                read   128KiB @0          at   3000.0us ->   3136.612us
                read  1024KiB @0          at   4000.0us ->   5092.896us
                write    4KiB @0          at  10000.0us ->  10020.100us
            "#]],
        );
    }

    #[test]
    fn a_pass_signal_carries_the_jitter_and_only_pass_devices_have_one() {
        let quiet_vm = quiet(DeviceProfile::this_vm());
        let mut dev = device(quiet_vm, SWAP0);
        assert_eq!(dev.pass_signal(), Some(SimDuration(10_500)));
        // A 4 KiB read occupies the host 5 + 0.6 x 4 = 7.4 us.
        assert_eq!(completions(&mut dev, &[(0.0, IoDir::Read, 0, 4)]), vec![7_400]);
        let mut jittery = device(DeviceProfile::this_vm(), SWAP0);
        let draws: Vec<u64> = (0..200).map(|_| jittery.pass_signal().expect("a pass device").0).collect();
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((9_000.0..12_000.0).contains(&mean), "{mean}");
        assert!(draws.iter().any(|&d| d != draws[0]));
        assert_eq!(device(DeviceProfile::virtio(), SWAP0).pass_signal(), None);
    }

    #[test]
    fn larger_requests_take_longer_on_every_preset() {
        for name in crate::profile::PRESETS {
            let profile = quiet(DeviceProfile::by_name(name).expect("preset exists"));
            for dir in [IoDir::Read, IoDir::Write] {
                let times: Vec<f64> =
                    [4, 8, 32, 128, 1024].iter().map(|&kib| idle_us(&profile, dir, kib)).collect();
                assert!(times.windows(2).all(|pair| pair[0] < pair[1]), "{name} {dir:?}: {times:?}");
            }
        }
    }

    #[test]
    fn channels_complete_in_parallel() {
        // Four channels, an unlimited pipe: four requests at once finish together, the
        // fifth waits for a channel and finishes one service time later.
        let profile =
            DeviceProfile { channels: 4, bandwidth_mib_s: 1_048_576.0, ..quiet(DeviceProfile::virtio()) };
        let requests: Vec<Req> = (0..5).map(|idx| (0.0, IoDir::Read, idx * 8, 4)).collect();
        let mut dev = device(profile, SWAP0);
        let done = completions(&mut dev, &requests);
        assert!(done[..4].iter().all(|&ns| ns == done[0]), "{done:?}");
        assert_eq!(done[4], 2 * done[0], "{done:?}");
    }

    #[test]
    fn writes_pass_the_pipe_at_their_own_rate_behind_reads_and_before_them() {
        // 64 channels, per-KiB costs negligible: the pipe decides. 32 MiB of writes at
        // 400 MiB/s take 80 ms where the read rate (100 MiB/s) would take 320 ms, and a
        // read dispatched with them still queues behind their transfers.
        let profile = DeviceProfile {
            channels: 64,
            bandwidth_mib_s: 100.0,
            write_bandwidth_mib_s: Some(400.0),
            read_us_per_kib: 0.01,
            write_us_per_kib: 0.01,
            ..quiet(DeviceProfile::virtio())
        };
        let mut requests: Vec<Req> = (0..32).map(|idx| (0.0, IoDir::Write, idx * 2048, 1024)).collect();
        requests.push((0.0, IoDir::Read, 1 << 20, 1024));
        let mut dev = device(profile, SWAP0);
        let done = completions(&mut dev, &requests);
        let writes_s = done[31] as f64 / 1e9;
        assert!((0.08..0.0801).contains(&writes_s), "{writes_s}");
        let read_s = done[32] as f64 / 1e9;
        assert!(
            (0.09..0.0901).contains(&read_s),
            "the read waits for the writes, then takes 10 ms: {read_s}"
        );
        let mut bad = DeviceProfile::virtio();
        bad.write_bandwidth_mib_s = Some(0.0);
        assert_eq!(
            bad.validate().map_err(|e| e.to_string()),
            Err("write_bandwidth_mib_s: 0 must be above 0".to_string())
        );
    }

    #[test]
    fn bandwidth_caps_throughput() {
        // 64 MiB in 1 MiB requests on 64 channels cannot beat 100 MiB/s: 0.64 s.
        let profile = DeviceProfile {
            channels: 64,
            bandwidth_mib_s: 100.0,
            read_us_per_kib: 0.01,
            ..quiet(DeviceProfile::virtio())
        };
        let requests: Vec<Req> = (0..64).map(|idx| (0.0, IoDir::Read, idx * 2048, 1024)).collect();
        let mut dev = device(profile, SWAP0);
        let done = completions(&mut dev, &requests);
        let last_s = *done.iter().max().expect("64 requests") as f64 / 1e9;
        assert!((0.64..0.6401).contains(&last_s), "{last_s}");
        assert!(done.windows(2).all(|pair| pair[0] < pair[1]), "transfers queue in the pipe");
    }

    #[test]
    fn hdd_sequential_continuation_skips_positioning() {
        // The head starts at sector 0, so the first two reads are sequential. The third
        // seeks over 55% of the disk and waits half a revolution; the fourth re-reads
        // near where the head now is, so it seeks almost nothing but still waits a
        // half revolution.
        check(
            quiet(DeviceProfile::hdd()),
            &[
                (0.0, IoDir::Read, 0, 4),
                (1_000.0, IoDir::Read, 8, 4),
                (2_000.0, IoDir::Read, 1 << 30, 4),
                (100_000.0, IoDir::Read, 1 << 30, 4),
            ],
            expect![[r#"
                read     4KiB @0          at      0.0us ->    126.000us
                read     4KiB @8          at   1000.0us ->   1126.000us
                read     4KiB @1073741824 at   2000.0us ->  17416.255us
                read     4KiB @1073741824 at 100000.0us -> 104293.460us
            "#]],
        );
        let mut dev = device(quiet(DeviceProfile::hdd()), SWAP0);
        let done = completions(&mut dev, &[(0.0, IoDir::Read, 0, 4), (1_000.0, IoDir::Read, 8, 4)]);
        let sequential_ns = done[1] - 1_000_000;
        let done = completions(&mut dev, &[(10_000.0, IoDir::Read, 1 << 30, 4)]);
        let far_ns = done[0] - 10_000_000;
        assert!(far_ns > 20 * sequential_ns, "sequential {sequential_ns}ns, far {far_ns}ns");
    }

    #[test]
    fn same_stream_same_completions_other_stream_other_jitter() {
        let requests: Vec<Req> = (0..32).map(|idx| (idx as f64 * 500.0, IoDir::Read, idx * 64, 4)).collect();
        let run = |stream: &str| completions(&mut device(DeviceProfile::virtio(), stream), &requests);
        assert_eq!(run(SWAP0), run(SWAP0));
        assert_ne!(run(SWAP0), run("devices.swap1"));
        let quiet_run =
            |stream: &str| completions(&mut device(quiet(DeviceProfile::virtio()), stream), &requests);
        assert_eq!(quiet_run(SWAP0), quiet_run("devices.swap1"));
    }

    #[test]
    fn jitter_has_mean_one() {
        let profile = DeviceProfile { read_us_per_kib: 0.0, channels: 1, ..DeviceProfile::virtio() };
        let mut dev = device(profile, SWAP0);
        let n_requests = 20_000u64;
        let mut total_ns = 0u64;
        for idx in 0..n_requests {
            let now = SimTime(idx * 1_000_000);
            total_ns += dev.service(now, &IoRequest { dir: IoDir::Read, sector: 0, bytes: 0 }).0 - now.0;
        }
        let mean_us = total_ns as f64 / n_requests as f64 / 1e3;
        assert!((mean_us - 14.5).abs() < 0.2, "{mean_us}");
    }

    #[test]
    fn us_to_ns_clamps() {
        assert_eq!(us_to_ns(f64::NAN), 0);
        assert_eq!(us_to_ns(-1.0), 0);
        assert_eq!(us_to_ns(f64::INFINITY), SERVICE_NS_MAX);
        assert_eq!(us_to_ns(1.2345), 1235);
        assert_eq!(us_to_ns(0.0025), 3);
        assert_eq!(us_to_ns(0.0015), 2);
        assert_eq!(us_to_ns(0.00149), 1);
    }

    proptest! {
        #[test]
        fn rounding_is_the_library_s(x in prop_oneof![0.0..1e6f64, 0.0..SERVICE_NS_MAX as f64, (0u64..1 << 40).prop_map(|n| n as f64 / 2.0)]) {
            prop_assert_eq!(round_half_away(x), x.round() as u64);
        }
    }

    fn arb_request() -> impl Strategy<Value = (u64, bool, u64, u64)> {
        (
            prop_oneof![0..1_000_000u64, any::<u64>()],
            any::<bool>(),
            any::<u64>(),
            prop_oneof![(0..512u64).prop_map(|pages| pages * PAGE_SIZE), any::<u64>()],
        )
    }

    fn arb_profile() -> impl Strategy<Value = DeviceProfile> {
        let presets = prop::sample::select(crate::profile::PRESETS.to_vec())
            .prop_map(|name| DeviceProfile::by_name(name).expect("preset exists"));
        let extreme = (
            1..=4096u32,
            prop_oneof![Just(0.0), Just(60_000_000.0), 0.0..1e3],
            prop_oneof![Just(1e-300), Just(1_048_576.0), 1e-3..1e4],
            0.0..=2.0f64,
            prop_oneof![Just(0.0), Just(60_000_000.0)],
            1..=(1u64 << 20),
        )
            .prop_map(
                |(channels, latency_us, bandwidth_mib_s, jitter_cv, seek_us, seek_span_gib)| DeviceProfile {
                    channels,
                    read_base_us: latency_us,
                    write_base_us: latency_us,
                    read_us_per_kib: latency_us.min(1e6),
                    write_us_per_kib: latency_us.min(1e6),
                    bandwidth_mib_s,
                    jitter_cv,
                    seek_us_full_stroke: seek_us,
                    rotation_us: seek_us,
                    seek_span_gib,
                    ..DeviceProfile::hdd()
                },
            );
        prop_oneof![presets, extreme]
    }

    proptest! {
        /// The ordered channel times start every request when a scan of `(time, channel)`
        /// pairs for the earliest, lowest channel on a tie, would: requests dispatched at
        /// any times, in any order, lasting any time.
        #[test]
        fn channels_start_requests_as_a_scan_of_every_channel_would(
            n in 1usize..64,
            requests in proptest::collection::vec((0u64..1_000, 0u64..1_000), 0..300),
        ) {
            let mut channels = Channels::new(n);
            let mut scanned: Vec<(SimTime, usize)> = (0..n).map(|i| (SimTime::ZERO, i)).collect();
            for (now, lasts) in requests {
                let now = SimTime(now);
                let first = *scanned.iter().min().expect("at least one channel");
                let start = now.max(first.0);
                prop_assert_eq!(now.max(channels.first_free()), start);
                let done = SimTime(start.0 + lasts);
                scanned[first.1].0 = done;
                channels.occupy_first(done);
            }
        }
    }

    proptest! {
        #[test]
        fn completion_is_never_before_now(
            profile in arb_profile(),
            requests in prop::collection::vec(arb_request(), 1..64),
        ) {
            prop_assert_eq!(profile.validate(), Ok(()));
            let mut dev = ProfileDevice::new(profile, SimRng::derive(7, SWAP0));
            let mut now = SimTime::ZERO;
            for (gap_ns, write, sector, bytes) in requests {
                now = SimTime(now.0.saturating_add(gap_ns));
                let dir = if write { IoDir::Write } else { IoDir::Read };
                let done = dev.service(now, &IoRequest { dir, sector, bytes });
                prop_assert!(done >= now);
            }
        }
    }
}
