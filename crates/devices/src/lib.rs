//! swapsim-devices: latency models of swap devices behind [`swapsim_core::BlockDevice`].
//!
//! The block layer in `swapsim-core` decides which requests reach a device and when; a
//! model here decides only when each one completes. Every model is one mechanism driven by
//! a [`DeviceProfile`] of numbers, so that a scenario picks a preset by name, overrides
//! what it needs in a [`DeviceConfig`], and a report can echo the exact numbers used. This
//! crate knows nothing about readahead policies or the engine's internals, and a model's
//! answer depends only on the request, the model's own state and its own random stream.
//!
//! ```
//! use swapsim_core::{IoDir, IoRequest, SimRng, SimTime, PAGE_SIZE};
//! use swapsim_devices::DeviceConfig;
//!
//! let mut cfg = DeviceConfig::preset("virtio");
//! cfg.jitter_cv = Some(0.0); // deterministic for the example
//! let mut device = cfg.build(SimRng::derive(1, "devices.swap0")).unwrap();
//! assert_eq!(device.kind(), "virtio");
//! assert!(device.traits().rotational); // virtio-blk says so, although it is flash
//!
//! // One 4 KiB swap-in on an idle device: 14.5 µs base + 0.9 µs/KiB × 4 = 18.1 µs.
//! let read = IoRequest { dir: IoDir::Read, sector: 2048, bytes: PAGE_SIZE };
//! let done = device.service(SimTime(1_000), &read);
//! assert_eq!(done, SimTime(1_000 + 18_100));
//! ```
//!
//! # The model
//!
//! A device has `channels` that serve requests concurrently and one transfer pipe of
//! `bandwidth_mib_s` that they share. A request dispatched at `now` starts on the first
//! free channel, takes `base × jitter + per_kib × KiB` there (plus, on a disk, a seek that
//! grows with the square root of the distance from the previous request and half a
//! revolution, both skipped for a sequential continuation), and cannot finish before its
//! bytes have passed through the pipe after the transfers queued ahead of it (a write's
//! bytes at `write_bandwidth_mib_s` when the profile sets it, as `this-vm` does). `jitter` is
//! lognormal with mean 1 and coefficient of variation `jitter_cv`, drawn from the device's
//! own stream. Requests are serviced in dispatch order: no NCQ reordering, no device
//! caches, no garbage collection, no errors.
//!
//! A profile with `pass_signal_us` models a virtual disk whose host serves the queue in
//! passes: a request that finds the host idle opens a pass, requests dispatched while the
//! host is still serving join it, and the guest learns of all of them together,
//! `pass_signal_us × jitter` after the last is served (the block layer keeps the passes;
//! [`BlockDevice::pass_signal`](swapsim_core::BlockDevice::pass_signal)). `this-vm` is
//! one: reads issued behind a batch of writes wait for the whole batch.
//!
//! # Presets
//!
//! Only `virtio` (by fio), `this-vm` (by the kernel's block tracepoints while swapping)
//! and `this-vm-zram` are measured, all on the validation machine. The others are typical published figures for their class, not
//! measurements of any unit; each constructor on [`DeviceProfile`] says where its numbers
//! come from.
//!
//! | preset | read 4 KiB | write 4 KiB | per KiB | channels | MiB/s | queue depth | rotational | notes |
//! |---|---|---|---|---|---|---|---|---|
//! | `nvme` | 77 µs | 18 µs | 0.5 µs | 48 | 3000 | 1023 | no | datacenter TLC NVMe (P4510 class) |
//! | `virtio` | 18.1 µs | 20.1 µs | 0.9 µs | 2 | 915 | 256 | yes | validation machine, fio-derived |
//! | `this-vm` | 7.4 + 10.5 µs | 6.2 + 10.5 µs | 0.6 / 0.3 µs | 1 | 915 / 1700 | 256 | yes | validation machine while swapping: the host's work, plus the pass's signal |
//! | `san` | 300 µs | 260 µs | 2.5 µs | 8 | 400 | 32 | yes | 2012-era FC/iSCSI LUN, cache hits |
//! | `hdd` | 0.13 ms + seek + 4.17 ms | same | 6.5 µs | 1 | 150 | 32 | yes | 7200 rpm, 15 ms full stroke |
//! | `disk-100mbs` | 0.5 ms | 0.5 ms | 1.0 µs | 2 | 95 | 256 | no | ~100 MB/s virtual disk, the 2020 mm_reclaim RFC's test guest |
//! | `zram` | 2.2 µs | 7.5 µs | 0.45 / 1.75 µs | 1 | 8192 | 128 | no | synchronous, lzo-rle CPU time as device time |
//! | `this-vm-zram` | 6.2 µs | 0.26 µs | 1.1175 / 0.065 µs | 1 | unlimited | 128 | no | `zram` fitted to the validation machine, on top of `CpuCosts::this_vm` |
//!
//! # How the virtio numbers were derived
//!
//! fio 3.33 ran on the validation machine's virtio-blk disk with `direct=1`, psync at queue
//! depth 1 and libaio at depth 32 (`validation/device/summary.json` in the shared
//! validation data). Mean completion latencies of random reads at depth 1 were 25.7 µs
//! (4 KiB; p50 24.7 µs), 29.1 µs (8 KiB), 37.0 µs (16 KiB), 56.8 µs (32 KiB) and
//! 137.4 µs (128 KiB). A least-squares line through them is 23.5 µs + 0.897 µs/KiB. fio
//! measures from user space; the kernel's block tracepoints saw ~18 µs from issue to
//! completion for 4-5 KiB reads, so about 7.7 µs of fio's figure lies above the block
//! layer. Keeping the slope and anchoring 4 KiB at 18 µs gives a block-level read base of
//! 14.5 µs. Random 4 KiB writes at depth 1 took 27.6 µs and sequential 128 KiB writes
//! 139.0 µs (0.898 µs/KiB), giving a write base of 16.5 µs after the same correction.
//! At depth 32, 4 KiB random reads reached 120,027 IOPS and writes 94,750 IOPS, about two
//! requests in service at once at the block-level service time, hence two channels.
//! Sequential 128 KiB reads at depth 32 reached 915.4 MiB/s, the pipe's bandwidth.
//! fio measured no write bandwidth at depth above 1. `this-vm` is fitted instead to the
//! kernel's block tracepoints per request while swapping, as a host that serves passes
//! ([`DeviceProfile::this_vm`]).
//! [`DeviceProfile::virtio`] lists every step.
//!
//! # Configuration
//!
//! [`DeviceConfig`] is the TOML form, `preset = "hdd"` plus any [`DeviceProfile`] field as
//! an override. It rejects unknown keys, and [`DeviceConfig::resolve`] validates the
//! result: errors name the field and value, e.g. `queue_depth: 0 is below 1`.

#![warn(missing_docs)]

mod config;
mod model;
mod profile;

pub use config::DeviceConfig;
pub use profile::{DeviceProfile, PRESETS};
