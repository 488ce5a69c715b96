"""Updating one inner chunk of a big shard: time and peak memory, zarrc against its peers.

    python bench/shard_update.py [--rounds 3] [--repeat 5] [--data random|smooth] [--libs ...]
                                 [--json PATH]

One v3 array of 4096 x 4096 float32 in a single 64 MiB shard of 256 x 256 inner
chunks (256 KiB each), zstd level 1 inside the shard; ``--data random`` (the
default) makes the stored shard about 64 MiB, ``smooth`` a compressible field.
Each library rewrites one whole inner chunk (a different one per repetition),
``--repeat`` times in a fresh process of its own (so its peak RSS is its own:
VmHWM reset before the first update, growth over the RSS before it), and each
such process is run ``--rounds`` times, the libraries in turn (a, b, c, a, b, c,
...).  The table gives the median over the rounds of each process's median time,
the largest peak memory growth, and the time as a ratio to zarrc's.  Libraries:
zarrc; zarr-python's default pipeline; its fused pipeline
(``zarr.core.codec_pipeline.FusedCodecPipeline``, zarr >= 3.4); the zarrs
pipeline (``zarrs.ZarrsCodecPipeline``); tensorstore.  Those not installed in
this interpreter are skipped.  Target: zarrc <= 0.5x the fastest peer.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    REPO_ROOT,
    MiB,
    announce,
    conclude,
    library_available,
    print_table,
    proc_status,
    process_parser,
    reset_peak_rss,
    smooth_field,
    split_names,
)

SHAPE = (4096, 4096)
INNER = (256, 256)
PIPELINES = {
    "zarr": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "zarr-fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
    "zarrs": "zarrs.ZarrsCodecPipeline",
}
LIBS = ["zarrc", "zarr", "zarr-fused", "zarrs", "tensorstore"]
TARGET = 0.5


def available(lib: str) -> bool:
    """Whether ``lib`` can run in this interpreter."""
    return library_available(lib)


def make_data(path: str, kind: str) -> int:
    """The array at ``path`` (written by zarrc), as described above; its shard's size."""
    import numpy as np

    import zarrc

    if kind == "random":
        # (random bits: zstd cannot shrink them; some are NaNs, which no check reads)
        data = np.random.default_rng(0).integers(0, 2**32, SHAPE, dtype=np.uint32).view(np.float32)
    else:
        data = smooth_field(SHAPE, "float32")
    a = zarrc.create_array(path, shape=SHAPE, dtype="float32", chunks=INNER, shards=SHAPE,
                           compressors=zarrc.codecs.ZstdCodec(level=1), overwrite=True)
    a[...] = data
    return os.path.getsize(os.path.join(path, "c", "0", "0"))


def worker(lib: str, path: str, repeat: int) -> dict:
    """In a fresh process: ``repeat`` updates of one inner chunk each by ``lib``:
    their times and the growth of the peak RSS over the RSS before the first."""
    import numpy as np

    rng = np.random.default_rng(1)
    blocks = [rng.random(INNER, dtype=np.float32) for _ in range(repeat)]
    grid = SHAPE[1] // INNER[1]
    spots = [((7 * i + 3) % grid, (5 * i + 1) % grid) for i in range(repeat)]
    if lib == "tensorstore":
        import tensorstore as ts

        arr = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()

        def update(box, block):
            arr[box].write(block).result()

        def read(box):
            return arr[box].read().result()
    else:
        if lib == "zarrc":
            import zarrc

            arr = zarrc.open_array(path, mode="r+")
        else:
            import zarr

            zarr.config.set({"codec_pipeline.path": PIPELINES[lib]})
            arr = zarr.open_array(path, mode="r+")

        def update(box, block):
            arr[box] = block

        def read(box):
            return arr[box]
    read((slice(0, 1), slice(0, 1)))          # (opened, index path warm: the same for all)
    rss = proc_status("VmRSS")
    exact = reset_peak_rss()
    times = []
    for (r, c), block in zip(spots, blocks):
        box = (slice(r * INNER[0], (r + 1) * INNER[0]), slice(c * INNER[1], (c + 1) * INNER[1]))
        t = time.perf_counter()
        update(box, block)
        times.append(time.perf_counter() - t)
    peak = proc_status("VmHWM") - rss
    for (r, c), block in zip(spots, blocks):
        box = (slice(r * INNER[0], (r + 1) * INNER[0]), slice(c * INNER[1], (c + 1) * INNER[1]))
        got = np.asarray(read(box))
        last = max(i for i, s in enumerate(spots) if s == (r, c))
        assert np.array_equal(got, blocks[last]), f"{lib}: inner chunk {(r, c)} reads back wrong"
    return {"times": times, "peak": peak, "peak_exact": exact}


def run_worker(python: str, lib: str, path: str, repeat: int) -> dict:
    out = subprocess.run([python, str(Path(__file__).resolve()), "--worker", lib, "--path", path,
                          "--repeat", str(repeat)], check=True, capture_output=True, text=True,
                         cwd=str(REPO_ROOT))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = process_parser(__doc__, LIBS, "shard-update.json", repeat=5)
    parser.add_argument("--data", choices=("random", "smooth"), default="random")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.path, args.repeat)))
        return 0
    t_start = time.perf_counter()
    wanted = split_names(parser, "libs", args.libs, LIBS)
    libs = [lib for lib in wanted if available(lib)]
    facts = announce(wanted, libs, args.repeat)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = os.path.join(tmp, "shard.zarr")
        size = make_data(path, args.data)
        print(f"one shard of {size / MiB:.1f} MiB ({args.data} data), inner chunks of 256 KiB; "
              f"{args.rounds} rounds x {args.repeat} updates per library, each round a fresh process")
        runs: dict = {lib: [] for lib in libs}
        for _ in range(args.rounds):
            for lib in libs:
                runs[lib].append(run_worker(sys.executable, lib, path, args.repeat))
    med = {lib: statistics.median(statistics.median(r["times"]) for r in runs[lib]) for lib in libs}
    peak = {lib: max(r["peak"] for r in runs[lib]) for lib in libs}
    rows = [[lib, med[lib] * 1e3, peak[lib] / MiB, med[lib] / med["zarrc"] if "zarrc" in med else None]
            for lib in libs]
    print()
    print_table(rows, ["library", "median ms", "peak MiB", "x zarrc"])
    peers = [lib for lib in libs if lib != "zarrc"]
    checks = []
    if "zarrc" in med and peers:
        fastest = min(peers, key=med.__getitem__)
        ratio = med["zarrc"] / med[fastest]
        status = "PASS" if ratio <= TARGET else "FAIL"
        checks.append({"check": f"zarrc <= {TARGET}x the fastest peer ({fastest})", "ratio": ratio,
                       "status": status})
        print(f"\nzarrc / fastest peer ({fastest}): {ratio:.3f} (target <= {TARGET}): {status}")
    cases = [{"library": lib, "median_s": med[lib], "peak_bytes": peak[lib], "shard_bytes": size,
              "runs": runs[lib]} for lib in libs]
    conclude(args.json, args, facts, libs, cases, checks, t_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
