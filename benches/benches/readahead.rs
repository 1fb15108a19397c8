//! Throughput of readahead policies' `plan`, fed a fixed stream of synthetic faults.
//!
//! The stream mixes what a swap-in sees: runs of sequential faults (in virtual pages and
//! in slots), jumps to random places, and swap-cache hits on readahead pages reported
//! through `observe`, spread over 16 VMAs so that VMA readahead keeps per-region state.
//! Every policy sees the same stream, built from a fixed seed. The IDs name the policy
//! and `vm.page-cluster`, e.g. `readahead/cluster/page_cluster=3`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use swapsim_core::{
    DeviceId, FaultView, Feedback, Readahead, ReadaheadPlan, RegionId, SpaceId, SwapSlot, TaskId, VirtPage,
};
use swapsim_policies::{ReadaheadConfig, ReadaheadContext};

/// Root seed of the fault stream.
const SEED: u64 = 0x5eed_0003;

/// Misses (calls to `plan`) per iteration.
const MISSES: u64 = 100_000;

/// Regions the faults are spread over, each `REGION_PAGES` long.
const REGIONS: u32 = 16;
const REGION_PAGES: u64 = 1 << 18;

/// Slots on the swap device, header included: enough for every page of every region.
const DEVICE_SLOTS: u32 = REGIONS * REGION_PAGES as u32 + 1;

/// SplitMix64: tiny, fast and fully determined by its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// One step of the stream: a swap-cache miss to plan, or a hit to report.
#[derive(Clone, Copy, Debug)]
enum Step {
    Miss(FaultView),
    Hit(Feedback),
}

/// Builds a stream of `MISSES` misses with hits in between. A sequential run continues
/// in the same region with the next page and the next slot; one miss in eight jumps to a
/// random page. After a miss, zero to three hits on the following pages are reported as
/// readahead hits, as a forward scan would produce.
fn fault_stream(page_cluster: u32) -> Vec<Step> {
    let mut rng = SplitMix64(SEED);
    let mut steps = Vec::new();
    let mut region = 0u32;
    let mut page = 0u64;
    for _ in 0..MISSES {
        if rng.below(8) == 0 {
            region = rng.below(u64::from(REGIONS)) as u32;
            page = rng.below(REGION_PAGES);
        } else {
            page = (page + 1 + rng.below(4)) % REGION_PAGES;
        }
        let region_start = u64::from(region) * REGION_PAGES;
        let vpage = region_start + page;
        // Slots follow virtual order, as they do after a sequential fill; slot 0 is the header.
        let offset = vpage as u32 + 1;
        let vma = VirtPage(region_start)..VirtPage(region_start + REGION_PAGES);
        let slot = SwapSlot { device: DeviceId(0), offset };
        let mut fault =
            FaultView::new(TaskId(0), SpaceId(0), RegionId(region), vma, VirtPage(vpage), slot, DEVICE_SLOTS);
        fault.page_cluster = page_cluster;
        steps.push(Step::Miss(fault));
        for i in 0..rng.below(4) {
            let hit_page = (page + 1 + i) % REGION_PAGES;
            steps.push(Step::Hit(Feedback::SwapCacheHit {
                region: RegionId(region),
                vpage: VirtPage(region_start + hit_page),
                readahead: true,
            }));
        }
    }
    steps
}

/// Pages a plan reads besides the target, for the result check. VMA plans are counted
/// as their page range.
fn window_pages(plan: ReadaheadPlan) -> u64 {
    match plan {
        ReadaheadPlan::TargetOnly => 1,
        ReadaheadPlan::Slots { first, last } => u64::from(last - first) + 1,
        ReadaheadPlan::Pages { first, last } => last.0 - first.0 + 1,
    }
}

/// Plays the stream through `policy`; returns (plans made, pages planned in total).
fn replay(policy: &mut dyn Readahead, steps: &[Step]) -> (u64, u64) {
    let mut n_plans = 0;
    let mut n_pages = 0;
    for step in steps {
        match *step {
            Step::Miss(fault) => {
                let plan = policy.plan(&fault);
                n_plans += 1;
                n_pages += window_pages(plan);
            }
            Step::Hit(feedback) => policy.observe(&feedback),
        }
    }
    (n_plans, n_pages)
}

fn bench_readahead(c: &mut Criterion) {
    let ctx = ReadaheadContext { vma_ra_enabled: true, any_rotational: false };
    let mut group = c.benchmark_group("readahead");
    group.sample_size(20);
    group.throughput(Throughput::Elements(MISSES));
    for page_cluster in [3u32, 5] {
        let steps = fault_stream(page_cluster);
        for cfg in [ReadaheadConfig::Cluster, ReadaheadConfig::Fixed, ReadaheadConfig::Vma] {
            let id = BenchmarkId::new(cfg.name(), format!("page_cluster={page_cluster}"));
            group.bench_with_input(id, &steps, |b, steps| {
                // A fresh policy per iteration, so every iteration plans from the same state.
                b.iter(|| replay(cfg.build(&ctx).as_mut(), black_box(steps)))
            });
            // Checked once, outside the timed loop: every miss planned, and the policy read
            // ahead at all (the stream is mostly sequential, so every policy should).
            let mut policy = cfg.build(&ctx);
            assert_eq!(policy.kind(), cfg.name());
            let (n_plans, n_pages) = replay(policy.as_mut(), &steps);
            assert_eq!(n_plans, MISSES, "{}: plans", cfg.name());
            assert!(n_pages > 2 * MISSES, "{}: only {n_pages} pages planned for {MISSES} misses", cfg.name());
            assert!(n_pages <= MISSES << page_cluster, "{}: windows beyond 2^page_cluster", cfg.name());
        }
    }
    group.finish();
}

criterion_group!(benches, bench_readahead);
criterion_main!(benches);
