#!/usr/bin/env python3
"""Measures how zswap's compressors shrink 4 KiB pages of each contents class and prints the
quantile and CPU-cost tables of `crates/sim-core/src/contents.rs`.

Setup (python-lzo builds against the LZO headers: `apt-get install liblzo2-dev`):

    python3 -m venv /tmp/venv
    /tmp/venv/bin/pip install python-lzo lz4 zstandard
    /tmp/venv/bin/python crates/sim-core/tools/measure_compressors.py > /tmp/tables.rs

Each compressor is called with the settings the kernel's crypto API uses:

- lzo: LZO1X-1 (`lzo.compress(page, 1, False)`: level 1 selects lzo1x_1_compress, header False
  leaves out python-lzo's 5-byte header, so the output is the raw LZO1X stream).
- lz4: LZ4_compress_default, acceleration 1, no size prefix.
- zstd: level 3 with the parameters for 256 KiB inputs (crypto/zstd.c asks
  zstd_get_params(3, 256 KiB)), content size written, no checksum.
- deflate: raw deflate (window bits -11), memLevel 8, the default level (crypto/deflate.c).
- lzo-rle has no userspace library; contents.rs derives it from the lzo table (see there).

Classes (N pages each, `--pages`):

- random: random bytes.
- half: 2048 random bytes, then 2048 copies of one non-zero byte.
- text: 4 KiB pages cut from real text on this machine, half from English prose (the
  copyright files under /usr/share/doc and the licences in /usr/share/common-licenses) and
  half from program source (the Python standard library's .py files in /usr/lib/python3.11).
  Files are read in sorted path order and concatenated per corpus; pages are the aligned
  4 KiB pieces of that stream, drawn without replacement with a fixed seed.

Timing: every (compressor, class) pair compresses, then decompresses, all N pages in a loop,
`--reps` times (repetitions outermost); the fastest repetition counts, minus the cost of the
same loop calling a no-op, divided by N. Deflate's figure includes setting up a fresh stream
per page (about 3 us here), where the kernel resets one (clearing its 64 KiB hash table). These are userspace library costs on whatever machine runs
the script, a rough default for the model and nothing more.
"""

import argparse
import glob
import os
import platform
import random
import sys
import time
import zlib

import lz4.block
import lzo
import zstandard

PAGE = 4096
QUANTILES = 64


def english_files():
    files = sorted(glob.glob("/usr/share/common-licenses/*"))
    files += sorted(glob.glob("/usr/share/doc/*/copyright"))
    return [f for f in files if os.path.isfile(f) and not os.path.islink(f)]


def program_files():
    return sorted(glob.glob("/usr/lib/python3.11/**/*.py", recursive=True))


def corpus_pages(files):
    data = bytearray()
    for path in files:
        with open(path, "rb") as f:
            data += f.read()
    return [bytes(data[i : i + PAGE]) for i in range(0, len(data) - PAGE + 1, PAGE)], len(data)


def make_pages(n, rng):
    random_pages = [rng.randbytes(PAGE) for _ in range(n)]
    half_pages = [rng.randbytes(PAGE // 2) + bytes([0x5A]) * (PAGE // 2) for _ in range(n)]
    eng, eng_bytes = corpus_pages(english_files())
    prog, prog_bytes = corpus_pages(program_files())
    if len(eng) < n // 2 or len(prog) < n - n // 2:
        sys.exit(f"text corpus too small: {len(eng)} English and {len(prog)} program pages")
    text_pages = rng.sample(eng, n // 2) + rng.sample(prog, n - n // 2)
    info = f"English {eng_bytes} bytes ({len(eng)} pages), program {prog_bytes} bytes ({len(prog)} pages)"
    return {"random": random_pages, "half": half_pages, "text": text_pages}, info


def compressors():
    zstd_params = zstandard.ZstdCompressionParameters.from_level(
        3, source_size=256 * 1024, write_content_size=True, write_checksum=False
    )
    zc = zstandard.ZstdCompressor(compression_params=zstd_params)
    zd = zstandard.ZstdDecompressor()

    def deflate(page):
        c = zlib.compressobj(level=-1, method=zlib.DEFLATED, wbits=-11, memLevel=8)
        return c.compress(page) + c.flush()

    def inflate(blob):
        return zlib.decompress(blob, wbits=-11)

    return {
        "lzo": (lambda p: lzo.compress(p, 1, False), lambda b: lzo.decompress(b, False, PAGE)),
        "lz4": (
            lambda p: lz4.block.compress(p, mode="default", acceleration=1, store_size=False),
            lambda b: lz4.block.decompress(b, uncompressed_size=PAGE),
        ),
        "zstd": (zc.compress, lambda b: zd.decompress(b, max_output_size=PAGE)),
        "deflate": (deflate, inflate),
    }


def quantile_table(sizes):
    """QUANTILES + 1 points: the minimum, the sample quantiles at i/QUANTILES, the maximum."""
    s = sorted(sizes)
    n = len(s)
    out = []
    for i in range(QUANTILES + 1):
        pos = i * (n - 1) / QUANTILES
        lo = int(pos)
        hi = min(lo + 1, n - 1)
        out.append(round(s[lo] + (s[hi] - s[lo]) * (pos - lo)))
    return out


def time_batch(fn, items):
    t0 = time.perf_counter_ns()
    for x in items:
        fn(x)
    return time.perf_counter_ns() - t0


def noop(_x):
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--seed", type=int, default=6180)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    classes, corpus_info = make_pages(args.pages, rng)
    comps = compressors()

    sizes = {}
    blobs = {}
    for cname, (comp, decomp) in comps.items():
        for klass, pages in classes.items():
            out = [comp(p) for p in pages]
            for p, b in zip(pages, out):
                if decomp(b) != p:
                    sys.exit(f"{cname} does not round-trip a {klass} page")
            sizes[(cname, klass)] = [len(b) for b in out]
            blobs[(cname, klass)] = out

    # Repetitions outermost, so that a burst of noise from elsewhere on the machine spoils one
    # repetition of every pair rather than all repetitions of one pair; the minimum is kept.
    best = {}
    for _ in range(args.reps):
        for cname, (comp, decomp) in comps.items():
            for klass, pages in classes.items():
                out = blobs[(cname, klass)]
                c_ns = max(0, time_batch(comp, pages) - time_batch(noop, pages)) / len(pages)
                d_ns = max(0, time_batch(decomp, out) - time_batch(noop, out)) / len(pages)
                old = best.get((cname, klass), (c_ns, d_ns))
                best[(cname, klass)] = (min(old[0], c_ns), min(old[1], d_ns))
    costs = {k: (round(c), round(d)) for k, (c, d) in best.items()}

    print(f"// Measured by crates/sim-core/tools/measure_compressors.py: {args.pages} pages per class,")
    print(f"// seed {args.seed}, Python {platform.python_version()}, lzo {lzo.LZO_VERSION_STRING},")
    print(f"// lz4 {lz4.library_version_string()}, zstd {zstandard.ZSTD_VERSION}, zlib {zlib.ZLIB_RUNTIME_VERSION}.")
    print(f"// Text corpus: {corpus_info}.")
    print(f"// CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores.")
    print()
    print("// Summary (mean compressed bytes / compress ns / decompress ns per page):")
    for cname in comps:
        for klass in classes:
            s = sizes[(cname, klass)]
            c, d = costs[(cname, klass)]
            print(f"//   {cname:8} {klass:7} mean {sum(s) / len(s):7.1f}  min {min(s):5}  max {max(s):5}  compress {c:6} ns  decompress {d:6} ns")
    print()
    for cname in comps:
        for klass in classes:
            t = quantile_table(sizes[(cname, klass)])
            name = f"{cname.upper()}_{klass.upper()}"
            if len(set(t)) == 1:
                print(f"const {name}: Quantiles = [{t[0]}; BINS + 1];")
                continue
            print(f"const {name}: Quantiles = [")
            for i in range(0, len(t), 18):
                print("    " + ", ".join(str(v) for v in t[i : i + 18]) + ",")
            print("];")
    print()
    print("// (compress ns, decompress ns) per page, in the order random, half, text.")
    for cname in comps:
        row = ", ".join(f"({costs[(cname, k)][0]}, {costs[(cname, k)][1]})" for k in ("random", "half", "text"))
        print(f"const {cname.upper()}_NS: [(u32, u32); 3] = [{row}];")


if __name__ == "__main__":
    main()
