"""A small workload for captures: map REGION_MIB of anonymous memory, then touch one byte
per page for PASSES passes in PATTERN order ("seq" or "rand", seeded). The first pass
writes every page; later passes write every fifth page and read the rest.

usage: python3 touch.py REGION_MIB PASSES [seq|rand] [SEED]
"""
import mmap
import random
import sys

mib = int(sys.argv[1])
passes = int(sys.argv[2])
pattern = sys.argv[3] if len(sys.argv) > 3 else "seq"
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
pages = (mib << 20) // 4096
m = mmap.mmap(-1, pages * 4096)
order = list(range(pages))
rng = random.Random(seed)
for p in range(passes):
    if p > 0 and pattern == "rand":
        rng.shuffle(order)
    for page in order:
        off = page * 4096
        if p == 0 or page % 5 == 0:
            m[off] = 1
        else:
            _ = m[off]
