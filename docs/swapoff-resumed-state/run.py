#!/usr/bin/env python3
"""Runs the starting-state scenarios written by gen.py at page-cluster 1..8 and prints one
row per run with the swapoff operation's figures (its vmstat delta).
Usage: run.py SWAPSIM DIR [START...] [--set KEY=VALUE ...]"""
import json, subprocess, sys

swapsim, d = sys.argv[1], sys.argv[2]
rest = sys.argv[3:]
sets = []
starts = []
i = 0
while i < len(rest):
    if rest[i] == "--set":
        sets += ["--set", rest[i + 1]]; i += 2
    else:
        starts.append(rest[i]); i += 1
starts = starts or ["swap-out-all", "shrink-to-image", "fill-under-image"]
cols = ["start", "pc", "swapoff_s", "pswpin", "swap_ra", "swap_ra_hit", "read_req", "slots_at_start",
        "cached_hits", "pgscan", "pgsteal", "pswpout", "refault", "allocstall"]
print("| " + " | ".join(cols) + " |")
print("|" + "---|" * len(cols))
for st in starts:
    for pc in range(1, 9):
        out = subprocess.run([swapsim, "run", f"{d}/{st}.toml", "--format", "json",
                              "--set", f"swap.page_cluster={pc}"] + sets,
                             capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        ops = r["operations"]
        so = next(o for o in ops if o["op"] == "swapoff")
        v = so["vmstat"]
        # Slots in use when swapoff started: every page written before it (nothing is
        # swapped in before swapoff in these scenarios).
        slots = r["vmstat"]["pswpout"] - v["pswpout"]
        # Swap entries swapoff resolved without a read of its own: slots in use minus
        # pages read (a read's page maps one PTE).
        row = [st, pc, round(so["duration_s"], 3), v["pswpin"], v["swap_ra"], v["swap_ra_hit"],
               so["read_requests"], slots, slots - v["pswpin"],
               v["pgscan_direct"] + v["pgscan_kswapd"], v["pgsteal_direct"] + v["pgsteal_kswapd"],
               v["pswpout"], v["workingset_refault_anon"], v["allocstall_normal"]]
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
