//! Configuration owned by the core: machine, memory cgroup, swap, block layer, CPU costs
//! and run limits.
//!
//! Parse, then validate, then build: deserialising checks only the shape; `validate()`
//! checks ranges and cross-field rules and returns a [`ValidatedConfig`], the only form the
//! engine accepts. Every field's doc states its default and unit.

use crate::error::ConfigError;
pub use crate::size::ByteSize;
use serde::{Deserialize, Serialize};

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
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            memory: ByteSize::gib(4),
            cpus: 1,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            base_slice_ns: None,
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
}

impl Default for MemcgConfig {
    fn default() -> Self {
        MemcgConfig { limit: None, swappiness: 60, version: 2, zswap_max: None, zswap_writeback: true }
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

/// Kernel CPU time charged for modelled work, in nanoseconds. The defaults are rough
/// figures for a modern x86 core; `this-vm` style profiles are fitted from measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuCosts {
    /// User CPU per access when the trace carries no timestamps. Default 200.
    pub access_ns: u64,
    /// Fault entry and exit, charged to every fault. Default 500.
    pub fault_ns: u64,
    /// Allocating, zeroing and mapping a new anonymous page. Default 1500.
    pub anon_fault_ns: u64,
    /// Swap-cache lookup and mapping on a swap fault. Default 800.
    pub swapin_map_ns: u64,
    /// Per page read submitted (allocation, swap-cache insert, bio). Default 1200.
    pub swapin_submit_ns: u64,
    /// Per page looked at by reclaim (isolate, rmap walk, reference check). Default 250.
    pub reclaim_scan_ns: u64,
    /// Per page unmapped and submitted for writeback. Default 1500.
    pub swapout_submit_ns: u64,
    /// Per page freed by reclaim. Default 300.
    pub reclaim_free_ns: u64,
    /// Per swap slot visited by swapoff's page-table walk. Default 100.
    pub swapoff_walk_ns: u64,
    /// Switching a CPU from one task to another. Default 2000.
    pub context_switch_ns: u64,
    /// From an I/O completion to the sleeping task running again (interrupt, wakeup,
    /// scheduling), charged to the task. Default 2000.
    pub wakeup_ns: u64,
    /// A fault that slept on a folio's read finishes through `VM_FAULT_RETRY`: it retakes
    /// the mmap lock, walks the page table again, finds the folio in the swap cache and
    /// maps it, with the swap-in's memcg charge and refault bookkeeping on the way.
    /// Charged once per fault that slept, on top of `swapin_map_ns`. Default 2000.
    pub fault_retry_ns: u64,
    /// zswap's work per page stored beyond compressing it: the zsmalloc allocation and
    /// copy, the tree insert, the LRU add and the accounting. Default 1500.
    pub zswap_store_ns: u64,
    /// zswap's work per page loaded beyond decompressing it: the lookup, the zsmalloc
    /// mapping, freeing the entry, and the swap-in's memory cgroup charge and refault
    /// bookkeeping that a fault which slept pays in `fault_retry_ns`. Default 2000.
    pub zswap_load_ns: u64,
    /// MGLRU's aging page-table walk, per PTE it looks at (`walk_pte_range`): a
    /// cache-friendly sweep of a PTE table with a test-and-clear of each young bit.
    /// Not fitted to a measurement (the validation kernel runs without MGLRU). Default 10.
    pub aging_pte_ns: u64,
    /// A process started during the run (a job of a queue): `fork`, `execve`, the
    /// dynamic loader and the program's start-up, on its CPU before its first access.
    /// Default 500000.
    pub exec_ns: u64,
    /// Page faults a process started during the run takes while it starts (its binary,
    /// libraries and stack, already in the page cache: minor faults that charge no memory
    /// of the model). Default 0.
    pub exec_faults: u64,
    /// Tearing down an exiting process's memory (`exit_mmap`), per PTE that maps a page or
    /// holds a swap entry, charged to the exiting task before its exit is seen. Default
    /// 250.
    pub exit_page_ns: u64,
}

impl CpuCosts {
    /// These costs on a machine `factor` times as slow (a `factor` below 1 is faster):
    /// every time multiplied and rounded to whole nanoseconds, `exec_faults` (a count)
    /// unchanged.
    pub fn scaled(&self, factor: f64) -> CpuCosts {
        let t = |ns: u64| (ns as f64 * factor).round() as u64;
        CpuCosts {
            access_ns: t(self.access_ns),
            fault_ns: t(self.fault_ns),
            anon_fault_ns: t(self.anon_fault_ns),
            swapin_map_ns: t(self.swapin_map_ns),
            swapin_submit_ns: t(self.swapin_submit_ns),
            reclaim_scan_ns: t(self.reclaim_scan_ns),
            swapout_submit_ns: t(self.swapout_submit_ns),
            reclaim_free_ns: t(self.reclaim_free_ns),
            swapoff_walk_ns: t(self.swapoff_walk_ns),
            context_switch_ns: t(self.context_switch_ns),
            wakeup_ns: t(self.wakeup_ns),
            fault_retry_ns: t(self.fault_retry_ns),
            zswap_store_ns: t(self.zswap_store_ns),
            zswap_load_ns: t(self.zswap_load_ns),
            aging_pte_ns: t(self.aging_pte_ns),
            exec_ns: t(self.exec_ns),
            exec_faults: self.exec_faults,
            exit_page_ns: t(self.exit_page_ns),
        }
    }

    /// Costs fitted to the timings of this project's validation cases (Linux 6.18 on a
    /// 2-core VM, validation/linux-6.18), by decomposing the measured times rather than
    /// by a free fit:
    ///
    /// - Fills (A: 131,072 pages, 65,536 written out, 0.79 s; zipf: 196,608 and 131,072,
    ///   1.37 s; B: 393,216 and 328,613, 3.09 s) solve to ≈3.3 µs per page filled plus
    ///   ≈5.45 µs per page written out: `access_ns` + `fault_ns` + `anon_fault_ns` = 3.3 µs
    ///   (the workload writes 4 KiB of random bytes per page), and reclaim's scans, unmap,
    ///   submission and free ≈ 5.4 µs per page written.
    /// - Swapoff (B-pc0: 328,543 requests of one page, 8.82 s; B-pc3: 246,409 requests for
    ///   328,540 pages, 6.89 s; block service ≈17.7 µs) solves to ≈2.7 µs of CPU per page
    ///   and ≈6.5 µs per request beyond the device's service time: the wakeup after each
    ///   read (`wakeup_ns`) and the per-page swap-in work (`swapin_submit_ns` +
    ///   `swapin_map_ns` + `swapoff_walk_ns`).
    /// - The live cases' passes, replayed with the device's fio fit and the costs above,
    ///   come out short by a steady ≈6.5 µs per major fault on the cases without readahead
    ///   (6.1 µs A-seq-pc0, 6.5 µs A-zipf-pc0, 7.5 µs A-rand): the work a fault does that
    ///   swapoff does not, after its read: the `VM_FAULT_RETRY` round trip and the
    ///   swap-in's memcg charge (`fault_retry_ns`). The cases with readahead keep a
    ///   further ≈1.4 µs per readahead page unexplained, which the profile leaves out.
    /// - zswap (C-zswap-lzo-shrinkerN against C-nozswap-baseline, same trace): the fill
    ///   that stores 66k pages in zswap takes as long as the one that writes them to the
    ///   disk (0.82 s and 0.78 s), so a store costs what the disk path's submission does:
    ///   lzo's ≈1.5 µs plus `zswap_store_ns` 2 µs. The passes then leave ≈6.5 µs per
    ///   zswap load beyond decompression, the same work a fault that slept pays in
    ///   `fault_retry_ns` (the charge and the refault bookkeeping): `zswap_load_ns`.
    /// - A process started by a launcher (the queue cases' jobs): 335 minor faults from the
    ///   fork to the program's `main`, measured on the machine for a forked Python launcher
    ///   that moves the child into the memory cgroup, pins it and execs a small program
    ///   (about 230 of them copy-on-write faults of the parent's pages before `exec`);
    ///   `exec_ns` 0.5 ms, the fork and `exec` on the job's CPU (the cgroup move's wait for
    ///   an RCU grace period, about 7.5 ms, sleeps and belongs to the launcher's delay).
    /// - Exit: `exit_mmap` of a process measured at about 280 ns per page mapped or swapped.
    pub fn this_vm() -> CpuCosts {
        CpuCosts {
            access_ns: 500,
            fault_ns: 500,
            anon_fault_ns: 2300,
            swapin_map_ns: 1000,
            swapin_submit_ns: 1500,
            reclaim_scan_ns: 400,
            swapout_submit_ns: 3500,
            reclaim_free_ns: 600,
            swapoff_walk_ns: 200,
            context_switch_ns: 2000,
            wakeup_ns: 5000,
            fault_retry_ns: 6500,
            zswap_store_ns: 2000,
            zswap_load_ns: 6500,
            aging_pte_ns: 10,
            exec_ns: 500_000,
            exec_faults: 335,
            exit_page_ns: 280,
        }
    }
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            access_ns: 200,
            fault_ns: 500,
            anon_fault_ns: 1500,
            swapin_map_ns: 800,
            swapin_submit_ns: 1200,
            reclaim_scan_ns: 250,
            swapout_submit_ns: 1500,
            reclaim_free_ns: 300,
            swapoff_walk_ns: 100,
            context_switch_ns: 2000,
            wakeup_ns: 2000,
            fault_retry_ns: 2000,
            zswap_store_ns: 1500,
            zswap_load_ns: 2000,
            aging_pte_ns: 10,
            exec_ns: 500_000,
            exec_faults: 0,
            exit_page_ns: 250,
        }
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
    /// frames, they are only counted into the image. Default 256 MiB, what a distribution
    /// kernel with its modules and a few hundred MiB of slab and page tables takes on a
    /// desktop-sized machine; capped at 1/8 of RAM ([`HibernationConfig::kernel_pages`])
    /// so that the small machines of tests stay plausible.
    pub kernel_image: ByteSize,
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
        HibernationConfig { kernel_image: ByteSize::mib(256), freeze_ms: 200, poweroff_ms: 500 }
    }
}

impl HibernationConfig {
    /// Pages of kernel memory in an image on a machine of `ram_pages`: `kernel_image`,
    /// at most 1/8 of RAM.
    pub fn kernel_pages(&self, ram_pages: u64) -> u64 {
        self.kernel_image.pages().min(ram_pages / 8)
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
        if self.machine.cpus == 0 || self.machine.cpus > 1024 {
            return bad("machine.cpus", format!("{} is outside 1..=1024", self.machine.cpus));
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
        if self.memcg.swappiness > 200 {
            return bad("memcg.swappiness", format!("{} is outside 0..=200", self.memcg.swappiness));
        }
        if !matches!(self.memcg.version, 1 | 2) {
            return bad("memcg.version", format!("{} is not 1 or 2", self.memcg.version));
        }
        if self.swap.page_cluster > 31 {
            return bad("swap.page_cluster", format!("{} is outside 0..=31", self.swap.page_cluster));
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
                return bad(&field, format!("{} exceeds 16TiB", dev.size));
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
}
