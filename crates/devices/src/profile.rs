//! Device profiles: the fully resolved parameters of one latency model, and the presets.
//!
//! A profile is plain data. It exists so that reports can echo exactly what was simulated
//! and so that users can write a profile of their own in TOML. This module checks ranges
//! (`validate`) and names the presets; it does not compute latencies or build devices (see
//! `model`, which imports this module and not the other way round) and it does not know
//! about overrides (see `config`).
//!
//! Only the `virtio` preset (with `this-vm`, the same fit) and `this-vm-zram` are
//! measurements (of the machine the project is validated on). The other presets are typical
//! published figures for their class of device, chosen so that experiments have realistic
//! orders of magnitude; they describe no particular unit.

use serde::{Deserialize, Serialize};
use swapsim_core::ConfigError;

/// Names of the presets, in the order they are documented.
pub const PRESETS: &[&str] =
    &["nvme", "virtio", "this-vm", "san", "hdd", "disk-100mbs", "zram", "this-vm-zram"];

/// Largest accepted latency term, in microseconds (one minute). A limit on everything: a
/// larger value is almost certainly a unit mistake, and it keeps time arithmetic far from
/// overflow.
const LATENCY_US_MAX: f64 = 60_000_000.0;
/// Largest accepted per-KiB cost, in microseconds (one second per KiB).
const US_PER_KIB_MAX: f64 = 1_000_000.0;
/// Largest accepted bandwidth, in MiB/s (1 TiB/s).
const BANDWIDTH_MIB_S_MAX: f64 = 1_048_576.0;
/// Largest accepted jitter coefficient of variation.
const JITTER_CV_MAX: f64 = 2.0;
/// Largest accepted queue depth (the kernel's `BLK_MQ_MAX_DEPTH` is 10240).
const QUEUE_DEPTH_MAX: u32 = 10_240;
/// Largest accepted number of channels; each costs one slot of device state.
const CHANNELS_MAX: u32 = 4_096;
/// Largest accepted request size in KiB (64 MiB).
const MAX_SECTORS_KB_MAX: u32 = 65_536;
/// Largest accepted seek span in GiB (1 PiB).
const SEEK_SPAN_GIB_MAX: u64 = 1 << 20;

/// Fully resolved parameters of one device latency model.
///
/// How a request is serviced (see the crate docs for the whole model): it waits for the
/// earliest free channel, then takes `base × jitter + per_kib × KiB` (plus seek and
/// rotation on a disk), and its transfer also has to fit through one pipe of
/// `bandwidth_mib_s` shared by all channels. Every field is checked by [`validate`].
///
/// [`validate`]: DeviceProfile::validate
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// Stable name used as the device's `kind` in reports, e.g. `"virtio"`. Must not be empty.
    pub name: String,
    /// What the device reports in `/sys/block/X/queue/rotational`. The kernel then treats
    /// swap on it as a disk: cluster readahead only, one allocation cluster per device.
    pub rotational: bool,
    /// Completes I/O synchronously in the submitting task (`SWP_SYNCHRONOUS_IO`), as zram does.
    pub synchronous: bool,
    /// Requests the driver accepts at once (`nr_requests`), 1..=10240.
    pub queue_depth: u32,
    /// Largest request the block layer may build (`max_sectors_kb`), 4..=65536 KiB.
    pub max_sectors_kb: u32,
    /// Internal parallelism: requests serviced concurrently, 1..=4096. A request that finds
    /// every channel busy waits inside the device for the first one to free up.
    pub channels: u32,
    /// Fixed part of a read's service time, in microseconds: command overhead plus media
    /// access, before the size-dependent part. Multiplied by the jitter factor.
    pub read_base_us: f64,
    /// Size-dependent part of a read's service time, in microseconds per KiB.
    pub read_us_per_kib: f64,
    /// Fixed part of a write's service time, in microseconds. Multiplied by the jitter factor.
    pub write_base_us: f64,
    /// Size-dependent part of a write's service time, in microseconds per KiB.
    pub write_us_per_kib: f64,
    /// Aggregate transfer ceiling shared by all channels, in MiB/s; must be above 0. A
    /// read's bytes pass through the pipe at this rate, and so do a write's unless
    /// `write_bandwidth_mib_s` is set.
    pub bandwidth_mib_s: f64,
    /// The rate at which a write's bytes pass through the same pipe, in MiB/s, when the
    /// device takes writes faster or slower than it delivers reads (a host that copies a
    /// guest's writes into its page cache and reads from its storage); absent, writes go
    /// at `bandwidth_mib_s`. Reads and writes still queue in one pipe, in dispatch order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bandwidth_mib_s: Option<f64>,
    /// Coefficient of variation of a lognormal factor with mean 1 applied to the base
    /// latency (and to each pass's signal, see `pass_signal_us`), 0..=2. Zero makes the
    /// device deterministic without drawing random numbers.
    pub jitter_cv: f64,
    /// Set for a virtual disk whose host serves the guest's requests in passes: the host
    /// takes the queued requests one after another (on its channels, with the costs above)
    /// and signals the guest once its loop finds the queue empty, this many microseconds
    /// after the pass's last request is served (times the jitter factor, drawn once per
    /// pass), 0 to 60 s like the other latencies. A request queued while the host is in a pass joins it, and every
    /// request of a pass completes at its signal. Absent, each request completes on its
    /// own when it is served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_signal_us: Option<f64>,
    /// Seek time across the whole `seek_span_gib`, in microseconds; 0 for devices without
    /// heads. A seek over a fraction `f` of the span costs `sqrt(f)` times this.
    pub seek_us_full_stroke: f64,
    /// Time of one platter revolution, in microseconds; 0 for devices without platters.
    /// Every request that is not a sequential continuation waits half a revolution.
    pub rotation_us: f64,
    /// Sector range a full-stroke seek crosses (normally the disk's capacity), in GiB,
    /// 1..=1048576. Only used when `seek_us_full_stroke` is above 0.
    pub seek_span_gib: u64,
    /// Where the numbers come from, echoed in reports.
    pub source: String,
}

impl DeviceProfile {
    /// Checks every field against its documented range.
    ///
    /// Errors name the field and the offending value, e.g. `read_base_us: -3 is below 0`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.name.trim().is_empty() {
            return Err(invalid("name", "must not be empty".to_string()));
        }
        check_u32("queue_depth", self.queue_depth, 1, QUEUE_DEPTH_MAX)?;
        check_u32("max_sectors_kb", self.max_sectors_kb, 4, MAX_SECTORS_KB_MAX)?;
        check_u32("channels", self.channels, 1, CHANNELS_MAX)?;
        check_f64("read_base_us", self.read_base_us, 0.0, LATENCY_US_MAX)?;
        check_f64("read_us_per_kib", self.read_us_per_kib, 0.0, US_PER_KIB_MAX)?;
        check_f64("write_base_us", self.write_base_us, 0.0, LATENCY_US_MAX)?;
        check_f64("write_us_per_kib", self.write_us_per_kib, 0.0, US_PER_KIB_MAX)?;
        check_f64("bandwidth_mib_s", self.bandwidth_mib_s, 0.0, BANDWIDTH_MIB_S_MAX)?;
        if self.bandwidth_mib_s <= 0.0 {
            return Err(invalid("bandwidth_mib_s", format!("{} must be above 0", self.bandwidth_mib_s)));
        }
        if let Some(w) = self.write_bandwidth_mib_s {
            check_f64("write_bandwidth_mib_s", w, 0.0, BANDWIDTH_MIB_S_MAX)?;
            if w <= 0.0 {
                return Err(invalid("write_bandwidth_mib_s", format!("{w} must be above 0")));
            }
        }
        check_f64("jitter_cv", self.jitter_cv, 0.0, JITTER_CV_MAX)?;
        if let Some(signal) = self.pass_signal_us {
            check_f64("pass_signal_us", signal, 0.0, LATENCY_US_MAX)?;
        }
        check_f64("seek_us_full_stroke", self.seek_us_full_stroke, 0.0, LATENCY_US_MAX)?;
        check_f64("rotation_us", self.rotation_us, 0.0, LATENCY_US_MAX)?;
        if self.seek_span_gib < 1 || self.seek_span_gib > SEEK_SPAN_GIB_MAX {
            return Err(invalid(
                "seek_span_gib",
                format!("{} is outside 1..={SEEK_SPAN_GIB_MAX}", self.seek_span_gib),
            ));
        }
        Ok(())
    }

    /// A mainstream datacenter TLC NVMe SSD (typical figures, not a measurement).
    ///
    /// Modelled on the class of the Intel DC P4510 (2 TB), whose product brief quotes
    /// typical 4 KiB QD1 latencies of 77 µs read and 18 µs write (writes land in the
    /// controller's power-protected buffer), about 3,200 MB/s sequential read and about
    /// 640K random 4 KiB read IOPS at high queue depth. The figures are quoted from memory
    /// of the vendor brief and are unverified. Faster drives (Optane-class media, ~10 µs
    /// reads) can be modelled by overriding `read_base_us`.
    ///
    /// - `read_base_us` 75, `read_us_per_kib` 0.5: 77 µs at 4 KiB, ~140 µs at 128 KiB.
    /// - `write_base_us` 16, `write_us_per_kib` 0.5: 18 µs at 4 KiB.
    /// - `channels` 48: by Little's law, 640K IOPS × 77 µs ≈ 49 reads in flight.
    /// - `bandwidth_mib_s` 3000: 3,200 MB/s ≈ 3,050 MiB/s, rounded down.
    /// - `queue_depth` 1023: the nvme driver's default `io_queue_depth` of 1024 entries
    ///   holds at most 1023 commands.
    /// - `max_sectors_kb` 128: a common limit set by the controller's maximum data
    ///   transfer size (MDTS); drives with a larger MDTS get 1280 or more.
    /// - `jitter_cv` 0.2: flash reads vary with die contention and background work.
    pub fn nvme() -> DeviceProfile {
        DeviceProfile {
            name: "nvme".to_string(),
            rotational: false,
            synchronous: false,
            queue_depth: 1023,
            max_sectors_kb: 128,
            channels: 48,
            read_base_us: 75.0,
            read_us_per_kib: 0.5,
            write_base_us: 16.0,
            write_us_per_kib: 0.5,
            bandwidth_mib_s: 3000.0,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: 0.2,
            seek_us_full_stroke: 0.0,
            rotation_us: 0.0,
            seek_span_gib: 1,
            source: "typical datacenter TLC NVMe (Intel DC P4510 class product brief: 77us read, \
                     18us write at 4KiB QD1, ~3200MB/s, ~640K IOPS); not a measurement"
                .to_string(),
        }
    }

    /// The virtio-blk disk of the machine the project is validated on (measured).
    ///
    /// Derived from fio 3.33 runs with `direct=1` on that disk
    /// (`validation/device/summary.json`); the derivation is in the crate docs. In short:
    ///
    /// - Random reads at QD1 (psync), mean completion latency: 4 KiB 25.7 µs, 8 KiB
    ///   29.1 µs, 16 KiB 37.0 µs, 32 KiB 56.8 µs, 128 KiB 137.4 µs. A least-squares line
    ///   through them gives 23.5 µs + 0.897 µs/KiB, so `read_us_per_kib` is 0.9.
    /// - fio sees about 7.7 µs more than the block layer does: the kernel's block
    ///   tracepoints measured ~18 µs from issue to completion for 4-5 KiB reads on this
    ///   disk against fio's 25.7 µs. Anchoring the line at 18 µs for 4 KiB gives
    ///   `read_base_us` 18 − 4 × 0.9 ≈ 14.5.
    /// - Writes: random 4 KiB QD1 27.6 µs and sequential 128 KiB QD1 139.0 µs give a slope
    ///   of 0.898 µs/KiB; removing the same 7.7 µs gives 20 µs at 4 KiB, so
    ///   `write_base_us` 16.5 and `write_us_per_kib` 0.9.
    /// - `channels` 2: random 4 KiB reads reach 120,027 IOPS at QD32. The ratio to QD1
    ///   IOPS (38,308) is 3.1, but QD1 IOPS include fio's per-request syscall cost, which
    ///   libaio overlaps at QD32. At the block-level service time, 120,027 IOPS × 18 µs ≈
    ///   2.2 requests in service at once; two channels give ~110K read IOPS and ~100K
    ///   write IOPS against the measured 120K and 94.7K, where three would give ~165K.
    /// - `bandwidth_mib_s` 915: sequential 128 KiB reads at QD32 reached 915.4 MiB/s.
    /// - `jitter_cv` 0.15: the 4 KiB QD1 read p50 is 24.7 µs, p90 27.3 µs and p99
    ///   39.2 µs, a lognormal spread of 0.08 to 0.2 on the whole latency; applied to the
    ///   ~15 µs base alone that is roughly 0.15.
    /// - `rotational` true: the virtio-blk driver does not mark its queue non-rotational,
    ///   so the guest sees `rotational = 1` although the host storage behaves like flash.
    /// - `queue_depth` 256: with a single hardware queue the default scheduler is
    ///   mq-deadline, and `nr_requests` is then 2 × min(queue depth, 128) = 256.
    /// - `max_sectors_kb` 1280: the typical soft cap for a virtio-blk disk.
    pub fn virtio() -> DeviceProfile {
        DeviceProfile {
            name: "virtio".to_string(),
            rotational: true,
            synchronous: false,
            queue_depth: 256,
            max_sectors_kb: 1280,
            channels: 2,
            read_base_us: 14.5,
            read_us_per_kib: 0.9,
            write_base_us: 16.5,
            write_us_per_kib: 0.9,
            bandwidth_mib_s: 915.0,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: 0.15,
            seek_us_full_stroke: 0.0,
            rotation_us: 0.0,
            seek_span_gib: 1,
            source: "fio 3.33 on the validation machine's virtio-blk disk \
                     (validation/device/summary.json), block-level via tracepoints"
                .to_string(),
        }
    }

    /// A shared SAN LUN over Fibre Channel or iSCSI, 2012 era (typical figures, not a
    /// measurement). This is the kind of device behind plug-merging experiments of that time.
    ///
    /// - `read_base_us` 290, `read_us_per_kib` 2.5: ~300 µs for a 4 KiB read served from
    ///   the array's cache or SSD tier over a 4 Gb/s link (about 400 MB/s, 2.5 µs/KiB).
    ///   Reads that miss the cache and go to spinning disks take milliseconds; override
    ///   `read_base_us` to model them.
    /// - `write_base_us` 250: writes complete into the array's write-back cache.
    /// - `channels` 8: the array serves several requests in parallel across its spindles
    ///   and controllers.
    /// - `bandwidth_mib_s` 400: one 4 Gb/s FC path.
    /// - `queue_depth` 32: a common per-LUN queue depth for FC HBA drivers of the time.
    /// - `max_sectors_kb` 512: the SCSI disk driver's common default of 1024 sectors.
    /// - `rotational` true: SCSI disks report rotational unless the device says otherwise,
    ///   and arrays of the time did not.
    /// - `jitter_cv` 0.3: the LUN is shared with other hosts.
    pub fn san() -> DeviceProfile {
        DeviceProfile {
            name: "san".to_string(),
            rotational: true,
            synchronous: false,
            queue_depth: 32,
            max_sectors_kb: 512,
            channels: 8,
            read_base_us: 290.0,
            read_us_per_kib: 2.5,
            write_base_us: 250.0,
            write_us_per_kib: 2.5,
            bandwidth_mib_s: 400.0,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: 0.3,
            seek_us_full_stroke: 0.0,
            rotation_us: 0.0,
            seek_span_gib: 1,
            source: "typical 2012-era FC/iSCSI SAN LUN (cache-hit reads ~300us at 4KiB, \
                     4Gb/s link); not a measurement"
                .to_string(),
        }
    }

    /// A 7200 rpm SATA disk of about 1 TB (typical datasheet figures, not a measurement).
    ///
    /// - `seek_us_full_stroke` 15,000: full-stroke seek of ~15 ms. With seek time growing
    ///   as the square root of distance, uniformly random seeks average
    ///   15 ms × 8/15 = 8 ms, close to datasheet average seeks of 8-9 ms.
    /// - `rotation_us` 8,333: one revolution at 7200 rpm; the average wait of half a
    ///   revolution is 4.17 ms.
    /// - `read_base_us` and `write_base_us` 100: command overhead of the drive.
    /// - `read_us_per_kib` and `write_us_per_kib` 6.5, `bandwidth_mib_s` 150: a media rate
    ///   of ~150 MiB/s (outer tracks are faster, inner ones slower).
    /// - `channels` 1: one head assembly. `queue_depth` 32: SATA NCQ. The model services
    ///   requests in dispatch order; NCQ's reordering is not modelled.
    /// - `seek_span_gib` 931: 1 TB.
    /// - `jitter_cv` 0.1 on the command overhead only.
    pub fn hdd() -> DeviceProfile {
        DeviceProfile {
            name: "hdd".to_string(),
            rotational: true,
            synchronous: false,
            queue_depth: 32,
            max_sectors_kb: 1280,
            channels: 1,
            read_base_us: 100.0,
            read_us_per_kib: 6.5,
            write_base_us: 100.0,
            write_us_per_kib: 6.5,
            bandwidth_mib_s: 150.0,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: 0.1,
            seek_us_full_stroke: 15_000.0,
            rotation_us: 8_333.0,
            seek_span_gib: 931,
            source: "typical 7200rpm 1TB SATA disk datasheet (15ms full stroke, 4.17ms average \
                     rotation, ~150MiB/s); not a measurement"
                .to_string(),
        }
    }

    /// A virtual disk on a host that gives the guest about 100 MB/s (typical figures, not
    /// a measurement). It models the test guest of the 2020 opportunistic-reclaim RFC
    /// (Andrea Righi, `/sys/power/mm_reclaim`): an 8 GB KVM guest with a 100 MB/s disk,
    /// where hibernation, resume and swapoff times are dominated by the disk. The RFC
    /// gives only the throughput; the rest are assumptions of a throttled, host-backed
    /// virtio disk.
    ///
    /// - `bandwidth_mib_s` 95: 100 MB/s ≈ 95.4 MiB/s, shared by every request in flight.
    /// - `read_base_us` and `write_base_us` 496, `read_us_per_kib` and `write_us_per_kib`
    ///   1.0: about 0.5 ms for a 4 KiB request, the round trip through the host's I/O
    ///   path and its throttling. Large requests are limited by the bandwidth instead
    ///   (a 1280 KiB request takes ~13 ms through the pipe).
    /// - `channels` 2: the host serves two requests at once, as for `virtio`; 4 KiB
    ///   requests then reach ~4,000 IOPS (~16 MiB/s), far below the sequential rate.
    /// - `queue_depth` 256 and `max_sectors_kb` 1280: as `virtio` (mq-deadline's
    ///   `nr_requests` and the usual virtio-blk cap).
    /// - `rotational` false: the host marks the disk non-rotational, so the guest uses
    ///   VMA readahead and per-CPU allocation clusters.
    /// - `jitter_cv` 0.15: as `virtio`, the host's storage is shared.
    pub fn disk_100mbs() -> DeviceProfile {
        DeviceProfile {
            name: "disk-100mbs".to_string(),
            rotational: false,
            synchronous: false,
            queue_depth: 256,
            max_sectors_kb: 1280,
            channels: 2,
            read_base_us: 496.0,
            read_us_per_kib: 1.0,
            write_base_us: 496.0,
            write_us_per_kib: 1.0,
            bandwidth_mib_s: 95.0,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: 0.15,
            seek_us_full_stroke: 0.0,
            rotation_us: 0.0,
            seek_span_gib: 1,
            source: "typical host-throttled virtual disk of ~100MB/s (the 2020 mm_reclaim RFC's \
                     8GB KVM test guest), ~0.5ms per 4KiB request; not a measurement"
                .to_string(),
        }
    }

    /// zram with lzo-rle, as a simplified stand-in (typical figures, not a measurement).
    ///
    /// zram compresses in the task that writes and decompresses in the task that reads,
    /// and completes synchronously. Here that CPU time is charged as the device's service
    /// time: the engine does not separately occupy a CPU for it, and compressed memory is
    /// not taken from RAM by this model. `this-vm-zram` ([`DeviceProfile::this_vm_zram`])
    /// is the same device fitted to the validation machine.
    ///
    /// - Reads: ~2.2 µs per 4 KiB page to decompress lzo-rle on a desktop x86
    ///   (`read_base_us` 0.4 + `read_us_per_kib` 0.45 ≈ 2.2 µs).
    /// - Writes: compression is 2-5 times slower than decompression, ~7.5 µs per page
    ///   (`write_base_us` 0.5 + `write_us_per_kib` 1.75).
    /// - `channels` 1: one CPU. Set it to the number of CPUs that reclaim or fault at once.
    /// - `bandwidth_mib_s` 8192: memory bandwidth, which does not limit in practice.
    /// - `queue_depth` 128: zram is bio-based and has no tags; this only bounds bookkeeping.
    pub fn zram() -> DeviceProfile {
        DeviceProfile {
            name: "zram".to_string(),
            rotational: false,
            synchronous: true,
            queue_depth: 128,
            max_sectors_kb: 1280,
            channels: 1,
            read_base_us: 0.4,
            read_us_per_kib: 0.45,
            write_base_us: 0.5,
            write_us_per_kib: 1.75,
            bandwidth_mib_s: 8192.0,
            write_bandwidth_mib_s: None,
            pass_signal_us: None,
            jitter_cv: 0.1,
            seek_us_full_stroke: 0.0,
            rotation_us: 0.0,
            seek_span_gib: 1,
            source: "simplified zram stand-in: lzo-rle ~2.2us/page decompress, ~7.5us/page \
                     compress on desktop x86, charged as device time; not a measurement"
                .to_string(),
        }
    }

    /// This project's validation machine (validation/linux-6.18): its virtio-blk disk as
    /// the kernel's block tracepoints see it while swapping, a host that serves the
    /// guest's queue in passes.
    ///
    /// Traced per request (`swapsim probe run --requests-out`, 2026-12-02, six swap-file
    /// cases, 58k to 236k requests each), the disk completes requests in clumps: 20% to 86%
    /// of them complete within 3 µs of another, and a clump's requests were issued over up
    /// to several hundred microseconds. That is a host that takes the queued requests one
    /// after another and signals the guest once its loop finds the queue empty. Replaying
    /// each trace's own issue times through such a host (one server, a fixed signal after
    /// each pass) gives every request's service time within 3.5 to 11 µs at the median;
    /// two channels serving each request as it comes, at the same costs, give reads a p99
    /// 4 to 100 times the kernel's.
    ///
    /// - `channels` 1 and `pass_signal_us`: fitted to those traces by least squares over
    ///   the requests' service times. A 4 KiB read occupies the host about 7.4 µs
    ///   (`read_base_us` 5, `read_us_per_kib` 0.6), a 4 KiB write about 6 µs
    ///   (`write_base_us` 5, `write_us_per_kib` 0.3), and the guest learns of a pass about
    ///   32 µs after it ends in that session, whose lone 4 KiB reads took 39 to 42 µs at the
    ///   median. The fitted sessions' lone reads took 18 µs, so 10.5 µs here; a slower
    ///   session (`validate/sessions.rs`) lengthens the signal, not the host's work.
    ///   fio's 120,027 random 4 KiB reads a second at depth 32 (8.3 µs each) agree with
    ///   the host's cost per read.
    /// - `write_bandwidth_mib_s` 1700: a write's bytes cost the host about 0.6 µs/KiB once
    ///   it is larger than a few pages (the traces' per-KiB slope, 0.42 to 0.64 µs/KiB; the
    ///   fill of `A-seq-ro-pc3-vma`, 187 KiB per write, took 160 µs each). 1500 MiB/s
    ///   brought that fill's writes to 0.71x and left the sequential cases' 1.36 to 1.52x;
    ///   3000 MiB/s left the fill's at 0.40x.
    /// - `jitter_cv` 0.35: the traces' lone 4 KiB reads have a p99 1.5 to 2.6 times their
    ///   median, drawn here on each pass's signal (and each request's base).
    ///
    /// Simplified: one cost per request and size, whatever the offset; the traces' scattered
    /// single-page writes of the pool-limit case cost the host about 13 µs each against
    /// about 9 µs on the other cases, which the model does not separate.
    pub fn this_vm() -> DeviceProfile {
        DeviceProfile {
            name: "this-vm".to_string(),
            source: "the validation machine's virtio-blk disk: block tracepoints per request while \
                     swapping (2026-12-02), fitted as a host serving passes; fio 3.33 for the read pipe"
                .to_string(),
            write_bandwidth_mib_s: Some(1700.0),
            channels: 1,
            read_base_us: 5.0,
            read_us_per_kib: 0.6,
            write_base_us: 5.0,
            write_us_per_kib: 0.3,
            pass_signal_us: Some(10.5),
            jitter_cv: 0.35,
            ..DeviceProfile::virtio()
        }
    }

    /// zram with lzo-rle on this project's validation machine, fitted to the timings of the
    /// validation case `D2-nothp-seq-zram` (validation/linux-6.18): a sequential workload
    /// over 512 MiB in a 256 MiB memory cgroup, two passes, 20% writes, with 262,195
    /// swap-ins and 328,082 swap-outs; the kernel took 0.797 s for the fill and 3.902 s for
    /// the passes (medians of three runs).
    ///
    /// The device's service time is what a zram swap-in or swap-out costs this machine
    /// beyond what `CpuCosts::this_vm` already charges for it, so this preset is meant to be
    /// used with that CPU profile. It was derived by replaying the case with these CPU costs
    /// on a cost-free synchronous device (every latency term 0, unlimited bandwidth) and
    /// taking the difference from the kernel's times per page:
    ///
    /// - Writes: the fill writes 131,072 pages and swaps out 65,584 of them. It took
    ///   0.780 s on the cost-free device against the kernel's 0.797 s, so a page written
    ///   costs (0.797 − 0.780) s / 65,584 = 0.26 µs more than `swapout_submit_ns` (3.5 µs).
    ///   The kernel's own swap-file fills of the same pages (0.750–0.794 s, median 0.786 s
    ///   over the five live swap-file cases) give 0.17 µs: compressing a page with lzo-rle
    ///   costs this machine about what submitting its write to the virtio disk does, which
    ///   `swapout_submit_ns` already charges. Hence `write_us_per_kib` 0.065 and no base.
    /// - Reads: the passes took 1.653 s on the cost-free device with 262,144 swap-ins but
    ///   only 105,003 pages written, because the model keeps a clean swap-cache copy after a
    ///   read fault where the kernel's synchronous-device path (6.12–6.18) frees the slot and
    ///   must write the page again at its next eviction (262,498 writes in the kernel's
    ///   passes). At the kernel's counts the model charges 1.653 s + 157,495 × 3.5 µs =
    ///   2.205 s plus 262,498 × 0.26 µs = 0.067 s of writes; the remaining
    ///   (3.902 − 2.205 − 0.067) s over 262,195 swap-ins is 6.2 µs per swap-in. That is
    ///   the page's decompression together with the per-swap-in work the model charges
    ///   only to faults that sleep on a read (`fault_retry_ns`: the swap-in's memory cgroup
    ///   charge and refault bookkeeping), which the synchronous path does as well; this case
    ///   cannot tell the two apart. It is split between the request and its pages by a
    ///   measurement of large-folio swap-ins on the machine (`CpuCosts::this_vm` gives it):
    ///   49% of an order-0 swap-in's whole time (9.2 µs with the CPU costs charged
    ///   around the read) is per page, 4.47 µs, so `read_us_per_kib` 1.1175 and
    ///   `read_base_us` 1.73, the rest, once per request: a 64 kB folio's read takes
    ///   1.73 + 64 × 1.1175 µs.
    /// - `bandwidth_mib_s` 1,048,576 (the largest accepted): the per-page costs above include
    ///   the copies, so no separate transfer limit applies.
    /// - `channels` 1: the case ran on one CPU. `jitter_cv` 0.1 as the generic preset.
    pub fn this_vm_zram() -> DeviceProfile {
        DeviceProfile {
            name: "this-vm-zram".to_string(),
            read_base_us: 1.73,
            read_us_per_kib: 1.1175,
            write_base_us: 0.0,
            write_us_per_kib: 0.065,
            bandwidth_mib_s: BANDWIDTH_MIB_S_MAX,
            source: "zram lzo-rle on the validation machine, fitted to the fill and pass times of \
                     validation/linux-6.18 case D2-nothp-seq-zram: 6.2us per swap-in and 0.26us \
                     per swap-out beyond CpuCosts::this_vm; the swap-in split per request and per \
                     page by a measurement of large-folio swap-ins"
                .to_string(),
            ..DeviceProfile::zram()
        }
    }

    /// The preset called `name`, if there is one.
    pub(crate) fn by_name(name: &str) -> Option<DeviceProfile> {
        match name {
            "this-vm" => Some(DeviceProfile::this_vm()),
            "nvme" => Some(DeviceProfile::nvme()),
            "virtio" => Some(DeviceProfile::virtio()),
            "san" => Some(DeviceProfile::san()),
            "hdd" => Some(DeviceProfile::hdd()),
            "disk-100mbs" => Some(DeviceProfile::disk_100mbs()),
            "zram" => Some(DeviceProfile::zram()),
            "this-vm-zram" => Some(DeviceProfile::this_vm_zram()),
            _ => None,
        }
    }
}

pub(crate) fn invalid(field: &str, message: String) -> ConfigError {
    ConfigError::Invalid { field: field.to_string(), message }
}

fn check_u32(field: &str, value: u32, min: u32, max: u32) -> Result<(), ConfigError> {
    if value < min {
        return Err(invalid(field, format!("{value} is below {min}")));
    }
    if value > max {
        return Err(invalid(field, format!("{value} is above {max}")));
    }
    Ok(())
}

fn check_f64(field: &str, value: f64, min: f64, max: f64) -> Result<(), ConfigError> {
    if value.is_nan() {
        return Err(invalid(field, "NaN is not a number".to_string()));
    }
    if value < min {
        return Err(invalid(field, format!("{value} is below {min}")));
    }
    if value > max {
        return Err(invalid(field, format!("{value} is above {max}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// Validates `profile` after `edit` and renders the outcome.
    fn check(edit: impl FnOnce(&mut DeviceProfile), expect: Expect) {
        let mut profile = DeviceProfile::virtio();
        edit(&mut profile);
        let actual = match profile.validate() {
            Ok(()) => "ok".to_string(),
            Err(err) => err.to_string(),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn every_preset_validates_and_is_named_after_itself() {
        for name in PRESETS {
            let profile = DeviceProfile::by_name(name).expect("every listed preset exists");
            assert_eq!(profile.validate(), Ok(()), "preset {name}");
            assert_eq!(&profile.name, name);
        }
        assert_eq!(DeviceProfile::by_name("ssd"), None);
    }

    #[test]
    fn only_disks_seek_and_only_zram_presets_are_synchronous() {
        for name in PRESETS {
            let profile = DeviceProfile::by_name(name).expect("every listed preset exists");
            assert_eq!(profile.seek_us_full_stroke > 0.0, *name == "hdd", "preset {name}");
            assert_eq!(profile.rotation_us > 0.0, *name == "hdd", "preset {name}");
            assert_eq!(profile.synchronous, name.ends_with("zram"), "preset {name}");
        }
    }

    #[test]
    fn presets_survive_a_toml_round_trip() {
        for name in PRESETS {
            let profile = DeviceProfile::by_name(name).expect("every listed preset exists");
            let text = toml::to_string(&profile).expect("a profile serialises");
            let back: DeviceProfile = toml::from_str(&text).expect("a serialised profile parses");
            assert_eq!(back, profile);
        }
    }

    #[test]
    fn a_handwritten_profile_with_a_misspelled_key_is_rejected() {
        let mut text = toml::to_string(&DeviceProfile::nvme()).expect("a profile serialises");
        text = text.replace("read_base_us", "read_base_usec");
        let err = toml::from_str::<DeviceProfile>(&text).expect_err("misspelled key must be rejected");
        assert!(err.to_string().contains("unknown field `read_base_usec`"), "{err}");
    }

    #[test]
    fn disk_100mbs_takes_half_a_millisecond_per_page_and_95_mib_s() {
        let profile = DeviceProfile::disk_100mbs();
        let us_4k = profile.read_base_us + 4.0 * profile.read_us_per_kib;
        assert!((us_4k - 500.0).abs() < 1.0, "{us_4k}");
        assert_eq!(profile.bandwidth_mib_s, 95.0);
        assert!(!profile.rotational);
    }

    #[test]
    fn negative_latency() {
        check(|p| p.read_base_us = -3.0, expect!["read_base_us: -3 is below 0"]);
    }

    #[test]
    fn nan_latency() {
        check(|p| p.write_us_per_kib = f64::NAN, expect!["write_us_per_kib: NaN is not a number"]);
    }

    #[test]
    fn zero_queue_depth() {
        check(|p| p.queue_depth = 0, expect!["queue_depth: 0 is below 1"]);
    }

    #[test]
    fn zero_channels() {
        check(|p| p.channels = 0, expect!["channels: 0 is below 1"]);
    }

    #[test]
    fn too_many_channels() {
        check(|p| p.channels = 5000, expect!["channels: 5000 is above 4096"]);
    }

    #[test]
    fn zero_bandwidth() {
        check(|p| p.bandwidth_mib_s = 0.0, expect!["bandwidth_mib_s: 0 must be above 0"]);
    }

    #[test]
    fn infinite_bandwidth() {
        check(|p| p.bandwidth_mib_s = f64::INFINITY, expect!["bandwidth_mib_s: inf is above 1048576"]);
    }

    #[test]
    fn small_max_sectors() {
        check(|p| p.max_sectors_kb = 2, expect!["max_sectors_kb: 2 is below 4"]);
    }

    #[test]
    fn jitter_out_of_range() {
        check(|p| p.jitter_cv = 2.5, expect!["jitter_cv: 2.5 is above 2"]);
        check(|p| p.jitter_cv = 2.0, expect!["ok"]);
    }

    #[test]
    fn zero_seek_span() {
        check(|p| p.seek_span_gib = 0, expect!["seek_span_gib: 0 is outside 1..=1048576"]);
    }

    #[test]
    fn empty_name() {
        check(|p| p.name = " ".to_string(), expect!["name: must not be empty"]);
    }
}
