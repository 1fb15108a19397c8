//! The validation machine's speed in each session of measurements.
//!
//! Every case was measured on the same kind of machine (a two-vCPU virtual machine on a
//! shared host), but not in one sitting: each case names the kernel build it ran
//! (`kernel`, e.g. "6.18.44-fc-v769"), and a build is one boot of the machine, one session.
//! The host is shared with other work, and the same work did not take the same time in
//! every session. The CPU costs (`CpuCosts::this_vm`) and the device presets (`this-vm`,
//! `this-vm-zram`) were fitted to the cases of the v595 and v769 sessions, whose fills (CPU
//! work the workload's pattern does not change) every case of those sessions reproduces
//! within 0.95x to 1.15x. A session in which the same work measurably took longer is
//! listed in [`SESSIONS`] with how much longer, and its cases are replayed on a machine
//! that much slower: every CPU cost scaled (zram's and zswap's compression included), and
//! the disk's reads slowed by the session's own figure.
//!
//! A session is calibrated only from figures of its own cases that the model does not
//! otherwise have to explain (a fill's CPU time, a read's service time on an idle disk),
//! never from the figures the session's other cases are judged on, and the calibration
//! names them. A session with a single case cannot calibrate itself and is replayed at the
//! fitted speed (v657: `D2-mthp16-64-zipf0.9-zram`, which runs about 0.8x the kernel's
//! time in fill and passes alike).

use swapsim_core::config::CpuCosts;
use swapsim_core::contents::{Compressor, Contents};
use swapsim_devices::DeviceConfig;

/// One session's speed relative to the sessions the costs were fitted in.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Session {
    /// The kernel build the session ran, as cases name it.
    pub kernel: &'static str,
    /// How many times longer the session's CPU took for the same work.
    pub cpu: f64,
    /// How many times longer the session's disk took to serve a 4 KiB read.
    pub disk_read: f64,
    /// The figures the factors come from.
    pub evidence: &'static str,
}

/// The sessions measured slower than the fitted speed.
pub const SESSIONS: &[Session] = &[Session {
    kernel: "6.18.44-fc-v782",
    cpu: 1.45,
    disk_read: 2.0,
    evidence: "CPU: the fill of D2-mthp16-64-seq768-p3-zram (768 MiB written once with 16 and 64 kB \
               folios, every eviction compressed into zram, no I/O wait) took 1.080 s (0.925 to 1.109 s) \
               where the fitted costs give 0.746 s. Disk: the 4 KiB swap-in reads of \
               C-zswap-lzo-shrinkerN-pool1pct-zipf-768M took 37 us at the median from issue to completion \
               (36 to 37 us over its runs), against 18 to 19 us in every swap-file case of the v769 \
               session on the same disk.",
}];

/// The session a case's kernel build ran in, if it is calibrated.
pub(super) fn session(kernel: &str) -> Option<&'static Session> {
    SESSIONS.iter().find(|s| s.kernel == kernel)
}

impl Session {
    /// The CPU costs of this session, for a workload whose pages hold `contents` and a
    /// zswap pool compressing with `compressor` (when zswap is on): every cost scaled, and
    /// the compression and decompression a zswap store and load pay scaled too, through
    /// the store and load costs.
    pub(super) fn cpu_costs(&self, contents: &Contents, zswap: Option<Compressor>) -> CpuCosts {
        let mut cpu = CpuCosts::this_vm().scaled(self.cpu);
        if let Some(compressor) = zswap {
            let extra = |ns: u64| ((self.cpu - 1.0) * ns as f64).round() as u64;
            cpu.zswap_store_ns += extra(compressor.compress_ns(contents));
            cpu.zswap_load_ns += extra(compressor.decompress_ns(contents));
        }
        cpu
    }

    /// `model` in this session: zram's costs are CPU work and scale with the CPU; a disk's
    /// lone 4 KiB read takes `disk_read` times as long. On a disk whose host serves passes
    /// (`this-vm`) the signal after each pass grows and the host's work per request stays,
    /// as the per-request traces of a session as slow (2026-12-02: lone reads 39 to 42 µs,
    /// a signal of about 32 µs, the host's costs as in the fitted sessions) show; writes
    /// then slow by the same signal, without a figure of their own. On another disk the
    /// per-request base grows and the transfer rate stays.
    pub(super) fn device(&self, mut model: DeviceConfig) -> DeviceConfig {
        // An unknown preset is left for the scenario's validation to report.
        let Ok(profile) = model.resolve() else { return model };
        // The host's work for a 4 KiB read (all of a lone read's time without passes).
        let read_4k = profile.read_base_us + 4.0 * profile.read_us_per_kib;
        if profile.synchronous {
            model.read_base_us = Some(profile.read_base_us * self.cpu);
            model.read_us_per_kib = Some(profile.read_us_per_kib * self.cpu);
            model.write_base_us = Some(profile.write_base_us * self.cpu);
            model.write_us_per_kib = Some(profile.write_us_per_kib * self.cpu);
        } else if let Some(signal) = profile.pass_signal_us {
            // The host's own work stays; the guest learns of it later.
            model.pass_signal_us = Some((read_4k + signal) * self.disk_read - read_4k);
        } else {
            model.read_base_us = Some(read_4k * self.disk_read - 4.0 * profile.read_us_per_kib);
        }
        model
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_scales_every_cost_and_the_compression_with_it() {
        let s = Session { kernel: "k", cpu: 2.0, disk_read: 3.0, evidence: "" };
        let base = CpuCosts::this_vm();
        let cpu = s.cpu_costs(&Contents::Half, Some(Compressor::Lzo));
        assert_eq!(cpu.access_ns, 2 * base.access_ns);
        assert_eq!(cpu.exec_faults, base.exec_faults);
        let lzo = Compressor::Lzo.compress_ns(&Contents::Half);
        assert_eq!(cpu.zswap_store_ns, 2 * base.zswap_store_ns + lzo);
        assert_eq!(s.cpu_costs(&Contents::Half, None).zswap_store_ns, 2 * base.zswap_store_ns);
        // A 4 KiB read of the disk takes three times as long; zram's costs double.
        let resolve = |d: DeviceConfig| d.resolve().expect("a preset");
        let disk = resolve(s.device(DeviceConfig::preset("this-vm")));
        let fitted = resolve(DeviceConfig::preset("this-vm"));
        // A lone read: the host's work, then the pass's signal, which alone grows.
        let read = |p: &swapsim_devices::DeviceProfile| {
            p.read_base_us + 4.0 * p.read_us_per_kib + p.pass_signal_us.unwrap_or(0.0)
        };
        assert!((read(&disk) - 3.0 * read(&fitted)).abs() < 1e-9);
        assert_eq!((disk.read_base_us, disk.write_base_us), (fitted.read_base_us, fitted.write_base_us));
        // A disk completing each request on its own: the read's base grows instead.
        let virtio = resolve(s.device(DeviceConfig::preset("virtio")));
        assert!((read(&virtio) - 3.0 * read(&resolve(DeviceConfig::preset("virtio")))).abs() < 1e-9);
        let zram = resolve(s.device(DeviceConfig::preset("this-vm-zram")));
        assert_eq!(zram.read_base_us, 2.0 * resolve(DeviceConfig::preset("this-vm-zram")).read_base_us);
        assert!(session("6.18.44-fc-v782").is_some() && session("6.18.44-fc-v769").is_none());
    }
}
