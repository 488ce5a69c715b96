"""Issue 39's extensions, each against a peer on the same data in the same run:

1. rectilinear chunk grids: a full read and 40 random-box reads of an array on a
   rectilinear grid against the same data on a regular grid (zarrc both).  Grids:
   ``dask-like`` (equal edges, a short last chunk per dimension: the regular grid's
   own edges, written out), ``xenium-like`` (two image halves concatenated: tiles of
   1024, each half ending in a shorter tile: 4 runs per dimension, 16 regular
   parts), ``irregular`` (random edges, one regular part per chunk) and ``sharded
   irregular`` (shards of random edges, 5..15 inner chunks of 100^2 each, against
   regular shards of 10 x 10 of the same inner chunks).  Target: rectilinear <= 1.1
   x regular.  Random edges make boxes decode more than the regular grid of their
   mean edge (a box lands in a large chunk more often than in a small one: the
   script prints the ratio of decoded elements); their boxes are also compared with
   the regular grid whose boxes decode as many elements (``reg. N^2``).
2. ``scale_offset`` + ``cast_value`` (float32 stored as int16) full decode of
   256 MiB of float32, zarrc against zarr-python 3.4 (run by the Python 3.12 venv
   in a subprocess that times its own reads; zarr-python 3.1 has neither codec),
   bytes-only and zstd-1.  Target: zarrc <= 0.5 x zarr-python.
3. bfloat16 full reads against tensorstore (no cache): orbax-like (sharding_indexed,
   bytes + zstd-1 inside) and plain chunks (bytes + zstd-1), written by tensorstore.
   Target: zarrc <= 0.8 x tensorstore.

    python bench/extensions.py [--quick] [--repeat N] [--only rect,values,bf16] [--cpu]
                               [--py312 .venv312/bin/python]

Every read is checked bit for bit before timing; times are medians of interleaved
repetitions; ``ratio`` is zarrc's time over the peer's (lower is better).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO_ROOT, interleaved_times, print_table, smooth_field

ZSTD1 = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
ROWS: list[list[object]] = []


def row(section: str, case: str, op: str, z: float, peer: float, target: float, peer_name: str) -> None:
    ratio = z / peer
    ROWS.append([section, case, op, round(z * 1e3, 1), peer_name, round(peer * 1e3, 1), round(ratio, 2),
                 f"<= {target}", "PASS" if ratio <= target else "MISS"])


def med(times: list[float]) -> float:
    return statistics.median(times)


# ---------------------------------------------------------------------- 1. rectilinear

def rect_grids(n: int, rng: np.random.Generator) -> dict[str, tuple[list[list[int]], tuple[int, int],
                                                                   tuple[int, int] | None]]:
    """name -> (rectilinear edges per dimension, the regular chunk shape to compare with,
    the inner chunks of a sharded grid: the edges and the regular shape are then its
    shards')."""
    c = 1000 if n % 1000 else 900
    dask = [c] * (n // c) + ([n % c] if n % c else [])

    def xen(m: int) -> list[int]:
        half = [1024] * (m // 2 // 1024)
        rest = m - 2 * sum(half)
        mid = [rest // 2, rest - rest // 2]
        return [e for e in half + [mid[0]] + half + [mid[1]] if e]

    def irregular(m: int) -> list[int]:
        edges = []
        while sum(edges) < m:
            edges.append(int(rng.integers(500, 1550)))
        edges[-1] -= sum(edges) - m
        return [e for e in edges if e]

    def shards(m: int, inner: int) -> list[int]:
        edges = []
        while sum(edges) < m:
            edges.append(int(rng.integers(5, 16)) * inner)
        edges[-1] -= sum(edges) - m          # (a multiple of inner: m is)
        return [e for e in edges if e]

    irr = [irregular(n), irregular(n)]
    mean = round(n / ((len(irr[0]) + len(irr[1])) / 2))
    inner = 100 if n % 100 == 0 else 64
    return {"dask-like": ([dask, dask], (c, c), None),
            "xenium-like": ([xen(n), xen(n)], (1024, 1024), None),
            "irregular": (irr, (mean, mean), None),
            "sharded irregular": ([shards(n, inner), shards(n, inner)], (10 * inner, 10 * inner), (inner, inner))}


def decoded_elements(edges: list[list[int]], shape: tuple[int, int], box: int,
                     starts: list[tuple[int, int]]) -> int:
    """The elements the boxes' reads decode on a grid of ``edges`` (C-order zstd
    chunks: each touched chunk up to the box's last element in it): the work a
    grid's layout sets, whatever the reader."""
    offsets = [np.r_[0, np.cumsum(e)] for e in edges]
    total = 0
    for i, j in starts:
        (r0, r1), (c0, c1) = [(int(np.searchsorted(o, s, "right")) - 1, int(np.searchsorted(o, s + box - 1, "right")))
                              for o, s in zip(offsets, (i, j))]
        for r in range(r0, r1):
            for c in range(c0, c1):
                width = min(offsets[1][c + 1], shape[1]) - offsets[1][c]
                last_row = min(i + box, offsets[0][r + 1]) - 1 - offsets[0][r]
                last_col = min(j + box, offsets[1][c + 1]) - 1 - offsets[1][c]
                total += int(last_row * width + last_col + 1)
    return total


def bench_rectilinear(root: Path, args) -> None:
    import zarrc
    n = 2048 if args.quick else 8100
    rng = np.random.default_rng(1)
    data = smooth_field((n, n), "uint16", seed=2)
    box = 256
    starts = [(int(rng.integers(0, n - box)), int(rng.integers(0, n - box))) for _ in range(40)]

    def boxes(a):
        return [a[i:i + box, j:j + box] for i, j in starts]

    for name, (edges, regular, inner) in rect_grids(n, rng).items():
        arrays = {}
        kinds: list[tuple[str, object]] = [("rectilinear", edges), ("regular", regular)]
        matched = None if inner is not None else equal_work_chunk(edges, data.shape, box, starts, regular[0])
        if matched is not None:
            kinds.append(("regular, equal work", (matched, matched)))
        for kind, chunks in kinds:
            layout = {"chunks": chunks} if inner is None else {"chunks": inner, "shards": chunks}
            a = zarrc.create_array(str(root / "rect" / name / kind), shape=data.shape, dtype=data.dtype,
                                   compressors=[ZSTD1], fill_value=0, **layout)
            a[...] = data
            a = zarrc.open_array(str(root / "rect" / name / kind), mode="r")
            assert (a[...] == data).all(), (name, kind)
            assert all((b == data[i:i + box, j:j + box]).all() for b, (i, j) in zip(boxes(a), starts))
            arrays[kind] = a
        nchunks = len(edges[0]) * len(edges[1])
        label = f"{name} ({n}^2 u16, {nchunks} {'chunks' if inner is None else 'shards'})"
        full = interleaved_times({k: (lambda a=a: a[...]) for k, a in arrays.items()}, args.repeat)
        row("rectilinear", label, "full read", med(full["rectilinear"]), med(full["regular"]), 1.1, "regular")
        grid_edges = {"rectilinear": edges, "regular": [[c] * -(-n // c) for c in regular]}
        if inner is not None:     # (the same inner chunks on both grids)
            grid_edges = {k: [[i] * -(-n // i) for i in inner] for k in grid_edges}
        work = [decoded_elements(grid_edges[k], data.shape, box, starts) for k in ("rectilinear", "regular")]
        print(f"{name}: the 40 boxes decode {work[0] / work[1]:.3f} x the regular grid's elements")
        if matched is not None:
            other = decoded_elements([[matched] * -(-n // matched)] * 2, data.shape, box, starts)
            print(f"{name}: ... and {work[0] / other:.3f} x those of the regular grid of {matched}^2")
        rand = interleaved_times({k: (lambda a=a: boxes(a)) for k, a in arrays.items()}, args.repeat)
        row("rectilinear", label, "40 boxes 256^2", med(rand["rectilinear"]), med(rand["regular"]), 1.1,
            "regular")
        if matched is not None:
            row("rectilinear", label, "40 boxes 256^2", med(rand["rectilinear"]), med(rand["regular, equal work"]),
                1.1, f"reg. {matched}^2")
        if args.cpu:        # one thread, its CPU time: what a loaded machine's wall times blur
            with zarrc.config.set(threads=1):
                for op, fn in (("full read", lambda a: a[...]), ("40 boxes 256^2", boxes)):
                    cpu = interleaved_times({k: (lambda a=a, fn=fn: cpu_time(fn, a)) for k, a in arrays.items()},
                                            args.repeat, self_timed=True)
                    row("rectilinear", label, f"{op}, 1 thread CPU", med(cpu["rectilinear"]),
                        med(cpu["regular"]), 1.1, "regular")
                    if matched is not None and op != "full read":
                        row("rectilinear", label, f"{op}, 1 thread CPU", med(cpu["rectilinear"]),
                            med(cpu["regular, equal work"]), 1.1, f"reg. {matched}^2")


def equal_work_chunk(edges: list[list[int]], shape: tuple[int, int], box: int, starts: list[tuple[int, int]],
                     mean: int) -> int | None:
    """The square chunk edge of a regular grid whose reads of the boxes decode as many
    elements as the rectilinear grid's (None if the regular grid of the mean edge
    already does, within 2%).  Boxes that land in a grid's chunks meet large chunks
    more often than small ones, so random edges decode more than their mean edge's
    regular grid: this grid sets the same decode work, leaving the planning and the
    per-chunk overhead of the two grids to compare."""
    n = shape[0]
    work = decoded_elements(edges, shape, box, starts)
    def regular_work(c: int) -> int:
        return decoded_elements([[c] * -(-n // c)] * 2, shape, box, starts)
    if abs(regular_work(mean) / work - 1) <= 0.02:
        return None
    return min(range(mean // 2, 2 * mean, 8), key=lambda c: abs(regular_work(c) - work))


def cpu_time(fn, *args) -> float:
    """The CPU seconds this process spends in ``fn(*args)``."""
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


# ---------------------------------------------------------------------- 2. value codecs

PEER_SCRIPT = r"""
import hashlib, json, sys, time, statistics
import zarr
path, repeat = sys.argv[1], int(sys.argv[2])
a = zarr.open_array(path, mode="r")
out = a[...]
digest = hashlib.sha1(out.tobytes()).hexdigest()
times = []
for _ in range(repeat):
    t0 = time.perf_counter(); a[...]; times.append(time.perf_counter() - t0)
print(json.dumps({"version": zarr.__version__, "sha1": digest, "times": times}))
"""


def bench_values(root: Path, args) -> None:
    import zarrc
    py312 = Path(args.py312)
    if not py312.exists():
        print(f"values: skipped, no Python 3.12 venv with zarr-python 3.4 at {py312}")
        return
    shape = (2048, 2048) if args.quick else (8192, 8192)        # float32: 16 / 256 MiB
    data = smooth_field(shape, "float32", seed=3)
    filters = [zarrc.codecs.ScaleOffset(offset=270, scale=100),
               zarrc.codecs.CastValue(data_type="int16", out_of_range="clamp", rounding="nearest-even")]
    for comp_name, comps in (("bytes", None), ("zstd-1", [ZSTD1])):
        path = str(root / "values" / comp_name)
        a = zarrc.create_array(path, shape=shape, chunks=(1024, 1024), dtype="float32", filters=filters,
                               compressors=comps, fill_value=0)
        a[...] = data
        a = zarrc.open_array(path, mode="r")
        want = hashlib.sha1(a[...].tobytes()).hexdigest()
        zt: list[float] = []
        pt: list[float] = []
        version = "?"
        for _ in range(max(2, args.repeat // 2)):       # rounds: zarrc, then the peer's process
            for _ in range(2):
                t0 = time.perf_counter()
                a[...]
                zt.append(time.perf_counter() - t0)
            res = subprocess.run([str(py312), "-c", PEER_SCRIPT, path, "2"], capture_output=True, text=True,
                                 check=True)
            peer = json.loads(res.stdout.strip().splitlines()[-1])
            assert peer["sha1"] == want, "zarr-python reads other values than zarrc"
            pt += peer["times"]
            version = peer["version"]
        mib = np.prod(shape) * 4 >> 20
        row("scale_offset+cast_value", f"f32->i16 {mib} MiB, {comp_name}", "full read", med(zt), med(pt), 0.5,
            f"zarr {version}")


# ---------------------------------------------------------------------- 3. bfloat16

def bench_bf16(root: Path, args) -> None:
    import ml_dtypes
    import tensorstore as ts

    import zarrc
    n = 2048 if args.quick else 8192
    rng = np.random.default_rng(4)
    data = rng.standard_normal((n, n // 2), dtype=np.float32).astype(ml_dtypes.bfloat16)   # 32 MiB (full)
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    cases = {
        "orbax-like sharded": {
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n // 4, n // 2]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [n // 32, n // 2], "codecs": [le, ZSTD1],
                "index_codecs": [le, {"name": "crc32c"}]}}]},
        "plain chunks": {
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n // 16, n // 8]}},
            "codecs": [le, ZSTD1]},
    }
    for label, meta in cases.items():
        path = str(root / "bf16" / label.replace(" ", "-"))
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
        t = ts.open({**spec, "metadata": {"shape": list(data.shape), "data_type": "bfloat16", **meta}},
                    create=True).result()
        t.write(data).result()
        reader = ts.open({**spec, "context": {"cache_pool": {"total_bytes_limit": 0}}}).result()
        a = zarrc.open_array(path, mode="r")
        assert (a[...].view(np.uint16) == data.view(np.uint16)).all()
        assert (reader.read().result().view(np.uint16) == data.view(np.uint16)).all()
        times = interleaved_times({"zarrc": lambda a=a: a[...], "tensorstore": lambda r=reader: r.read().result()},
                                  args.repeat)
        mib = data.nbytes >> 20
        row("bfloat16", f"{label} {n}x{n // 2} ({mib} MiB)", "full read", med(times["zarrc"]),
            med(times["tensorstore"]), 0.8, "tensorstore")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small arrays, a smoke test")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default="rect,values,bf16")
    parser.add_argument("--cpu", action="store_true",
                        help="rectilinear: also the CPU time of one-thread reads (less blurred by load)")
    parser.add_argument("--py312", default=str(REPO_ROOT / ".venv312" / "bin" / "python"),
                        help="a Python with zarr-python 3.4 (for the value codecs)")
    parser.add_argument("--json", default=str(REPO_ROOT / ".bench" / "extensions.json"))
    args = parser.parse_args()
    only = set(args.only.split(","))
    print(f"load average at start: {os.getloadavg()}  (cores: {os.cpu_count()})")
    root = Path(tempfile.mkdtemp(prefix="zarrc-ext-"))
    try:
        if "rect" in only:
            bench_rectilinear(root, args)
        if "values" in only:
            bench_values(root, args)
        if "bf16" in only:
            bench_bf16(root, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(ROWS, ["what", "case", "op", "zarrc ms", "peer", "peer ms", "ratio", "target", ""],
                right=[False, False, False, True, False, True, True, False, False])
    print(f"load average at end: {os.getloadavg()}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "load_end": os.getloadavg(), "rows": ROWS}, indent=2) + "\n")


if __name__ == "__main__":
    main()
