use std::io::BufRead;
use swapsim_core::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let pc: u32 = args[2].parse().unwrap();
    let ra = &args[3];
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut pages = 0u64;
    let mut acc = Vec::new();
    for line in f.lines() {
        let l = line.unwrap();
        if l.starts_with('#') {
            for tok in l.split_whitespace() {
                if let Some(v) = tok.strip_prefix("pages=") {
                    pages = v.parse().unwrap();
                }
            }
            continue;
        }
        let (op, p) = l.split_once(' ').unwrap();
        acc.push(Access { vpage: VirtPage(p.parse().unwrap()), write: op == "W", think_ns: None });
    }
    let mut cfg = CoreConfig::default();
    cfg.machine.memory = ByteSize::gib(24);
    cfg.memcg.limit = Some(ByteSize::mib(256));
    cfg.memcg.version = 1;
    cfg.swap.page_cluster = pc;
    cfg.devices.push(SwapDeviceSpec { name: "vda".into(), size: ByteSize::gib(2), priority: None });
    let dev = swapsim_devices::DeviceConfig::preset("virtio").build(SimRng::derive(1, "dev")).unwrap();
    let ctx = swapsim_policies::ReadaheadContext { vma_ra_enabled: true, any_rotational: true };
    let rac = swapsim_policies::ReadaheadConfig::from_name(ra).unwrap();
    let t0 = std::time::Instant::now();
    let n = acc.len();
    let r = run(Setup {
        config: cfg.validate().unwrap(),
        seed: 1,
        devices: vec![dev],
        readahead: rac.build(&ctx),
        tasks: vec![TaskSpec {
            name: "t".into(),
            regions: vec![RegionSpec { start: VirtPage(0), pages }],
            accesses: Box::new(acc.into_iter()),
        }],
    })
    .unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let v = &r.vmstat;
    println!(
        "accesses {} wall {:.2}s ({:.1} M/s) sim {:.2}s events {}",
        n,
        wall,
        n as f64 / wall / 1e6,
        r.sim_time_s,
        r.events
    );
    println!("pgfault {} pgmajfault {} pswpin {} pswpout {} swap_ra {} swap_ra_hit {} pgscan_anon {} pgsteal_anon {} refault {} activate {} pgactivate {} pgdeactivate {}",
      v.pgfault, v.pgmajfault, v.pswpin, v.pswpout, v.swap_ra, v.swap_ra_hit, v.pgscan_anon, v.pgsteal_anon, v.workingset_refault_anon, v.workingset_activate_anon, v.pgactivate, v.pgdeactivate);
    let b = &r.block[0];
    println!("reads: queued {} merges {} disp {} | writes queued {} merges {} disp {} | unplugs {} | read svc {:?}", b.reads.queued, b.reads.merges, b.reads.dispatches, b.writes.queued, b.writes.merges, b.writes.dispatches, b.io_unplugs, b.read_service);
    println!(
        "at_end rss {} swap {} outcome {:?} tasks {:?}",
        r.at_end.rss_pages, r.at_end.swap_pages, r.outcome, r.tasks
    );
}
