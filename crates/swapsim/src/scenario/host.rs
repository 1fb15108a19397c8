//! Whether this host can hold what a scenario asks the simulator to allocate up front.
//!
//! A swap device's per-slot state is allocated at `swapon`, whether or not its slots are
//! ever used: a 16 TiB device asks for 32 GiB of the simulator's own memory. Left to the
//! allocator, such a request aborts the process. It is checked here instead, against the
//! memory the host says is available (`MemAvailable` in /proc/meminfo), with an error
//! that says what the device needs and the largest size that fits. On a host without
//! /proc/meminfo nothing is checked.

use anyhow::{bail, Result};
use swapsim_core::config::{host_bytes_per_swap_slot, SwapDeviceSpec};
use swapsim_core::size::ByteSize;

/// Fails when the state of `devices` (with zswap's per-slot index when `zswap`) would not
/// fit in `available` bytes of host memory.
pub(super) fn check_swap_state(
    devices: &[SwapDeviceSpec],
    zswap: bool,
    available: Option<u64>,
) -> Result<()> {
    let Some(available) = available else { return Ok(()) };
    let per_slot = host_bytes_per_swap_slot(zswap);
    let mut total = 0u64;
    for (i, dev) in devices.iter().enumerate() {
        let need = dev.size.pages().saturating_mul(per_slot);
        total = total.saturating_add(need);
        if total > available {
            let left = available.saturating_sub(total - need);
            let fits = ByteSize((left / per_slot) / 256 * 256 * 4096);
            bail!(
                "swap.devices[{i}].size: {} needs {} of this host's memory to simulate ({per_slot} bytes per \
                 4KiB slot), and this host has {} available{}; the largest device that fits is {fits}",
                gib(dev.size.0),
                gib(need),
                gib(available),
                if i > 0 { " for all the devices together" } else { "" },
            );
        }
    }
    Ok(())
}

/// `bytes` in GiB to one decimal, as the error says sizes.
fn gib(bytes: u64) -> String {
    format!("{:.1}GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// `MemAvailable` from /proc/meminfo, in bytes, if the host has it.
pub(super) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim_core::config::SwapDeviceSpec;

    #[test]
    fn a_device_beyond_the_host_is_refused_with_what_it_needs_and_what_fits() {
        let devices = [SwapDeviceSpec {
            name: "vda".into(),
            size: ByteSize::gib(16383),
            priority: None,
            backing: None,
        }];
        let err = check_swap_state(&devices, false, Some(16 << 30))
            .expect_err("32 GiB of state in 16 GiB")
            .to_string();
        assert_eq!(
            err,
            "swap.devices[0].size: 16383.0GiB needs 32.0GiB of this host's memory to simulate (8 bytes per 4KiB \
             slot), and this host has 16.0GiB available; the largest device that fits is 8TiB"
        );
        assert!(check_swap_state(&devices, false, Some(33 << 30)).is_ok());
        assert!(
            check_swap_state(&devices, true, Some(33 << 30)).is_err(),
            "zswap's index takes 4 bytes more"
        );
        assert!(check_swap_state(&devices, false, None).is_ok(), "no /proc/meminfo, no check");
    }
}
