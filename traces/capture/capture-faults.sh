#!/usr/bin/env bash
# Records the user page faults of a command with perf, while the command runs inside a
# cgroup v1 memory controller with a chosen limit and, optionally, a temporary swap file,
# so that the capture shows the faults of a workload under memory pressure.
#
# Usage (as root):
#   capture-faults.sh [-l LIMIT] [-s SWAP_SIZE] [-p PAGE_CLUSTER] [-f tid|plain] -o OUT.perf.zst -- COMMAND [ARGS...]
#     -l LIMIT         memory.limit_in_bytes of the cgroup, e.g. 64M (default: no limit)
#     -s SWAP_SIZE     create, enable and afterwards remove a swap file of this size, e.g. 512M
#                      (at most 8G); without it the machine's existing swap, if any, is used
#     -p PAGE_CLUSTER  set vm.page-cluster for the capture and restore it afterwards
#     -f FORM          `perf script` output form: "tid" (comm,pid,tid,cpu,time,event,trace;
#                      the default) or "plain" (perf's default form, no tid)
#     -o OUT           output: `perf script` text of exceptions:page_fault_user, compressed
#                      with zstd if OUT ends in .zst
#
# Everything the script changes (cgroup, swap file, page-cluster) is undone on exit, also
# when the command fails or the script is interrupted. The command runs as root unless it
# drops privileges itself.
set -euo pipefail

limit=""
swap_size=""
page_cluster=""
form="tid"
out=""
while getopts "l:s:p:f:o:h" opt; do
    case "$opt" in
        l) limit="$OPTARG" ;;
        s) swap_size="$OPTARG" ;;
        p) page_cluster="$OPTARG" ;;
        f) form="$OPTARG" ;;
        o) out="$OPTARG" ;;
        h) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "capture-faults.sh: unknown option (see -h)" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ -z "$out" ] || [ $# -eq 0 ]; then
    echo "capture-faults.sh: need -o OUT and a command after --" >&2
    exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "capture-faults.sh: must run as root (cgroups, swapon, perf tracepoints)" >&2
    exit 2
fi
command -v perf >/dev/null || { echo "capture-faults.sh: perf not found" >&2; exit 2; }
memcg_root=/sys/fs/cgroup/memory
[ -d "$memcg_root" ] || { echo "capture-faults.sh: no cgroup v1 memory controller at $memcg_root" >&2; exit 2; }

cg="$memcg_root/swapsim-capture-$$"
swapfile=""
old_page_cluster=""
workdir=$(mktemp -d)

cleanup() {
    set +e
    if [ -d "$cg" ]; then
        # Move any leftover process back to the root group before removing ours.
        while read -r pid; do echo "$pid" > "$memcg_root/cgroup.procs"; done < "$cg/cgroup.procs"
        rmdir "$cg"
    fi
    if [ -n "$swapfile" ]; then
        swapoff "$swapfile" 2>/dev/null
        rm -f "$swapfile"
    fi
    if [ -n "$old_page_cluster" ]; then
        sysctl -q -w vm.page-cluster="$old_page_cluster"
    fi
    rm -rf "$workdir"
}
trap cleanup EXIT INT TERM

mkdir "$cg"
if [ -n "$limit" ]; then
    echo "$limit" > "$cg/memory.limit_in_bytes"
fi
if [ -n "$swap_size" ]; then
    bytes=$(numfmt --from=iec "$swap_size")
    if [ "$bytes" -gt $((8 << 30)) ]; then
        echo "capture-faults.sh: swap size $swap_size is above the 8G this script allows" >&2
        exit 2
    fi
    swapfile="/var/tmp/swapsim-capture-$$.swap"
    dd if=/dev/zero of="$swapfile" bs=1M count=$((bytes >> 20)) status=none
    chmod 600 "$swapfile"
    mkswap -q "$swapfile"
    swapon "$swapfile"
fi
if [ -n "$page_cluster" ]; then
    old_page_cluster=$(sysctl -n vm.page-cluster)
    sysctl -q -w vm.page-cluster="$page_cluster"
fi

# perf follows the wrapper shell, which joins the cgroup and then becomes the command.
perf record -q -e exceptions:page_fault_user -o "$workdir/perf.data" -- \
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
case "$form" in
    tid) fields=(-F trace:comm,pid,tid,cpu,time,event,trace) ;;
    plain) fields=() ;;
    *) echo "capture-faults.sh: -f must be tid or plain" >&2; exit 2 ;;
esac
perf script -i "$workdir/perf.data" "${fields[@]}" > "$workdir/faults.txt"
case "$out" in
    *.zst) zstd -q -19 -f -o "$out" "$workdir/faults.txt" ;;
    *) cp "$workdir/faults.txt" "$out" ;;
esac
echo "capture-faults.sh: wrote $out (kernel $(uname -r), limit ${limit:-none}, swap ${swap_size:-existing})" >&2
