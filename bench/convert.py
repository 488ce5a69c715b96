"""``zarrc convert`` against zarr-python + dask: a Zarr v2 blosc array rewritten as
a v3 array of zstd chunks in shards (issue 40, item 5).

    python bench/convert.py [--small] [--rounds 2] [--workers N] [--dir DIR] [--json PATH]

The source: a smooth float32 field of 256 x 1024 x 1024 (1 GiB; ``--small``:
32 x 512 x 512, 32 MiB), written by zarr-python as Zarr v2, blosc lz4 clevel 5 with
byte shuffle, chunks of 16 x 256 x 256 (4 MiB).  The destination: Zarr v3, shards
of 16 x 1024 x 1024 (64 MiB; ``--small``: 16 x 512 x 512) holding inner chunks of
16 x 128 x 128, zstd level 3.

- ``zarrc``: ``python -m zarrc convert SRC DST --zarr-format 3 --chunks ...
  --shards ... --compressor zstd:3 -q`` (its default workers: the cores plus one);
- ``zarr+dask``: ``dask.array.from_zarr`` (zarr-python), ``rechunk`` to the shard
  shape, ``store`` into the v3 array zarr-python creates, on dask's threaded
  scheduler (``lock=False``: each dask chunk a whole shard).

``zarrs_reencode`` (zarrs_tools) is a Rust binary with no PyPI package, so it is
not run here.  Each conversion runs in a fresh process that reports its wall time
and its peak RSS (VmHWM, Linux); the outputs are compared with the source (every
64th plane, read back with zarrc).  The table gives medians over the rounds, the
peak against ``zarrc convert --help``'s bound (WORKERS x 2 x unit, plus a source
chunk per thread), and zarrc / zarr+dask; target <= 0.5.  The ``floor`` row is what
the codecs alone cost (the source read, every destination chunk zstd-encoded,
nothing written): no conversion can be faster.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO_ROOT, MiB, smooth_field

SIZES = {  # name: (shape, source chunks, destination inner chunks, destination shards)
    "full": ((256, 1024, 1024), (16, 256, 256), (16, 128, 128), (16, 1024, 1024)),
    "small": ((32, 512, 512), (16, 256, 256), (16, 128, 128), (16, 512, 512)),
}
TARGET = 0.5

HWM = textwrap.dedent("""
    def _hwm():
        try:
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
        except OSError:
            return -1
""")


def write_source(path: str, size: str) -> None:
    import numcodecs
    import zarr

    shape, chunks, _, _ = SIZES[size]
    z = zarr.create_array(path, shape=shape, dtype="float32", chunks=chunks, zarr_format=2,
                          compressors=numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE))
    for start in range(0, shape[0], chunks[0]):
        z[start:start + chunks[0]] = smooth_field((chunks[0],) + shape[1:], "float32", seed=start)


def zarrc_script(src: str, dst: str, size: str, workers: int | None) -> str:
    _, _, inner, shards = SIZES[size]
    argv = ["convert", src, dst, "--zarr-format", "3", "--chunks", ",".join(map(str, inner)),
            "--shards", ",".join(map(str, shards)), "--compressor", "zstd:3", "-q"]
    if workers:
        argv += ["--workers", str(workers)]
    return HWM + textwrap.dedent(f"""
        import json, time
        from zarrc.cli.main import main
        import zarrc
        base = _hwm()
        t = time.perf_counter()
        status = main({argv!r})
        took = time.perf_counter() - t
        assert status == 0, status
        from zarrc.cli.convert_units import default_workers
        print(json.dumps({{"seconds": took, "peak": _hwm(), "base": base, "threads": zarrc.config.threads,
                          "workers": {workers or 0!r} or default_workers()}}))
    """)


def dask_script(src: str, dst: str, size: str, workers: int | None) -> str:
    shape, _, inner, shards = SIZES[size]
    return HWM + textwrap.dedent(f"""
        import json, time
        import dask, dask.array as da, zarr
        base = _hwm()
        t = time.perf_counter()
        src = zarr.open_array({src!r}, mode="r")
        x = da.from_zarr(src).rechunk({shards!r})
        out = zarr.create_array({dst!r}, shape={shape!r}, dtype="float32", chunks={inner!r},
                                shards={shards!r}, compressors=zarr.codecs.ZstdCodec(level=3),
                                zarr_format=3, overwrite=True)
        with dask.config.set(scheduler="threads", num_workers={workers or None!r}):
            x.store(out, lock=False)
        took = time.perf_counter() - t
        print(json.dumps({{"seconds": took, "peak": _hwm(), "base": base}}))
    """)


def floor_script(src: str, dst: str, size: str, workers: int | None) -> str:
    """The codec floor: the source read by zarrc (blosc decoded) a shard's slab at a
    time, and every destination inner chunk zstd-3 encoded by numcodecs (its zstd
    releases the GIL) on as many threads as zarrc uses; nothing written."""
    shape, _, inner, shards = SIZES[size]
    return HWM + textwrap.dedent(f"""
        import json, time, itertools
        from concurrent.futures import ThreadPoolExecutor
        import numcodecs, zarrc
        threads = {workers or 0!r} or zarrc.config.threads
        codec = numcodecs.Zstd(level=3)
        src = zarrc.open_array({src!r}, mode="r")
        base = _hwm()
        t = time.perf_counter()
        inner, shards = {inner!r}, {shards!r}
        with ThreadPoolExecutor(threads) as pool:
            for start in range(0, {shape[0]!r}, shards[0]):
                slab = src[start:start + shards[0]]
                parts = [slab[:, y:y + inner[1], x:x + inner[2]].copy()
                         for y in range(0, slab.shape[1], inner[1]) for x in range(0, slab.shape[2], inner[2])]
                list(pool.map(codec.encode, parts))
        took = time.perf_counter() - t
        print(json.dumps({{"seconds": took, "peak": _hwm(), "base": base}}))
    """)


def run_child(script: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True,
                         cwd=str(REPO_ROOT))
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_same(src: str, dst: str) -> None:
    import numpy as np

    import zarrc

    a, b = zarrc.open_array(src, mode="r"), zarrc.open_array(dst, mode="r")
    assert a.shape == b.shape, (a.shape, b.shape)
    for plane in range(0, a.shape[0], 64):
        if not np.array_equal(a[plane], b[plane]):
            raise SystemExit(f"{dst}: plane {plane} differs from the source")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="32 MiB instead of 1 GiB: a smoke test")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="zarrc --workers and dask's num_workers")
    parser.add_argument("--dir", default=None, help="where the arrays are written (default: a temp dir)")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    size = "small" if args.small else "full"
    shape, chunks, inner, shards = SIZES[size]
    nbytes = 4 * shape[0] * shape[1] * shape[2]
    print(f"float32 {shape} ({nbytes / MiB:.0f} MiB): v2 blosc lz4 chunks {chunks} -> v3 zstd:3 "
          f"shards {shards} of chunks {inner}; {args.rounds} round(s)")
    libs = {"zarrc": zarrc_script, "zarr+dask": dask_script, "floor": floor_script}
    results: dict[str, list[dict]] = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        src = os.path.join(tmp, "src.zarr")
        t = time.perf_counter()
        write_source(src, size)
        print(f"source written in {time.perf_counter() - t:.1f} s")
        for _ in range(args.rounds):
            for lib, make in libs.items():
                dst = os.path.join(tmp, f"{lib}.zarr")
                shutil.rmtree(dst, ignore_errors=True)
                results[lib].append(run_child(make(src, dst, size, args.workers)))
                if lib != "floor":
                    check_same(src, dst)
    med = {lib: statistics.median(r["seconds"] for r in runs) for lib, runs in results.items()}
    peak = {lib: max(r["peak"] for r in runs) for lib, runs in results.items()}
    grown = {lib: max(r["peak"] - r["base"] for r in runs) for lib, runs in results.items()}
    threads = results["zarrc"][0]["threads"]
    workers = results["zarrc"][0]["workers"]
    unit = 4 * shards[0] * shards[1] * shards[2]
    bound = workers * 2 * unit + threads * 4 * chunks[0] * chunks[1] * chunks[2]
    print(f"\n{'library':<10} {'seconds':>8} {'peak MiB':>9} {'grown MiB':>10} {'x zarrc':>8}")
    for lib in libs:
        print(f"{lib:<10} {med[lib]:>8.2f} {peak[lib] / MiB:>9.0f} {grown[lib] / MiB:>10.0f} "
              f"{med[lib] / med['zarrc']:>8.2f}")
    ratio = med["zarrc"] / med["zarr+dask"]
    print(f"\nzarrc / floor: {med['zarrc'] / med['floor']:.2f}; zarr+dask / floor: "
          f"{med['zarr+dask'] / med['floor']:.2f}")
    print(f"\nzarrc / zarr+dask: {ratio:.2f} (target <= {TARGET}); zarrc's peak grew {grown['zarrc'] / MiB:.0f} MiB "
          f"above the interpreter's, against the help's bound {bound / MiB:.0f} MiB "
          f"({workers} workers x 2 x {unit / MiB:.0f} MiB + {threads} threads x a source chunk)")
    if args.json:
        Path(args.json).write_text(json.dumps({"size": size, "results": results, "median_seconds": med,
                                               "peak_bytes": peak, "grown_bytes": grown, "bound_bytes": bound, "ratio": ratio},
                                              indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
