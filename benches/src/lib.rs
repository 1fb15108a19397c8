//! Shared set-up for the benchmarks and the measurement examples: one virtio swap device
//! and the kernel's scaling cluster readahead, from a fixed seed.

use swapsim_core::gen::GeneratorConfig;
use swapsim_core::{ByteSize, CoreConfig, Policies, Setup, SimRng, SwapDeviceSpec};
use swapsim_devices::DeviceConfig;
use swapsim_policies::{ReadaheadConfig, ReadaheadContext};

/// Seed of every benchmark run.
pub const SEED: u64 = 42;

/// A run of `gen` under `memcg_limit` on a 512 MiB virtio swap device.
pub fn setup(gen: &GeneratorConfig, memcg_limit: Option<ByteSize>, page_cluster: u32) -> Setup {
    let mut cfg = CoreConfig::default();
    cfg.memcg.limit = memcg_limit;
    cfg.swap.page_cluster = page_cluster;
    cfg.devices.push(SwapDeviceSpec { name: "vda".into(), size: ByteSize::mib(512), priority: None });
    let device = DeviceConfig::preset("virtio")
        .build(SimRng::derive(SEED, "devices.vda"))
        .expect("the virtio preset is valid");
    let ctx = ReadaheadContext { vma_ra_enabled: true, any_rotational: true };
    Setup {
        config: cfg.validate().expect("benchmark configuration is valid"),
        seed: SEED,
        devices: vec![device],
        policies: Policies::default().with_readahead(ReadaheadConfig::Cluster.build(&ctx)),
        tasks: gen.tasks(SEED),
        timeline: Vec::new(),
    }
}
