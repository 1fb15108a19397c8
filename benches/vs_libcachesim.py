"""Replays one page trace through libCacheSim's LRU and prints its request rate.

Called by vs-libcachesim.sh. Subcommands:

  convert TEXT OUT      turn `swapsim trace generate --to text` lines (`R|W <page>`) into
                        libCacheSim's oracleGeneral binary: 24-byte little-endian records
                        (u32 timestamp, u64 obj_id, u32 obj_size, i64 next_access_vtime),
                        obj_size 1 so that the cache size counts pages
  run OG CACHE_PAGES    replay OUT through LRU(cache_size=CACHE_PAGES) and print
                        `requests seconds miss_ratio` on one line

  report JSON           print a `swapsim run --format json` report's `host.accesses_per_s`
                        and its fault counts on one line

Only the replay (`process_trace`) is timed, not opening the trace.
"""

import sys
import time

import numpy as np


def convert(text_path, out_path):
    pages = np.loadtxt(text_path, comments="#", usecols=1, dtype=np.uint64)
    records = np.zeros(
        len(pages),
        dtype=np.dtype(
            [("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next_vtime", "<i8")]
        ),
    )
    records["time"] = np.arange(len(pages), dtype=np.uint64).astype(np.uint32)
    records["obj_id"] = pages
    records["obj_size"] = 1
    records["next_vtime"] = -1
    records.tofile(out_path)
    print(len(pages))


def run(og_path, cache_pages):
    import libcachesim as lcs

    reader = lcs.TraceReader(og_path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = lcs.LRU(cache_size=cache_pages)
    started = time.perf_counter()
    miss_ratio, _byte_miss_ratio = cache.process_trace(reader)
    seconds = time.perf_counter() - started
    n_requests = reader.get_num_of_req()
    print(n_requests, seconds, miss_ratio)


def report(json_path):
    import json

    with open(json_path) as f:
        doc = json.load(f)
    vmstat = doc["vmstat"]
    counts = ",".join(f"{key}={vmstat[key]}" for key in ("pgfault", "pgmajfault", "pswpin"))
    print(doc["host"]["accesses_per_s"], counts)


if __name__ == "__main__":
    if sys.argv[1] == "convert":
        convert(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(f"unknown subcommand {sys.argv[1]!r}")
