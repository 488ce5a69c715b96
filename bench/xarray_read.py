"""xarray reads: engine="zarrc" against engine="zarr" over zarr-python's pipelines.

    python bench/xarray_read.py [--small] [--rounds 3] [--repeat 3] [--layouts ...]
                                [--libs ...] [--dir DIR] [--json PATH]

One 3-D float32 variable ``v(time, y, x)`` of 256 x 512 x 512 (256 MiB;
``--small``: 32 x 128 x 128, 2 MiB, a smoke test), a smooth simulation-like
field (``_common.smooth_field``), written by xarray's ``to_zarr`` (zarr-python,
Zarr v3, consolidated) in two layouts:

- ``blosc-lz4``: blosc lz4, byte shuffle, clevel 5, chunks of 16 x 128 x 128
  (1 MiB; ``--small``: 8 x 32 x 32);
- ``zstd-sharded``: zstd level 3 in shards of 64 x 512 x 512 holding inner chunks
  of 16 x 128 x 128 (``--small``: shards of 16 x 128 x 128, inner 8 x 32 x 32).

Workloads, each timed in one process per library and layout (``--repeat``
times, their median), the libraries in turn, ``--rounds`` such processes each:

- ``open+load``: ``xr.open_dataset(path, engine=...)`` and ``.load()`` (after one
  untimed open and one-element read in the process: imports and first-use set-up);
- ``series``: the time series at one (y, x) point of the opened dataset (a
  different point each repetition), ``.values``;
- ``mean``: ``open_dataset(..., chunks={})`` (dask arrays of the on-disk chunks)
  and ``v.mean("time").compute()`` on dask's threaded scheduler.

Libraries: ``zarrc`` (engine="zarrc"); engine="zarr" with zarr-python's default
pipeline (``zarr``), its fused pipeline (``zarr-fused``,
``zarr.core.codec_pipeline.FusedCodecPipeline``, zarr >= 3.4) and the zarrs
pipeline (``zarrs``, ``zarrs.ZarrsCodecPipeline``); those not installed are
skipped.  Each process's results are checked against the first library's (the
same loaded sum, series and mean).  The table gives medians over the rounds and
zarrc / the fastest peer; target <= 0.8.
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
    process_parser,
    smooth_field,
    split_names,
)

SIZES = {  # name: (shape, chunks, shards)
    "full": ((256, 512, 512), (16, 128, 128), (64, 512, 512)),
    "small": ((32, 128, 128), (8, 32, 32), (16, 128, 128)),
}
LAYOUTS = ["blosc-lz4", "zstd-sharded"]
WORKLOADS = ["open+load", "series", "mean"]
PIPELINES = {
    "zarr": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "zarr-fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
    "zarrs": "zarrs.ZarrsCodecPipeline",
}
LIBS = ["zarrc", "zarr", "zarr-fused", "zarrs"]
TARGET = 0.8


def available(lib: str) -> bool:
    """Whether ``lib`` can run in this interpreter (xarray, dask and its library)."""
    return library_available(lib, needs=("xarray", "dask", "zarr"))


def write_data(path: str, layout: str, size: str) -> int:
    """The dataset at ``path``, written by xarray (zarr-python) in ``layout``; its bytes on disk."""
    import warnings

    import xarray as xr
    import zarr

    warnings.filterwarnings("ignore", message="Consolidated metadata")   # (v3: zarr-python warns)

    shape, chunks, shards = SIZES[size]
    ds = xr.Dataset({"v": (("time", "y", "x"), smooth_field(shape, "float32"))},
                    coords={"time": range(shape[0])})
    if layout == "blosc-lz4":
        enc = {"chunks": chunks, "compressors": [zarr.codecs.BloscCodec(
            cname="lz4", clevel=5, shuffle=zarr.codecs.BloscShuffle.shuffle)]}
    else:
        enc = {"chunks": chunks, "shards": shards, "compressors": [zarr.codecs.ZstdCodec(level=3)]}
    ds.to_zarr(path, mode="w", zarr_format=3, consolidated=True, encoding={"v": enc})
    return sum(f.stat().st_size for f in Path(path, "v").rglob("*") if f.is_file())


def worker(lib: str, path: str, repeat: int) -> dict:
    """In a fresh process: ``repeat`` timings of each workload with ``lib``, and the
    results' fingerprints."""
    import warnings

    import numpy as np
    import xarray as xr

    warnings.filterwarnings("ignore")            # (zarr-python's consolidated-metadata warning)
    engine = "zarrc"
    if lib != "zarrc":
        import zarr

        zarr.config.set({"codec_pipeline.path": PIPELINES[lib]})
        if lib == "zarrs":
            zarr.config.set({"codec_pipeline.strict": True})   # fail rather than fall back
        engine = "zarr"
    # warm-up, the same for all: imports (an editable install's rebuild check among
    # them), xarray's backend discovery, the library's first-use set-up
    with xr.open_dataset(path, engine=engine) as ds:
        ds["v"][0, 0, 0].load()
    times: dict[str, list[float]] = {w: [] for w in WORKLOADS}
    check: dict[str, float] = {}
    for i in range(repeat):
        t = time.perf_counter()
        ds = xr.open_dataset(path, engine=engine).load()
        times["open+load"].append(time.perf_counter() - t)
        check["sum"] = float(ds["v"].values.sum(dtype=np.float64))
        ds.close()
        ds = xr.open_dataset(path, engine=engine)
        ny, nx = ds.sizes["y"], ds.sizes["x"]
        y, x = (37 * i + 5) % ny, (53 * i + 11) % nx
        t = time.perf_counter()
        series = ds["v"].isel(y=y, x=x).values
        times["series"].append(time.perf_counter() - t)
        check[f"series{i}"] = float(series.sum(dtype=np.float64))
        ds.close()
        t = time.perf_counter()
        ds = xr.open_dataset(path, engine=engine, chunks={})
        mean = ds["v"].mean("time").compute(scheduler="threads")
        times["mean"].append(time.perf_counter() - t)
        check["mean"] = float(mean.values.sum(dtype=np.float64))
        check["dask_chunks"] = len(ds["v"].data.chunks[0]) * len(ds["v"].data.chunks[1])
        ds.close()
    return {"times": times, "check": check}


def run_worker(lib: str, path: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", lib, "--path", path,
                          "--repeat", str(repeat)], check=True, capture_output=True, text=True,
                         cwd=str(REPO_ROOT))
    return json.loads(out.stdout.strip().splitlines()[-1])


def same_check(a: dict, b: dict) -> bool:
    """Whether two workers' fingerprints agree (sums to float32 rounding)."""
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 1e-6 * max(1.0, abs(a[k])) for k in a)


def main(argv=None) -> int:
    parser = process_parser(__doc__, LIBS, "xarray-read.json")
    parser.add_argument("--small", action="store_true", help="2 MiB instead of 256 MiB: a smoke test")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.path, args.repeat)))
        return 0
    t_start = time.perf_counter()
    layouts = split_names(parser, "layouts", args.layouts, LAYOUTS)
    wanted = split_names(parser, "libs", args.libs, LIBS)
    libs = [lib for lib in wanted if available(lib)]
    if not libs:
        parser.error("none of the libraries can run here (xarray, dask and zarr are needed)")
    facts = announce(wanted, libs, args.repeat)
    size = "small" if args.small else "full"
    shape = SIZES[size][0]
    print(f"v{shape} float32 ({4 * shape[0] * shape[1] * shape[2] / MiB:.0f} MiB) written by xarray; "
          f"{args.rounds} rounds x {args.repeat} repetitions per library, each round a fresh process")
    rows, cases, checks = [], [], []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for layout in layouts:
            path = os.path.join(tmp, f"{layout}.zarr")
            stored = write_data(path, layout, size)
            print(f"{layout}: {stored / MiB:.1f} MiB stored")
            runs: dict = {lib: [] for lib in libs}
            for _ in range(args.rounds):
                for lib in libs:
                    runs[lib].append(run_worker(lib, path, args.repeat))
            first = runs[libs[0]][0]["check"]
            for lib in libs:
                for r in runs[lib]:
                    if not same_check(r["check"], first):
                        raise SystemExit(f"{layout}: {lib} read other values than {libs[0]}: "
                                         f"{r['check']} != {first}")
            for work in WORKLOADS:
                med = {lib: statistics.median(statistics.median(r["times"][work]) for r in runs[lib])
                       for lib in libs}
                ratio = {lib: med[lib] / med["zarrc"] if "zarrc" in med else None for lib in libs}
                for lib in libs:
                    rows.append([layout, work, lib, med[lib] * 1e3, ratio[lib]])
                peers = [lib for lib in libs if lib != "zarrc"]
                if "zarrc" in med and peers:
                    fastest = min(peers, key=med.__getitem__)
                    r = med["zarrc"] / med[fastest]
                    checks.append({"check": f"{layout} {work}: zarrc <= {TARGET}x the fastest peer "
                                   f"({fastest})", "ratio": r, "status": "PASS" if r <= TARGET else "FAIL"})
                cases.append({"layout": layout, "workload": work, "median_s": med,
                              "runs": {lib: [x["times"][work] for x in runs[lib]] for lib in libs}})
    print()
    print_table(rows, ["layout", "workload", "library", "median ms", "x zarrc"])
    print()
    for c in checks:
        print(f"{c['check']}: {c['ratio']:.3f}: {c['status']}")
    conclude(args.json, args, facts, libs, cases, checks, t_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
