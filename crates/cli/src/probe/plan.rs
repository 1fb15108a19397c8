//! What a probe of one case changes on the machine: a list of [`Step`]s read from the
//! case's `setup` and the machine's current values, in the order they are applied.
//!
//! Every knob step carries the value the knob held when the plan was made, so that the
//! state file written before the first change holds every original value. A knob whose
//! value is already the one wanted stays in the plan (the dry run shows it) but is never
//! written; zswap's `enabled` parameter in particular is written only when it must change,
//! since the first write to it in a boot turns large-folio swap-in off until reboot.
//! What it deliberately does not do: write anything (see `setup`).

use super::host::{CgroupVersion, Host};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The name of the memory cgroup a probe makes.
pub(crate) const CGROUP_NAME: &str = "swapsim-probe";
/// zswap's parameters.
const ZSWAP: &str = "/sys/module/zswap/parameters";
/// zswap's `enabled` parameter: see the module documentation.
pub(crate) const ZSWAP_ENABLED: &str = "/sys/module/zswap/parameters/enabled";
/// The mTHP sizes' folder.
const THP: &str = "/sys/kernel/mm/transparent_hugepage";
/// MGLRU's folder.
const LRU_GEN: &str = "/sys/kernel/mm/lru_gen";

/// Where a probe puts what it creates.
#[derive(Clone, Debug)]
pub(crate) struct Places {
    /// The swap file of a case on a swap file, as a path on the machine.
    pub(crate) swap_file: String,
    /// The zram device of a case on zram (`zram0`).
    pub(crate) zram: String,
    /// An existing block device the user named for swap (`/dev/vdb1`): a swap-file or
    /// partition case swaps on it instead of a swap file. It is formatted, and touched in
    /// no other way.
    pub(crate) swap_device: Option<String>,
    /// The name of the disk the swap file or swap device lies on (`vda`), when known: its
    /// rotational flag is set as the case says, and restored.
    pub(crate) disk: Option<String>,
}

/// One change to the machine, and how it is undone.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Step {
    /// A knob set to `value`; restored to `original`, the value it held before.
    Knob { path: String, original: String, value: String },
    /// A cgroup v2 controller enabled for the children of a group (`+memory` in
    /// `cgroup.subtree_control`); disabled again.
    Controller { path: String, controller: String },
    /// The memory cgroup made; removed.
    Cgroup { dir: String },
    /// A file of the cgroup this probe made, told `value`; it goes with the cgroup.
    CgroupFile { path: String, value: String },
    /// A swap file allocated and formatted (`fallocate`, `mkswap`); removed.
    SwapFile { path: String, size_bytes: u64 },
    /// An existing block device the user named, formatted as swap of `size_bytes`
    /// (`mkswap`); its former contents are not restored.
    SwapDevice { path: String, size_bytes: u64 },
    /// A zram device reset, given an algorithm and a size, and formatted; reset again.
    Zram { device: String, algorithm: Option<String>, size_bytes: u64 },
    /// A swap area turned on; turned off.
    Swapon { path: String },
}

impl Step {
    /// Whether applying the step changes nothing: a knob already at its value.
    pub(crate) fn is_noop(&self) -> bool {
        matches!(self, Step::Knob { original, value, .. } if original == value)
    }

    /// One line for the dry run.
    pub(crate) fn describe(&self) -> String {
        match self {
            Step::Knob { path, original, value } if original == value => {
                format!("keep   {path} = {value} (already)")
            }
            Step::Knob { path, original, value } => format!("set    {path} = {value} (was {original})"),
            Step::Controller { path, controller } => format!("enable {controller} in {path}"),
            Step::Cgroup { dir } => format!("mkdir  {dir}"),
            Step::CgroupFile { path, value } => format!("set    {path} = {value}"),
            Step::SwapFile { path, size_bytes } => {
                format!("create swap file {path} of {size_bytes} bytes (fallocate, mkswap)")
            }
            Step::SwapDevice { path, size_bytes } => {
                format!("format {path} as swap of {size_bytes} bytes (mkswap; its former contents are lost)")
            }
            Step::Zram { device, algorithm, size_bytes } => format!(
                "set up /dev/{device}: reset, comp_algorithm {}, disksize {size_bytes}, mkswap",
                algorithm.as_deref().unwrap_or("(kernel default)")
            ),
            Step::Swapon { path } => format!("swapon {path}"),
        }
    }
}

/// What a probe of one case will do.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The case file, for messages.
    pub(crate) case: PathBuf,
    pub(crate) cgroup_version: CgroupVersion,
    /// The memory cgroup's folder, as a path on the machine.
    pub(crate) cgroup_dir: String,
    pub(crate) steps: Vec<Step>,
    /// What the user should know: differences from the case's machine, warnings.
    pub(crate) notes: Vec<String>,
}

/// A case's fields, read with the case file and the field's path in every error.
struct CaseDoc<'a> {
    file: &'a Path,
    doc: &'a Value,
}

impl CaseDoc<'_> {
    fn optional(&self, path: &str) -> Option<&Value> {
        path.split('.').try_fold(self.doc, |v, part| v.get(part))
    }
    fn field(&self, path: &str) -> Result<&Value> {
        self.optional(path).ok_or_else(|| anyhow!("{}: {path} missing", self.file.display()))
    }
    fn num(&self, path: &str) -> Result<u64> {
        self.field(path)?
            .as_u64()
            .ok_or_else(|| anyhow!("{}: {path} is not a whole number", self.file.display()))
    }
    fn flag(&self, path: &str) -> Result<bool> {
        self.field(path)?
            .as_bool()
            .ok_or_else(|| anyhow!("{}: {path} is not true or false", self.file.display()))
    }
    fn text(&self, path: &str) -> Result<&str> {
        self.field(path)?.as_str().ok_or_else(|| anyhow!("{}: {path} is not a string", self.file.display()))
    }
}

/// Reads the case at `file` and plans its probe on `host`.
pub(crate) fn plan_file(host: &Host, file: &Path, places: &Places) -> Result<Plan> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let doc: Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", file.display()))?;
    plan(host, file, &doc, places)
}

/// Plans the probe of the case `doc` (read from `file`) on `host`.
pub(crate) fn plan(host: &Host, file: &Path, doc: &Value, places: &Places) -> Result<Plan> {
    let case = CaseDoc { file, doc };
    let format = case.text("format")?;
    if format != "swapsim-validation/1" {
        bail!("{}: format \"{format}\" is not swapsim-validation/1", file.display());
    }
    let version = host.cgroup_version()?;
    let mut plan = Plan {
        case: file.to_path_buf(),
        cgroup_version: version,
        cgroup_dir: String::new(),
        steps: Vec::new(),
        notes: Vec::new(),
    };
    let case_version = case.num("setup.memcg_version")?;
    if case_version != version.number() {
        plan.notes.push(format!(
            "the case was measured under cgroup v{case_version}; this machine has v{}",
            version.number()
        ));
    }
    cgroup_steps(host, &case, &mut plan)?;
    knob_steps(host, &case, &mut plan)?;
    zswap_steps(host, &case, &mut plan)?;
    lru_gen_steps(host, &case, &mut plan)?;
    swap_steps(host, &case, places, &mut plan)?;
    Ok(plan)
}

/// A knob step from the machine's current value.
fn knob(host: &Host, path: &str, value: &str) -> Result<Step> {
    Ok(Step::Knob { path: path.to_string(), original: host.value(path)?, value: value.to_string() })
}

fn cgroup_steps(host: &Host, case: &CaseDoc<'_>, plan: &mut Plan) -> Result<()> {
    let limit = case.num("setup.memcg_limit_bytes")?.to_string();
    let swappiness = case.num("setup.swappiness")?.to_string();
    match plan.cgroup_version {
        CgroupVersion::V1 => {
            let dir = format!("/sys/fs/cgroup/memory/{CGROUP_NAME}");
            plan.steps.push(Step::Cgroup { dir: dir.clone() });
            for (name, value) in [("memory.limit_in_bytes", limit), ("memory.swappiness", swappiness)] {
                plan.steps.push(Step::CgroupFile { path: format!("{dir}/{name}"), value });
            }
            plan.cgroup_dir = dir;
        }
        CgroupVersion::V2 => {
            let control = "/sys/fs/cgroup/cgroup.subtree_control";
            if !host.read(control)?.split_whitespace().any(|name| name == "memory") {
                plan.steps
                    .push(Step::Controller { path: control.to_string(), controller: "memory".to_string() });
            }
            let dir = format!("/sys/fs/cgroup/{CGROUP_NAME}");
            plan.steps.push(Step::Cgroup { dir: dir.clone() });
            plan.steps.push(Step::CgroupFile { path: format!("{dir}/memory.max"), value: limit });
            plan.steps
                .push(Step::CgroupFile { path: format!("{dir}/memory.swap.max"), value: "max".to_string() });
            if case.optional("setup.zswap.enabled") == Some(&Value::Bool(true)) {
                plan.steps.push(Step::CgroupFile {
                    path: format!("{dir}/memory.zswap.max"),
                    value: "max".to_string(),
                });
            }
            // cgroup v2 has no per-group swappiness: the machine's is the one that applies.
            plan.steps.push(knob(host, "/proc/sys/vm/swappiness", &swappiness)?);
            plan.cgroup_dir = dir;
        }
    }
    Ok(())
}

fn knob_steps(host: &Host, case: &CaseDoc<'_>, plan: &mut Plan) -> Result<()> {
    let page_cluster = case.num("setup.page_cluster")?;
    plan.steps.push(knob(host, "/proc/sys/vm/page-cluster", &page_cluster.to_string())?);
    let vma_ra = if case.flag("setup.vma_ra_enabled")? { "true" } else { "false" };
    plan.steps.push(knob(host, "/sys/kernel/mm/swap/vma_ra_enabled", vma_ra)?);
    let wanted = mthp_sizes(case)?;
    let on_host = host_mthp_sizes(host)?;
    for size in &wanted {
        if !on_host.contains(size) {
            bail!(
                "{}: setup.mthp_always_kib: this kernel has no {size}kB mTHP size (no {})",
                case.file.display(),
                host.path(&format!("{THP}/hugepages-{size}kB")).display()
            );
        }
    }
    for size in on_host {
        let value = if wanted.contains(&size) { "always" } else { "never" };
        plan.steps.push(knob(host, &format!("{THP}/hugepages-{size}kB/enabled"), value)?);
    }
    Ok(())
}

/// The case's mTHP sizes set to "always", in KiB (numbers or strings of digits).
fn mthp_sizes(case: &CaseDoc<'_>) -> Result<Vec<u64>> {
    let path = "setup.mthp_always_kib";
    let Some(list) = case.optional(path) else { return Ok(Vec::new()) };
    let bad = || anyhow!("{}: {path} is not a list of sizes in KiB", case.file.display());
    list.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|size| match size {
            Value::Number(n) => n.as_u64().ok_or_else(bad),
            Value::String(s) => s.parse().map_err(|_| bad()),
            _ => Err(bad()),
        })
        .collect()
}

/// The anonymous mTHP sizes the machine's kernel offers, in KiB, smallest first.
fn host_mthp_sizes(host: &Host) -> Result<Vec<u64>> {
    let dir = host.path(THP);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut sizes = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let name = entry.with_context(|| format!("cannot list {}", dir.display()))?.file_name();
        let name = name.to_string_lossy();
        let size = name.strip_prefix("hugepages-").and_then(|s| s.strip_suffix("kB"));
        // A size without `enabled` is for shmem only (order 1 has no anonymous mTHP).
        if let Some(size) = size.and_then(|size| size.parse::<u64>().ok()) {
            if host.exists(&format!("{THP}/hugepages-{size}kB/enabled")) {
                sizes.push(size);
            }
        }
    }
    sizes.sort_unstable();
    Ok(sizes)
}

fn zswap_steps(host: &Host, case: &CaseDoc<'_>, plan: &mut Plan) -> Result<()> {
    if case.optional("setup.zswap").is_none() {
        return Ok(());
    }
    let enabled = case.flag("setup.zswap.enabled")?;
    if !host.exists(ZSWAP_ENABLED) {
        if enabled {
            bail!("{}: setup.zswap.enabled: this kernel has no zswap ({ZSWAP_ENABLED})", case.file.display());
        }
        return Ok(());
    }
    if enabled {
        // The parameters first, so that zswap starts with them.
        let yes_no = |on: bool| if on { "Y" } else { "N" };
        if case.optional("setup.zswap.compressor").is_some() {
            plan.steps.push(knob(
                host,
                &format!("{ZSWAP}/compressor"),
                case.text("setup.zswap.compressor")?,
            )?);
        }
        if case.optional("setup.zswap.shrinker_enabled").is_some() {
            let on = case.flag("setup.zswap.shrinker_enabled")?;
            plan.steps.push(knob(host, &format!("{ZSWAP}/shrinker_enabled"), yes_no(on))?);
        }
        for name in ["max_pool_percent", "accept_threshold_percent"] {
            let path = format!("setup.zswap.{name}");
            if case.optional(&path).is_some() {
                plan.steps.push(knob(host, &format!("{ZSWAP}/{name}"), &case.num(&path)?.to_string())?);
            }
        }
    }
    let step = knob(host, ZSWAP_ENABLED, if enabled { "Y" } else { "N" })?;
    if !step.is_noop() {
        plan.notes.push(format!(
            "this probe writes {ZSWAP_ENABLED}: the first write to it in a boot turns large-folio \
             swap-in off until the next reboot"
        ));
        if case.optional("setup.zswap.ever_enabled") == Some(&Value::Bool(false)) {
            plan.notes.push(
                "the case was measured in a boot where zswap's enabled parameter was never written; \
                 after this probe's write the kernel differs from it"
                    .to_string(),
            );
        }
    } else if case.optional("setup.zswap.ever_enabled") == Some(&Value::Bool(false))
        && !mthp_sizes(case)?.is_empty()
    {
        plan.notes.push(
            "the case was measured with large-folio swap-in on (zswap's enabled parameter never \
             written in its boot); whether it was written in this boot cannot be read, so reboot \
             to be sure"
                .to_string(),
        );
    }
    plan.steps.push(step);
    Ok(())
}

fn lru_gen_steps(host: &Host, case: &CaseDoc<'_>, plan: &mut Plan) -> Result<()> {
    if case.optional("setup.lru_gen").is_none() {
        return Ok(());
    }
    if !host.exists(&format!("{LRU_GEN}/enabled")) {
        bail!("{}: setup.lru_gen: this kernel has no MGLRU ({LRU_GEN}/enabled)", case.file.display());
    }
    if let Some(enabled) = case.optional("setup.lru_gen.enabled") {
        let value = match enabled {
            Value::Bool(true) => "y".to_string(),
            Value::Bool(false) => "n".to_string(),
            Value::String(s) => s.clone(),
            _ => bail!("{}: setup.lru_gen.enabled is not true, false or a mask", case.file.display()),
        };
        plan.steps.push(knob(host, &format!("{LRU_GEN}/enabled"), &value)?);
    }
    if case.optional("setup.lru_gen.min_ttl_ms").is_some() {
        let ttl = case.num("setup.lru_gen.min_ttl_ms")?;
        plan.steps.push(knob(host, &format!("{LRU_GEN}/min_ttl_ms"), &ttl.to_string())?);
    }
    Ok(())
}

fn swap_steps(host: &Host, case: &CaseDoc<'_>, places: &Places, plan: &mut Plan) -> Result<()> {
    let size_bytes = case.num("setup.swap.size_bytes")?;
    match case.text("setup.swap.kind")? {
        kind @ ("file" | "partition") => {
            match (&places.swap_device, kind) {
                (Some(path), _) => {
                    plan.steps.push(Step::SwapDevice { path: path.clone(), size_bytes });
                    plan.steps.push(Step::Swapon { path: path.clone() });
                }
                (None, "file") => {
                    plan.steps.push(Step::SwapFile { path: places.swap_file.clone(), size_bytes });
                    plan.steps.push(Step::Swapon { path: places.swap_file.clone() });
                }
                (None, _) => bail!(
                    "{}: the case swapped on a partition: name a block device to format for it \
                     with --swap-device",
                    case.file.display()
                ),
            }
            rotational_step(host, case, places, plan)?;
        }
        "zram" => {
            let sysfs = format!("/sys/block/{}", places.zram);
            if !host.exists(&sysfs) {
                bail!("{} does not exist: load the zram module (modprobe zram)", host.path(&sysfs).display());
            }
            let algorithm = match case.optional("setup.swap.zram_algorithm") {
                Some(_) => Some(case.text("setup.swap.zram_algorithm")?.to_string()),
                None => None,
            };
            plan.steps.push(Step::Zram { device: places.zram.clone(), algorithm, size_bytes });
            plan.steps.push(Step::Swapon { path: format!("/dev/{}", places.zram) });
        }
        other => bail!("{}: setup.swap.kind \"{other}\" is not file, partition or zram", case.file.display()),
    }
    Ok(())
}

/// The disk's rotational flag as the case had it (the kernel treats a swap area on a
/// non-rotational disk as solid state: no seek-ordered slot allocation); with the disk
/// unknown, a note saying what to check.
fn rotational_step(host: &Host, case: &CaseDoc<'_>, places: &Places, plan: &mut Plan) -> Result<()> {
    let Some(&Value::Bool(rotational)) = case.optional("setup.swap.rotational") else { return Ok(()) };
    let value = if rotational { "1" } else { "0" };
    match &places.disk {
        Some(disk) => {
            let own = format!("/sys/class/block/{disk}/queue/rotational");
            // A partition's queue is its disk's.
            let path =
                if host.exists(&own) { own } else { format!("/sys/class/block/{disk}/../queue/rotational") };
            plan.steps.push(knob(host, &path, value)?);
        }
        None => plan.notes.push(format!(
            "the case's disk had rotational = {value}; name the swap disk with --block-device to set \
             it as the case had it (the probe leaves it alone otherwise)"
        )),
    }
    Ok(())
}

/// Prints the plan, one step a line, then its notes.
pub(crate) fn write_plan(out: &mut dyn std::io::Write, plan: &Plan, host: &Host) -> Result<()> {
    writeln!(out, "probe plan for {} (cgroup v{})", plan.case.display(), plan.cgroup_version.number())?;
    if host.root() != Path::new("/") {
        writeln!(out, "machine files under {}", host.root().display())?;
    }
    for (idx, step) in plan.steps.iter().enumerate() {
        writeln!(out, "{:>3}. {}", idx + 1, step.describe())?;
    }
    for note in &plan.notes {
        writeln!(out, "note: {note}")?;
    }
    Ok(())
}
