#!/usr/bin/env bash
# Replays one zipf(0.9) page trace through swapsim and through libCacheSim's LRU and prints
# both request rates, their ratio, libCacheSim's miss ratio and swapsim's fault counts.
#
#   benches/vs-libcachesim.sh          1,966,080 accesses over 131,072 pages, 32,768-page memcg
#   benches/vs-libcachesim.sh --full   20,971,520 accesses over 1,048,576 pages, 262,144-page memcg
#
# The trace is `swapsim trace generate --phase zipf:REGION:PASSES:0`: a fill that writes every
# page once, in page order (the first touch of each page is a write), then PASSES passes of
# zipf(0.9) reads, one access per page per pass. libCacheSim sees the same page sequence as an
# oracleGeneral trace with one-unit objects, so its cache size counts pages. swapsim runs the
# classic LRU, kernel readahead, page-cluster 3 and the nvme preset under a memcg v1 limit.
# Both run ROUNDS times (default 3), interleaved; the best of each is printed, and the median of
# the rounds' own ratios (each round runs the two back to back). swapsim's rate is the report's
# `host.accesses_per_s` and libCacheSim's is timed around `process_trace`; neither includes
# reading the trace from disk into the program.
#
# Environment: SWAPSIM (the binary; default: build it with cargo --release), LCS_VENV (an
# existing venv with libcachesim==0.3.5; default: a fresh one in the temp dir), KEEP=1 keeps
# the temp dir.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

region=512MiB passes=14 memcg_pages=32768
if [[ "${1:-}" == "--full" ]]; then
    region=4GiB passes=19 memcg_pages=262144
elif [[ -n "${1:-}" ]]; then
    echo "usage: $0 [--full]" >&2
    exit 64
fi

tmp="$(mktemp -d)"
if [[ "${KEEP:-0}" != 1 ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "temp dir: $tmp"; fi

if [[ -z "${SWAPSIM:-}" ]]; then
    cargo build --release -q -p swapsim-cli --manifest-path "$root/Cargo.toml"
    SWAPSIM="${CARGO_TARGET_DIR:-$root/target}/release/swapsim"
fi
if [[ -z "${LCS_VENV:-}" ]]; then
    LCS_VENV="$tmp/venv"
    python3 -m venv "$LCS_VENV"
    "$LCS_VENV/bin/pip" install -q libcachesim==0.3.5
fi
py="$LCS_VENV/bin/python"

phase="zipf:$region:$passes:0"
"$SWAPSIM" trace generate --phase "$phase" --seed 1 -o "$tmp/trace.swt" >/dev/null
"$SWAPSIM" trace generate --phase "$phase" --seed 1 -o "$tmp/trace.txt" >/dev/null
n_accesses="$("$py" "$here/vs_libcachesim.py" convert "$tmp/trace.txt" "$tmp/trace.og")"
rm "$tmp/trace.txt"

cat >"$tmp/scenario.toml" <<TOML
seed = 1
lru = "classic"

[machine]
memory = "24GiB"
cpus = 1

[memcg]
limit = "$((memcg_pages * 4))KiB"
version = 1

[swap]
page_cluster = 3
readahead = "kernel"

[[swap.devices]]
name = "swap0"
size = "8GiB"
model = { preset = "nvme" }
TOML

rounds="${ROUNDS:-3}"
best_swapsim=0 best_lcs=0 faults="" lcs_miss="" round_ratios=""
for round in $(seq "$rounds"); do
    "$SWAPSIM" run "$tmp/scenario.toml" --trace "$tmp/trace.swt" --format json >"$tmp/report.json"
    read -r rate faults <<<"$("$py" "$here/vs_libcachesim.py" report "$tmp/report.json")"
    best_swapsim="$("$py" -c "print(max($best_swapsim, $rate))")"
    read -r n_req seconds lcs_miss <<<"$("$py" "$here/vs_libcachesim.py" run "$tmp/trace.og" "$memcg_pages")"
    best_lcs="$("$py" -c "print(max($best_lcs, $n_req / $seconds))")"
    round_ratio="$("$py" -c "print($rate / ($n_req / $seconds))")"
    round_ratios="$round_ratios $round_ratio"
    echo "round $round: swapsim $rate accesses/s, libCacheSim $("$py" -c "print(round($n_req / $seconds))") req/s, ratio $("$py" -c "print(f'{$round_ratio:.2f}')")"
done

"$py" - "$n_accesses" "$memcg_pages" "$best_swapsim" "$best_lcs" "$lcs_miss" "$faults" "$rounds" "$round_ratios" <<'PY'
import statistics, sys
n, memcg_pages, s, l, miss, faults, rounds, ratios = sys.argv[1:]
n, s, l, miss = int(n), float(s), float(l), float(miss)
print(f"trace: {n:,} accesses, memcg {int(memcg_pages):,} pages (best of {rounds})")
print(f"swapsim     {s / 1e6:6.3f} M accesses/s   {faults.replace(',', ' ')}")
print(f"libCacheSim {l / 1e6:6.3f} M req/s        LRU miss ratio {miss:.4f} ({round(miss * n):,} misses)")
print(f"swapsim/libCacheSim: {s / l:.2f} (best against best)")
# Each round runs the two back to back, so a round's ratio is paired: the host's speed
# drifts less within a round than between the best runs of each.
print(f"swapsim/libCacheSim, median of the rounds' ratios: {statistics.median(map(float, ratios.split())):.2f}")
PY
