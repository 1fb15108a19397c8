#!/usr/bin/env bash
# A swapsim sweep as a Slurm job array: each task runs its shard of the variants, and a
# last step joins them. Submit from the repository root with `swapsim` on the PATH:
#   sbatch --array=0-3 examples/slurm-sweep.sh
#   (after the array ends) swapsim merge results/shard-*.json --format json > results/sweep.json
#SBATCH --job-name=swapsim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --output=results/slurm-%A_%a.log
set -euo pipefail
mkdir -p results
swapsim sweep scenarios/zipf-memcg.toml --vary swap.page_cluster=0..7 --vary swap.readahead=cluster,vma \
    --seeds 3 --shard auto --format json > "results/shard-${SLURM_ARRAY_TASK_ID}.json"
