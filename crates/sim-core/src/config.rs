//! Configuration owned by the core: machine, memory cgroup, swap, block layer, CPU costs
//! and run limits.
//!
//! Parse, then validate, then build: deserialising checks only the shape; `validate()`
//! checks ranges and cross-field rules and returns a [`ValidatedConfig`], the only form the
//! engine accepts. Every field's doc states its default and unit.

use crate::error::ConfigError;
pub use crate::size::ByteSize;
use serde::{Deserialize, Serialize};

mod cpu;
pub use cpu::{CpuCosts, CPU_COST_NS_MAX, EXEC_FAULTS_MAX};

/// The simulated machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MachineConfig {
    /// Physical memory. Default 4GiB.
    pub memory: ByteSize,
    /// Number of CPUs tasks run on. Default 1.
    pub cpus: u32,
    /// `vm.min_free_kbytes` override in KiB; default derived from memory as the kernel does
    /// (`sqrt(16 × memory_KiB)`, clamped to [128, 262144]).
    pub min_free_kbytes: Option<u64>,
    /// `vm.watermark_scale_factor` in units of 0.01 %. Default 10.
    pub watermark_scale_factor: u32,
    /// The scheduler's base slice in nanoseconds (EEVDF's `sysctl_sched_base_slice`):
    /// how long a task runs before another runnable task on its CPU takes its turn.
    /// Default the kernel's, 750 µs × (1 + log2 of the CPUs online, at most 8)
    /// ([`MachineConfig::base_slice`]).
    pub base_slice_ns: Option<u64>,
    /// CPUs besides `cpus` on which no task runs, where unbound kernel work runs at once
    /// (the zswap pool-limit worker, a work item of an unbound workqueue): a machine whose
    /// workload is pinned to `cpus` of its CPUs, as the validation's are (2 vCPUs, the
    /// workload on one). Default 0: the worker takes its turns on the tasks' CPUs. The
    /// model has one such worker, so any count above 0 behaves as 1.
    /// kswapd is modelled on a CPU of its own either way.
    pub housekeeping_cpus: u32,
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            memory: ByteSize::gib(4),
            cpus: 1,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            base_slice_ns: None,
            housekeeping_cpus: 0,
        }
    }
}

impl MachineConfig {
    /// The base slice in nanoseconds: `base_slice_ns`, or the kernel's default for
    /// `cpus` CPUs (`update_sysctl` with logarithmic tunable scaling: 750 µs ×
    /// (1 + ilog2(min(cpus, 8)))).
    pub fn base_slice(&self) -> u64 {
        self.base_slice_ns.unwrap_or_else(|| 750_000 * u64::from(1 + self.cpus.clamp(1, 8).ilog2()))
    }
}

/// The memory cgroup every task runs in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemcgConfig {
    /// `memory.max` (v1 `memory.limit_in_bytes`); absent means unlimited. Default unlimited.
    pub limit: Option<ByteSize>,
    /// `vm.swappiness` / `memory.swappiness`, 0..=200. Default 60.
    pub swappiness: u32,
    /// cgroup version 1 or 2. A reclaimer that meets a folio already under writeback
    /// activates it with v2, as `shrink_folio_list` does; with v1 the kernel would wait for
    /// the write, which the model simplifies to keeping the folio in place. Default 2.
    pub version: u8,
    /// `memory.zswap.max` (cgroup v2): compressed bytes the group may keep in zswap;
    /// absent means unlimited. Default unlimited.
    pub zswap_max: Option<ByteSize>,
    /// `memory.zswap.writeback` (cgroup v2): whether the group's zswap entries may be
    /// written back to the swap device. Default true.
    pub zswap_writeback: bool,
    /// Page cache the group's tasks keep hot and that is charged to the group: program
    /// text, shared libraries, the headers a build reads over and over (with no limit,
    /// the machine's). It takes its pages of memory and of the limit, and it sits on the
    /// file LRU lists, where the classic LRU's reclaim scans it, which keeps
    /// `shrink_lruvec`'s loop, and with it the aging of the active anonymous list, going
    /// while the inactive anonymous list is empty. Simplified: every scan finds these
    /// pages referenced, so they are never evicted, never read and never written; they do
    /// not enter the anon/file cost balance; the MGLRU model does not scan them. Default 0:
    /// the validation's workloads, anonymous memory in a fresh cgroup, had none there.
    pub page_cache: ByteSize,
    /// Kernel memory each process charges to the group beside its PTE pages, charged
    /// before its first PTE page (its first fault in the group) and released at its exit:
    /// the upper page-table levels its mappings newly need (`pmd_alloc_one`, one page per
    /// 1 GiB of address space, and `pud_alloc_one`, per 512 GiB, both with
    /// `GFP_PGTABLE_USER`) and the accounted slab of its VMAs and anon_vmas (the first
    /// object charges a whole page). A whole number of pages. Measured on the
    /// validation machine's 6.18 for a process that joins the group after it started and
    /// then maps and touches one 768 MiB region: `memory.kmem.usage_in_bytes` reads its 384
    /// PTE pages and 2 more, which the validation's scenarios charge (8 KiB); where the
    /// region crosses a 1 GiB boundary (which ASLR decides) one of them is a PMD page. A
    /// process exec'd inside the group charges its whole page-table tree there as well
    /// (18 to 20 pages for a small C program on that kernel). Default 0: PTE pages only.
    pub process_kmem: ByteSize,
}

impl Default for MemcgConfig {
    fn default() -> Self {
        MemcgConfig {
            limit: None,
            swappiness: 60,
            version: 2,
            zswap_max: None,
            zswap_writeback: true,
            page_cache: ByteSize(0),
            process_kmem: ByteSize(0),
        }
    }
}

/// One swap device as the core sees it; its latency model is built elsewhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapDeviceSpec {
    /// Name used in reports (e.g. "vda"). Must be unique.
    pub name: String,
    /// Size of the swap area, header page included.
    pub size: ByteSize,
    /// `swapon -p`: 0..=32767; absent gives -2, -3, ... in listed order as the kernel does.
    #[serde(default)]
    pub priority: Option<i16>,
    /// What the swap area lives on: "file" (a swap file on a filesystem) or "block" (a
    /// partition or a whole device such as zram). A swap file never holds large folios
    /// whole: every large folio is split at swap-out (measured on 6.18). Absent: "block"
    /// for a synchronous device (zram), "file" otherwise.
    #[serde(default)]
    pub backing: Option<SwapBacking>,
}

/// What a swap area lives on (see [`SwapDeviceSpec::backing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapBacking {
    /// A swap file on a filesystem.
    File,
    /// A block device: a partition, a disk, zram.
    Block,
}

/// Swap policy knobs that are not device specific.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwapConfig {
    /// `vm.page-cluster`: readahead reads at most 2^page_cluster pages, 0..=31. Default 3.
    pub page_cluster: u32,
    /// `/sys/kernel/mm/swap/vma_ra_enabled`. Default true. Any rotational swap device forces
    /// cluster readahead regardless, as the kernel does.
    pub vma_ra_enabled: bool,
    /// Slots per allocation cluster (`SWAPFILE_CLUSTER`). Default 512.
    pub cluster_slots: u32,
    /// Whether swapoff credits readahead hits to the readahead heuristics. Kernels 5.8
    /// to 6.17 do ("credited", commit ebc5951eea49); earlier kernels did not, and 6.18,
    /// whose swapoff looks pages up without the readahead bookkeeping, credits none
    /// either ("ignored", measured on this project's validation machine). Default
    /// "ignored".
    pub swapoff_readahead_hits: SwapoffHits,
}

/// How swapoff accounts readahead hits (see [`SwapConfig::swapoff_readahead_hits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapoffHits {
    /// Hits are not seen: `PG_readahead` stays set and no `swap_ra_hit` is counted.
    #[default]
    Ignored,
    /// Hits are credited as on a fault.
    Credited,
}

impl Default for SwapConfig {
    fn default() -> Self {
        SwapConfig {
            page_cluster: 3,
            vma_ra_enabled: true,
            cluster_slots: 512,
            swapoff_readahead_hits: SwapoffHits::Ignored,
        }
    }
}

/// Block layer settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlockConfig {
    /// Per-task plugging around readahead and reclaim batches (`blk_start_plug`). Default true.
    pub plugging: bool,
    /// Scheduler merging of queued requests (mq-deadline back and front merges). Default true.
    pub scheduler_merges: bool,
    /// Flush a plug holding this many requests (`BLK_MAX_REQUEST_COUNT`). Default 32.
    pub plug_max_requests: u32,
    /// Flush a plug whose last request is at least this big, in KiB (`BLK_PLUG_FLUSH_SIZE`). Default 128.
    pub plug_flush_kb: u32,
}

impl Default for BlockConfig {
    fn default() -> Self {
        BlockConfig { plugging: true, scheduler_merges: true, plug_max_requests: 32, plug_flush_kb: 128 }
    }
}

/// Limits on a run, so that a runaway scenario ends with a reported outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Stop after this many queued events. Default 2_000_000_000.
    pub max_events: u64,
    /// Stop when simulated time passes this many seconds. Default 86400.
    pub max_sim_seconds: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig { max_events: 2_000_000_000, max_sim_seconds: 86_400 }
    }
}

/// What a report holds besides its totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportConfig {
    /// Sample the machine's state every this much simulated time into the report's
    /// `series` (`crate::series`). Default none: no series, and no cost.
    pub sample_every: Option<crate::time::SimDuration>,
}

impl ReportConfig {
    /// Whether nothing is asked beyond the totals.
    pub fn is_default(&self) -> bool {
        *self == ReportConfig::default()
    }
}

/// Which LRU model reclaim uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LruModel {
    /// The kernel's two-list active/inactive LRU (`mm/vmscan.c`).
    #[default]
    Classic,
    /// A strict LRU in access order with no second chance, for checking the engine
    /// against textbook models; not a kernel policy.
    Exact,
    /// The multi-generational LRU (`CONFIG_LRU_GEN`, mm/vmscan.c's lru_gen section),
    /// tuned by [`LruGenConfig`].
    Mglru,
    /// Belady's optimal policy: like `Exact`, one page evicted per memory-cgroup miss, but
    /// the victim is the resident page used again furthest in the future. It needs every
    /// task's access stream to know each access's next use
    /// ([`crate::AccessSource::next_use`]); a reference model, not a kernel policy.
    Opt,
}

/// MGLRU's knobs, `/sys/kernel/mm/lru_gen/`. Read only when `lru = "mglru"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LruGenConfig {
    /// `enabled`: the capability mask. 0x0001 is the main switch and must be set;
    /// 0x0002 lets aging walk page tables (`walk_mm`), without it aging only advances
    /// the generation counter and eviction's look-around finds the young pages; 0x0004
    /// lets the walk clear the accessed bits of non-leaf PMD entries, which saves the
    /// kernel time but changes nothing the model decides. Default 0x0007, as x86
    /// kernels built with `CONFIG_LRU_GEN_ENABLED` start.
    pub enabled: u32,
    /// `min_ttl_ms`: kswapd invokes the OOM killer when the oldest generation is younger
    /// than this, rather than evict a working set that young. 0 (default) turns it off.
    pub min_ttl_ms: u64,
}

impl Default for LruGenConfig {
    fn default() -> Self {
        LruGenConfig { enabled: 0x0007, min_ttl_ms: 0 }
    }
}

impl LruGenConfig {
    /// Whether aging walks page tables (capability 0x0002).
    pub fn walks_mmu(&self) -> bool {
        self.enabled & 0x0002 != 0
    }
}

/// Hibernation's settings (`[hibernation]`), read by the `hibernate` and `resume`
/// timeline operations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HibernationConfig {
    /// The kernel's own memory that every image holds (text, data, slab, page tables,
    /// per-CPU areas), which the model does not otherwise simulate: these pages are not
    /// frames, they are only counted into the image. Unset, 256 MiB, what a distribution
    /// kernel with its modules and a few hundred MiB of slab and page tables takes on a
    /// desktop-sized machine, capped at 1/8 of RAM ([`HibernationConfig::kernel_pages`])
    /// so that the small machines of tests stay plausible. Set, it is used as given, and
    /// must be at most half of `machine.memory`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_image: Option<ByteSize>,
    /// Freezing the tasks, syncing file systems and suspending devices before the image
    /// is made (`freeze_processes`, `ksys_sync`, `dpm_suspend`), in milliseconds. Default
    /// 200: the freezer's typical tens of milliseconds plus device suspend on a VM.
    pub freeze_ms: u64,
    /// Powering off after the image is written (`dpm_suspend` of the remaining devices,
    /// `kernel_power_off`), in milliseconds. Default 500, a typical VM's power-off.
    pub poweroff_ms: u64,
}

impl Default for HibernationConfig {
    fn default() -> Self {
        HibernationConfig { kernel_image: None, freeze_ms: 200, poweroff_ms: 500 }
    }
}

impl HibernationConfig {
    /// The kernel image when `kernel_image` is unset, before the cap at 1/8 of RAM.
    pub const DEFAULT_KERNEL_IMAGE: ByteSize = ByteSize::mib(256);

    /// Pages of kernel memory in an image on a machine of `ram_pages`: `kernel_image`
    /// when set, else [`Self::DEFAULT_KERNEL_IMAGE`] but at most 1/8 of RAM.
    pub fn kernel_pages(&self, ram_pages: u64) -> u64 {
        match self.kernel_image {
            Some(size) => size.pages(),
            None => Self::DEFAULT_KERNEL_IMAGE.pages().min(ram_pages / 8),
        }
    }
}

/// Everything the core needs besides device models, policies and workloads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct CoreConfig {
    /// The machine.
    pub machine: MachineConfig,
    /// The memory cgroup.
    pub memcg: MemcgConfig,
    /// Swap knobs.
    pub swap: SwapConfig,
    /// Swap devices in swapon order.
    pub devices: Vec<SwapDeviceSpec>,
    /// LRU model: "classic" (default), "mglru", "exact" or "opt".
    pub lru: LruModel,
    /// MGLRU's knobs (`lru = "mglru"`).
    pub lru_gen: LruGenConfig,
    /// Block layer.
    pub block: BlockConfig,
    /// CPU cost profile.
    pub cpu: CpuCosts,
    /// Run limits.
    pub limits: LimitsConfig,
    /// Transparent huge pages and mTHP sizes.
    pub thp: crate::thp::ThpConfig,
    /// zswap's parameters.
    pub zswap: crate::zswap::ZswapConfig,
    /// Hibernation's settings.
    pub hibernation: HibernationConfig,
    /// What the report holds besides its totals: the time series.
    #[serde(skip_serializing_if = "ReportConfig::is_default")]
    pub report: ReportConfig,
    /// Contents of the pages of implicit regions (those a trace touches outside every
    /// declared region). Set by the scenario's `[workload] contents`.
    #[serde(skip)]
    pub implicit_contents: crate::contents::Contents,
}

/// A [`CoreConfig`] whose ranges and cross-field rules have been checked.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ValidatedConfig(CoreConfig);

impl ValidatedConfig {
    /// The checked configuration.
    pub fn get(&self) -> &CoreConfig {
        &self.0
    }
}

/// Bytes of the simulator's own memory each slot of a swap device takes while the device
/// is on: its packed per-slot word, plus zswap's entry index when zswap is enabled
/// (`zswap.enabled`; `swapon` sizes the index then).
/// Allocated at `swapon`, whether or not the slot is ever used.
pub fn host_bytes_per_swap_slot(zswap: bool) -> u64 {
    8 + if zswap { 4 } else { 0 }
}

impl CoreConfig {
    /// Checks ranges and cross-field rules.
    pub fn validate(self) -> Result<ValidatedConfig, ConfigError> {
        let bad =
            |field: &str, msg: String| Err(ConfigError::Invalid { field: field.to_string(), message: msg });
        let mem_pages = self.machine.memory.pages();
        if mem_pages < 1024 {
            return bad("machine.memory", format!("{} is below the minimum of 4MiB", self.machine.memory));
        }
        if mem_pages > (1 << 31) {
            return bad("machine.memory", format!("{} is above the maximum of 8TiB", self.machine.memory));
        }
        if self.report.sample_every.is_some_and(|every| every.0 == 0) {
            return bad("report.sample_every", "0 is not an interval; give a positive duration".to_string());
        }
        if self.machine.cpus == 0 || self.machine.cpus > 1024 {
            return bad("machine.cpus", format!("{} is outside 1..=1024", self.machine.cpus));
        }
        if self.machine.housekeeping_cpus > 1024 {
            return bad(
                "machine.housekeeping_cpus",
                format!("{} is above 1024", self.machine.housekeeping_cpus),
            );
        }
        if let Some(slice) = self.machine.base_slice_ns.filter(|s| !(100_000..=100_000_000).contains(s)) {
            return bad(
                "machine.base_slice_ns",
                format!("{slice} is outside 100000..=100000000 (0.1 ms to 100 ms)"),
            );
        }
        if let Some(limit) = self.memcg.limit {
            if limit.pages() < 16 {
                return bad("memcg.limit", format!("{limit} is below the minimum of 64KiB"));
            }
        }
        let room = self.memcg.limit.map_or(mem_pages, |l| l.pages().min(mem_pages));
        let of = if self.memcg.limit.is_some_and(|l| l.pages() < mem_pages) {
            "memcg.limit"
        } else {
            "machine.memory"
        };
        let kmem = self.memcg.process_kmem;
        if !kmem.0.is_multiple_of(crate::ids::PAGE_SIZE) {
            return bad("memcg.process_kmem", format!("{kmem} is not a whole number of 4KiB pages"));
        }
        for (field, size) in [("memcg.page_cache", self.memcg.page_cache), ("memcg.process_kmem", kmem)] {
            if size.pages() > 0 && size.pages() + 16 > room {
                return bad(
                    field,
                    format!("{size} leaves fewer than 16 pages of {of} ({room} pages) for anonymous memory"),
                );
            }
        }
        if self.memcg.swappiness > 200 {
            return bad("memcg.swappiness", format!("{} is outside 0..=200", self.memcg.swappiness));
        }
        if !matches!(self.memcg.version, 1 | 2) {
            return bad("memcg.version", format!("{} is not 1 or 2", self.memcg.version));
        }
        if self.swap.page_cluster > 31 {
            return bad("swap.page_cluster", format!("{} is outside 0..=31", self.swap.page_cluster));
        }
        if let Some(limit) = self.memcg.limit {
            if 1u64 << self.swap.page_cluster >= limit.pages() {
                return bad(
                    "swap.page_cluster",
                    format!(
                        "{}: a readahead window of {} pages is at least memcg.limit ({limit}, {} pages), so each \
                         window would evict what it just read and the run would make no progress; use at most {}",
                        self.swap.page_cluster,
                        1u64 << self.swap.page_cluster,
                        limit.pages(),
                        (limit.pages().max(2) - 1).ilog2()
                    ),
                );
            }
        }
        if !self.swap.cluster_slots.is_power_of_two() || self.swap.cluster_slots < 8 {
            return bad(
                "swap.cluster_slots",
                format!("{} is not a power of two of at least 8", self.swap.cluster_slots),
            );
        }
        if self.devices.len() > 32 {
            return bad(
                "swap.devices",
                format!("{} devices exceed the kernel's 32 swap types", self.devices.len()),
            );
        }
        for (i, dev) in self.devices.iter().enumerate() {
            let field = format!("swap.devices[{i}].size");
            let slots = dev.size.pages();
            if slots < 2 {
                return bad(&field, format!("{} holds no slot besides the header page", dev.size));
            }
            if slots > u64::from(u32::MAX) {
                return bad(
                    &field,
                    format!(
                        "{} is above the largest swap device, 16TiB minus one page ({} slots of 4KiB, inclusive)",
                        dev.size,
                        u32::MAX
                    ),
                );
            }
            if let Some(p) = dev.priority {
                if p < 0 {
                    return bad(
                        &format!("swap.devices[{i}].priority"),
                        format!("{p} is negative (swapon -p takes 0..=32767)"),
                    );
                }
            }
            if self.devices[..i].iter().any(|d| d.name == dev.name) {
                return bad(&format!("swap.devices[{i}].name"), format!("\"{}\" is used twice", dev.name));
            }
        }
        if self.block.plug_max_requests == 0 {
            return bad("block.plug_max_requests", "0 is below 1".to_string());
        }
        self.thp.validate()?;
        self.zswap.validate()?;
        if self.memcg.version != 2 && (self.memcg.zswap_max.is_some() || !self.memcg.zswap_writeback) {
            let field =
                if self.memcg.zswap_max.is_some() { "memcg.zswap_max" } else { "memcg.zswap_writeback" };
            return bad(field, "cgroup v1 has no such file: it needs memcg.version = 2".to_string());
        }
        if self.limits.max_events == 0 {
            return bad("limits.max_events", "0 is below 1".to_string());
        }
        if let Some(image) = self.hibernation.kernel_image {
            if image.pages() > mem_pages / 2 {
                return bad(
                    "hibernation.kernel_image",
                    format!(
                        "{image} is more than half of machine.memory ({}), the most the image's kernel part may take",
                        self.machine.memory
                    ),
                );
            }
        }
        for (name, ns) in self.cpu.costs_ns() {
            if ns > CPU_COST_NS_MAX {
                return bad(
                    &format!("cpu.{name}"),
                    format!(
                        "{ns} ns is above the longest cost accepted, {CPU_COST_NS_MAX} ns (10 s, inclusive)"
                    ),
                );
            }
        }
        if self.cpu.exec_faults > EXEC_FAULTS_MAX {
            return bad(
                "cpu.exec_faults",
                format!("{} is above the most accepted, {EXEC_FAULTS_MAX} (inclusive)", self.cpu.exec_faults),
            );
        }
        if self.lru_gen.enabled & !0x0007 != 0 {
            return bad(
                "lru_gen.enabled",
                format!(
                    "{:#06x} has bits outside 0x0007 (0x0001 core, 0x0002 walk, 0x0004 PMD)",
                    self.lru_gen.enabled
                ),
            );
        }
        if self.lru == LruModel::Mglru && self.lru_gen.enabled & 0x0001 == 0 {
            return bad(
                "lru_gen.enabled",
                format!(
                    "{:#06x} turns MGLRU off while lru = \"mglru\": set 0x0001 or use lru = \"classic\"",
                    self.lru_gen.enabled
                ),
            );
        }
        if self.lru_gen.min_ttl_ms > 86_400_000 {
            return bad("lru_gen.min_ttl_ms", format!("{} is above one day", self.lru_gen.min_ttl_ms));
        }
        for (field, ms) in [
            ("hibernation.freeze_ms", self.hibernation.freeze_ms),
            ("hibernation.poweroff_ms", self.hibernation.poweroff_ms),
        ] {
            if ms > 3_600_000 {
                return bad(field, format!("{ms} is above one hour"));
            }
        }
        Ok(ValidatedConfig(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let mut cfg = CoreConfig::default();
        cfg.memcg.swappiness = 300;
        let err = cfg.validate().unwrap_err();
        assert_eq!(err.to_string(), "memcg.swappiness: 300 is outside 0..=200");
    }

    #[test]
    fn page_cache_must_leave_room_under_the_limit() {
        let mut cfg = CoreConfig::default();
        cfg.memcg.limit = Some(ByteSize::mib(4));
        cfg.memcg.page_cache = ByteSize::mib(4);
        let err = cfg.clone().validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "memcg.page_cache: 4MiB leaves fewer than 16 pages of memcg.limit (1024 pages) for anonymous memory"
        );
        cfg.memcg.page_cache = ByteSize::mib(1);
        assert!(cfg.validate().is_ok());
    }

    #[test]
    fn process_kmem_is_whole_pages_that_leave_room_under_the_limit() {
        let mut cfg = CoreConfig::default();
        cfg.memcg.limit = Some(ByteSize::mib(4));
        cfg.memcg.process_kmem = ByteSize(6 * 1024);
        let err = cfg.clone().validate().unwrap_err();
        assert_eq!(err.to_string(), "memcg.process_kmem: 6KiB is not a whole number of 4KiB pages");
        cfg.memcg.process_kmem = ByteSize::mib(4);
        let err = cfg.clone().validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            "memcg.process_kmem: 4MiB leaves fewer than 16 pages of memcg.limit (1024 pages) for anonymous memory"
        );
        cfg.memcg.process_kmem = ByteSize(2 * crate::ids::PAGE_SIZE);
        assert!(cfg.validate().is_ok());
    }
}
