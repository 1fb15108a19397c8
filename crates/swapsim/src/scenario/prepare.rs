//! From a scenario to a [`Prepared`] one: every policy it names checked against the built-in
//! ones and the registry, its sections turned into the engine's validated configuration, its
//! devices' profiles, its workload and its timeline resolved.

use super::*;

/// Checks that every policy `file` names is built in or in `registry`; the error is the
/// key and the message.
pub(super) fn check_policies(file: &ScenarioFile, registry: &Registry) -> Result<(), (String, String)> {
    let at = |family: Family| move |message: String| (family.key().to_owned(), message);
    registry.check(&file.swap.readahead).map_err(at(Family::Readahead))?;
    registry.check(&file.swap.allocator).map_err(at(Family::Allocator))?;
    registry.check(&file.thp.swapin).map_err(at(Family::Swapin))?;
    registry.check(&file.zswap.protection).map_err(at(Family::ZswapProtection))?;
    registry.check(&file.zswap.writeback).map_err(at(Family::ZswapWriteback))?;
    for (idx, entry) in file.timeline.iter().enumerate() {
        if let Some(readahead) = entry.readahead() {
            registry.check(readahead).map_err(|message| (format!("timeline[{idx}].readahead"), message))?;
        }
    }
    Ok(())
}

/// Validates `scenario` into a [`Prepared`] one; errors name the key at fault.
pub(super) fn validate(scenario: &Scenario) -> Result<Prepared> {
    let file = scenario.file.clone();
    check_policies(&file, &scenario.registry).map_err(|(key, message)| anyhow!("{key}: {message}"))?;
    let sample_every = match scenario.sample_every {
        Some(every) => Some(every),
        None => file.report.sample_every()?,
    };
    let swap = file.swap;
    let core = CoreConfig {
        machine: file.machine.clone(),
        memcg: file.memcg.clone(),
        swap: SwapConfig {
            page_cluster: swap.page_cluster,
            vma_ra_enabled: swap.vma_ra_enabled,
            cluster_slots: swap.cluster_slots,
            swapoff_readahead_hits: swap.swapoff_readahead_hits,
        },
        devices: swap
            .devices
            .iter()
            .map(|d| SwapDeviceSpec {
                name: d.name.clone(),
                size: d.size,
                priority: d.priority,
                backing: d.backing,
            })
            .collect(),
        lru: file.lru,
        lru_gen: file.lru_gen.clone(),
        hibernation: file.hibernation.clone(),
        block: file.block.clone(),
        cpu: file.cpu.clone(),
        limits: file.limits.clone(),
        thp: ThpConfig {
            enabled: file.thp.enabled,
            hugepages: file.thp.hugepages.clone(),
            implicit_madvise: file.workload.madvise.unwrap_or_default(),
        },
        zswap: file.zswap.core(),
        report: swapsim_core::config::ReportConfig { sample_every },
        implicit_contents: file.workload.contents.clone().unwrap_or_default(),
    };
    let core = core.validate()?;
    host::check_swap_state(&core.get().devices, core.get().zswap.enabled, host::available_memory())?;
    let device_names: Vec<&str> = swap.devices.iter().map(|d| d.name.as_str()).collect();
    let timeline = file
        .timeline
        .iter()
        .enumerate()
        .map(|(idx, entry)| entry.check(idx, &device_names))
        .collect::<Result<Vec<CheckedEntry>>>()?;
    let mut profiles = Vec::with_capacity(swap.devices.len());
    for (idx, device) in swap.devices.iter().enumerate() {
        let profile = device.model.resolve().with_context(|| format!("swap.devices[{idx}].model"))?;
        profiles.push(profile);
    }
    let readahead_ctx = ReadaheadContext {
        vma_ra_enabled: swap.vma_ra_enabled,
        any_rotational: profiles.iter().any(|p| p.rotational),
    };

    let contents = file.workload.contents.clone();
    if let Some(c) = &contents {
        c.validate("workload.contents")?;
    }
    let (workload, mut resolved_workload) = workload::resolve(file.workload, scenario)?;
    resolved_workload.contents = contents.filter(|c| *c != swapsim_core::contents::Contents::Random);
    if let Workload::Trace(trace) = &workload {
        trace.check()?;
    } else if file.lru == LruModel::Opt {
        bail!(
            "lru: \"opt\" needs a trace workload: Belady's policy evicts by each access's next use, \
             which a pass over the trace computes, and a generated workload or a queue has none"
        );
    }

    let resolved = ResolvedScenario {
        machine: file.machine,
        memcg: file.memcg,
        swap: ResolvedSwap {
            page_cluster: swap.page_cluster,
            vma_ra_enabled: swap.vma_ra_enabled,
            cluster_slots: swap.cluster_slots,
            readahead_resolved: registry::resolve_readahead(&swap.readahead, &readahead_ctx),
            readahead: swap.readahead.clone(),
            swapoff_readahead_hits: swap.swapoff_readahead_hits,
            allocator: swap.allocator.clone(),
            devices: swap
                .devices
                .iter()
                .zip(&profiles)
                .map(|(d, profile)| ResolvedDevice {
                    name: d.name.clone(),
                    size: d.size,
                    priority: d.priority,
                    model: profile.clone(),
                })
                .collect(),
        },
        lru: file.lru,
        lru_gen: file.lru_gen,
        hibernation: file.hibernation,
        thp: file.thp,
        zswap: file.zswap,
        block: file.block,
        cpu: file.cpu,
        limits: file.limits,
        workload: resolved_workload,
        report: sample_every.map(ResolvedReport::new),
        timeline: file.timeline,
    };
    Ok(Prepared {
        seed: scenario.seed.unwrap_or(file.seed),
        resolved,
        workload,
        core,
        profiles,
        readahead_ctx,
        timeline,
        registry: Arc::clone(&scenario.registry),
    })
}
