#!/usr/bin/env python3
"""Writes the two starting-state scenarios of the swapoff-readahead study at a scale.

Mirrors crates/swapsim/src/experiment.rs fn swapoff_readahead (fixed readahead, swapoff
hits credited, default CPU costs, virtio preset), with two starting states:
  swap-out-all      everything pushed to swap (image_size=0 equivalent; today's setup)
  shrink-to-image   memory.max lowered to 2/5 of RAM (reclaim in the writer's context,
                    as shrink_all_memory does), then raised to max: the resumed state
                    with the default image_size.
  shrink-to-image-stepped  the same in 64 steps of memory.max
  fill-under-image  the fill runs under memory.max = 2/5 of RAM, lifted at its end
Every start is followed by a mark at a fixed time (the disk idle) and swapoff.
Usage: gen.py SCALE OUTDIR [IMAGE_FRACTION [FILL_FRACTION]]
"""
import sys, os

scale = float(sys.argv[1]); out = sys.argv[2]
frac = float(sys.argv[3]) if len(sys.argv) > 3 else 0.4
fill = float(sys.argv[4]) if len(sys.argv) > 4 else 0.85
mib = lambda full, mn: round(max(full * scale, mn))
ram = mib(8192.0, 64.0); swap = mib(16384.0, 128.0)
per_proc = round(ram * fill / 4)
image = round(ram * frac)

head = f"""seed = 1
[machine]
memory = "{ram}MiB"
cpus = 2

[swap]
page_cluster = 3
readahead = "fixed"
swapoff_readahead_hits = "credited"

[[swap.devices]]
name = "vda"
size = "{swap}MiB"
model = {{ preset = "virtio" }}

[workload.generator]
pattern = "seq"
region = "{per_proc}MiB"
passes = 0
tasks = 4
"""
# A resumed guest starts swapoff with an idle disk; the model's reclaim can leave a large
# write backlog queued (see the finding), so swapoff waits until well after it drains.
settle = round(10 + 60 * scale)
swapoff = f"""
[[timeline]]
at = "{settle}s"
op = "mark"
label = "settled"

[[timeline]]
op = "swapoff"
device = "vda"
"""
starts = {
    "swap-out-all": """
[[timeline]]
at = "workload-end"
op = "swap-out-all"
""",
    "shrink-to-image": f"""
[[timeline]]
at = "workload-end"
op = "set-memcg-limit"
limit = "{image}MiB"

[[timeline]]
op = "set-memcg-limit"
limit = "max"
""",
}
# The same shrink in 64 steps of memory.max, so that each reclaim has a small target and
# frees the pages it wrote before writing more (see the finding: one large target makes
# the model write out every page and leave the resident 40% as unmapped swap cache).
steps = 64
filled = 4 * per_proc
stepped = ""
for i in range(1, steps + 1):
    lim = round(filled - (filled - image) * i / steps)
    at = 'at = "workload-end"\n' if i == 1 else ""
    stepped += f'\n[[timeline]]\n{at}op = "set-memcg-limit"\nlimit = "{lim}MiB"\n'
stepped += '\n[[timeline]]\nop = "set-memcg-limit"\nlimit = "max"\n'
starts["shrink-to-image-stepped"] = stepped
# The resident 40% mapped: the fill runs under memory.max = image size, so the writers
# reclaim in small steps as they go (as in the validation swapoff cases), and the limit is
# lifted at the end of the fill.
starts["fill-under-image"] = f"""
[[timeline]]
at = "workload-end"
op = "set-memcg-limit"
limit = "max"
"""
os.makedirs(out, exist_ok=True)
for name, ops in starts.items():
    h = head
    if name == "fill-under-image":
        h = head.replace("[swap]", f'[memcg]\nlimit = "{image}MiB"\n\n[swap]')
    with open(os.path.join(out, f"{name}.toml"), "w") as f:
        f.write(h + ops + swapoff)
print(f"ram {ram} MiB, swap {swap} MiB, 4 x {per_proc} MiB, image {image} MiB")
