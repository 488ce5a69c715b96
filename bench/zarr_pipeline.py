"""zarr-python's codec pipelines against each other: zarrc's ``ZarrcCodecPipeline``,
zarr-python's default, its fused pipeline and the zarrs pipeline.

    python bench/zarr_pipeline.py [--small] [--rounds 3] [--repeat 3] [--libs ...]
                                  [--layouts chunked,sharded] [--dir DIR] [--json PATH]

A 3-D float32 dataset (a smooth field, 256 MiB; ``--small``: 4 MiB) written once by
zarr-python's default pipeline in two layouts: ``chunked``, blosc-lz4 (byte shuffle)
in chunks of 1 MiB, and ``sharded``, zstd level 1 in inner chunks of 1 MiB within
shards of 64 MiB.  Every library is zarr-python (``zarr.open_array`` /
``create_array`` on a LocalStore) with ``codec_pipeline.path`` set to:

- ``zarrc``: ``zarrc.ZarrcCodecPipeline``;
- ``zarr``: ``zarr.core.codec_pipeline.BatchedCodecPipeline`` (the default);
- ``zarr-fused``: ``zarr.core.codec_pipeline.FusedCodecPipeline`` (zarr >= 3.4);
- ``zarrs``: ``zarrs.ZarrsCodecPipeline`` (``pip install zarrs``).

Those not installed are skipped.  Workloads: ``full read`` (``a[...]``, checked
against the data), ``64 chunk reads`` (64 single-chunk reads, one after the other,
at chunks spread over the array; inner chunks for the sharded layout), ``full write``
(``a[...] = data`` into a new array of the same layout, created untimed, read back
and checked).  Each library and layout runs in a fresh process of its own, which
times each workload ``--repeat`` times; that process is run ``--rounds`` times, the
libraries in turn.  The tables give the median over the rounds of each process's
median, and zarrc's time over the fastest peer's.  Writes are also judged against
the encode floor (measured in its own process, as ``bench_dtypes.py`` does): every
chunk (for the sharded layout, every inner chunk) encoded in memory with zarrc's
codec on all cores from contiguous copies made beforehand, no gathering, no store.
Targets: reads <= 0.8 x the fastest peer; writes <= 1.15 x the encode floor.  The
floor's process also times the store floor: what it encoded written as new files
(each chunk, or each shard) of one directory on all cores by plain ``os`` calls.
Where that alone exceeds 0.15 of the encode floor, the write target cannot be met
on the machine (storing is work no writer skips); the checks print both, and
zarrc's write over their sum.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
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

PIPELINES = {
    "zarrc": "zarrc.ZarrcCodecPipeline",
    "zarr": "zarr.core.codec_pipeline.BatchedCodecPipeline",
    "zarr-fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
    "zarrs": "zarrs.ZarrsCodecPipeline",
}
LIBS = list(PIPELINES)
LAYOUTS = ["chunked", "sharded"]
WORKLOADS = ["full read", "64 chunk reads", "full write"]
READ_TARGET = 0.8        # zarrc / fastest peer, reads
FLOOR_TARGET = 1.15      # zarrc's write / the encode floor (as bench_dtypes.py)
FLOOR = "encode floor"
STORE = "store floor"

# (shape, chunk, shard) per size: chunks of 1 MiB (small: 128 KiB), shards of 64 MiB (small: 1 MiB)
SIZES = {
    "full": ((256, 512, 512), (16, 128, 128), (64, 512, 512)),
    "small": ((64, 128, 128), (8, 64, 64), (16, 128, 128)),
}


def available(lib: str) -> bool:
    """Whether ``lib``'s pipeline can run in this interpreter."""
    return library_available(lib, needs=("zarr",))


def layout_kwargs(layout: str, size: str) -> dict:
    """zarr-python's create_array arguments of a layout."""
    import zarr

    _, chunk, shard = SIZES[size]
    if layout == "chunked":
        return {"chunks": chunk, "compressors": [zarr.codecs.BloscCodec(cname="lz4", clevel=5,
                                                                        shuffle="shuffle")]}
    return {"chunks": chunk, "shards": shard, "compressors": [zarr.codecs.ZstdCodec(level=1)]}


def make_data(root: str, size: str, layouts: list[str]) -> None:
    """The dataset (``data.npy``) and one array per layout, written by zarr-python's
    default pipeline."""
    import numpy as np
    import zarr

    shape = SIZES[size][0]
    data = smooth_field(shape, "float32")
    np.save(os.path.join(root, "data.npy"), data)
    for layout in layouts:
        a = zarr.create_array(zarr.storage.LocalStore(os.path.join(root, layout)), shape=shape,
                              dtype="float32", **layout_kwargs(layout, size))
        a[...] = data


def chunk_boxes(shape, chunk, n: int = 64) -> list[tuple[slice, ...]]:
    """``n`` boxes of one chunk each at chunks spread over the array (repeating only
    when the array has fewer chunks)."""
    import numpy as np

    grid = tuple(s // c for s, c in zip(shape, chunk))
    total = int(np.prod(grid))
    picks = np.random.default_rng(0).choice(total, n, replace=total < n)
    return [tuple(slice(int(j) * c, (int(j) + 1) * c) for j, c in zip(np.unravel_index(p, grid), chunk))
            for p in picks]


def worker(lib: str, root: str, layout: str, size: str, repeat: int) -> dict:
    """In a fresh process: each workload ``repeat`` times with ``lib``'s pipeline."""
    import numpy as np

    data = np.load(os.path.join(root, "data.npy"))
    if lib == FLOOR:
        floors = [encode_floor(data, layout, size, root) for _ in range(repeat)]
        return {"full write": [f[0] for f in floors], STORE: [f[1] for f in floors]}
    import zarr

    zarr.config.set({"codec_pipeline.path": PIPELINES[lib]})
    if lib == "zarrs":
        zarr.config.set({"codec_pipeline.strict": True})
    a = zarr.open_array(zarr.storage.LocalStore(os.path.join(root, layout), read_only=True))
    if type(a._async_array.codec_pipeline).__name__ != PIPELINES[lib].rsplit(".", 1)[1]:
        raise RuntimeError(f"{lib}: the array's pipeline is {type(a._async_array.codec_pipeline)}")
    # (opened and warm, one chunk read untimed: the same for all)
    boxes = chunk_boxes(data.shape, SIZES[size][1])
    if not np.array_equal(a[boxes[-1]], data[boxes[-1]]):
        raise RuntimeError(f"{lib}: a chunk read of {layout} differs from the data")
    times: dict[str, list[float]] = {w: [] for w in WORKLOADS}
    for _ in range(repeat):
        t = time.perf_counter()
        got = a[...]
        times["full read"].append(time.perf_counter() - t)
        if not np.array_equal(got, data):
            raise RuntimeError(f"{lib}: full read of {layout} differs from the data")
        del got
    for _ in range(repeat):
        t = time.perf_counter()
        for box in boxes:
            a[box]
        times["64 chunk reads"].append(time.perf_counter() - t)
    for i in range(repeat):
        path = os.path.join(root, f"write-{lib}-{layout}-{os.getpid()}-{i}")
        b = zarr.create_array(zarr.storage.LocalStore(path), shape=data.shape, dtype="float32",
                              **layout_kwargs(layout, size))
        t = time.perf_counter()
        b[...] = data
        times["full write"].append(time.perf_counter() - t)
        if i == 0 and not np.array_equal(b[...], data):
            raise RuntimeError(f"{lib}: full write of {layout} reads back wrong")
        shutil.rmtree(path)
    return times


def encode_floor(data, layout: str, size: str, root: str) -> tuple[float, float]:
    """Seconds to encode every chunk (inner chunk) of ``data`` in memory with zarrc's
    codec on all cores, from contiguous copies made beforehand (the encode floor);
    and seconds to store what that encoded, each chunk (for the sharded layout, each
    shard: its inner chunks one after the other) written as a new file of one
    directory under ``root`` on all cores, by plain ``os`` calls (the store floor:
    what any writer spends beyond encoding, with no gathering, no index, no
    subdirectories)."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from zarrc.codecs import Blosc, Zstd

    _, chunk, shard = SIZES[size]
    codec = (Blosc(cname="lz4", clevel=5, shuffle="shuffle", typesize=4) if layout == "chunked"
             else Zstd(level=1))
    corners = list(itertools.product(*[range(0, n, c) for n, c in zip(data.shape, chunk)]))
    parts = [np.ascontiguousarray(data[tuple(slice(i, i + c) for i, c in zip(corner, chunk))])
             for corner in corners]
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(codec.encode, parts[:1]))          # (threads started)
        t = time.perf_counter()
        encoded = list(pool.map(codec.encode, parts))
        encode_s = time.perf_counter() - t
        files: dict = {}
        for corner, blob in zip(corners, encoded):
            key = corner if layout == "chunked" else tuple(i // s for i, s in zip(corner, shard))
            files.setdefault(key, []).append(blob)
        blobs = [b"".join(bytes(b) for b in parts_) for parts_ in files.values()]
        folder = os.path.join(root, f"store-floor-{os.getpid()}")
        os.mkdir(folder)

        def store(item: tuple[int, bytes]) -> None:
            path = os.path.join(folder, str(item[0]))
            fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, item[1])
            finally:
                os.close(fd)
            os.rename(path + ".tmp", path)

        t = time.perf_counter()
        list(pool.map(store, enumerate(blobs)))
        store_s = time.perf_counter() - t
        shutil.rmtree(folder)
        return encode_s, store_s


def run_worker(lib: str, root: str, layout: str, size: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", lib,
                          "--path", root, "--layout", layout, "--size", size, "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True, cwd=str(REPO_ROOT))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = process_parser(__doc__, LIBS, "zarr-pipeline.json")
    parser.add_argument("--small", action="store_true", help="4 MiB of data instead of 256 MiB")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--layout", help=argparse.SUPPRESS)
    parser.add_argument("--size", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.path, args.layout, args.size, args.repeat)))
        return 0
    t_start = time.perf_counter()
    size = "small" if args.small else "full"
    wanted = split_names(parser, "libs", args.libs, LIBS)
    layouts = split_names(parser, "layouts", args.layouts, LAYOUTS)
    libs = [lib for lib in wanted if available(lib)]
    facts = announce(wanted, libs, args.repeat)
    shape, chunk, shard = SIZES[size]
    nbytes = 4 * shape[0] * shape[1] * shape[2]
    print(f"float32 {shape} ({nbytes / MiB:.0f} MiB), chunks {chunk}, shards {shard}; "
          f"{args.rounds} rounds, each a fresh process per library and layout, "
          f"{args.repeat} repetitions each")
    checks: list = []
    cases: list = []
    with tempfile.TemporaryDirectory(dir=args.dir) as root:
        make_data(root, size, layouts)
        for layout in layouts:
            runners = libs + ([FLOOR] if "zarrc" in libs else [])
            runs: dict = {lib: [] for lib in runners}
            for _ in range(args.rounds):
                for lib in runners:
                    runs[lib].append(run_worker(lib, root, layout, size, args.repeat))
            med = {lib: {w: statistics.median(statistics.median(r[w]) for r in runs[lib])
                         for w in runs[lib][0]} for lib in runners}
            rows = []
            for w in WORKLOADS:
                cells = [med[lib][w] * 1e3 for lib in libs]
                peers = [lib for lib in libs if lib != "zarrc"]
                ratio = floor_ratio = None
                if "zarrc" in libs and peers:
                    fastest = min(peers, key=lambda p: med[p][w])
                    ratio = med["zarrc"][w] / med[fastest][w]
                    if w != "full write":
                        checks.append({"layout": layout, "check": f"{w}: zarrc / fastest peer ({fastest})",
                                       "value": ratio, "target": READ_TARGET,
                                       "status": "PASS" if ratio <= READ_TARGET else "MISS"})
                if w == "full write" and FLOOR in med:
                    floor_ratio = med["zarrc"][w] / med[FLOOR][w]
                    store_share = med[FLOOR][STORE] / med[FLOOR][w]
                    checks.append({"layout": layout, "check": f"{w}: zarrc / encode floor "
                                   f"({med[FLOOR][w] * 1e3:.1f} ms; the store floor alone "
                                   f"{med[FLOOR][STORE] * 1e3:.1f} ms = {store_share:.2f} of it; "
                                   f"zarrc / (encode + store floors) "
                                   f"{med['zarrc'][w] / (med[FLOOR][w] + med[FLOOR][STORE]):.2f})",
                                   "value": floor_ratio, "target": FLOOR_TARGET,
                                   "status": "PASS" if floor_ratio <= FLOOR_TARGET else "MISS"})
                rows.append([w] + cells + [ratio, floor_ratio])
            print(f"\n== {layout}: median ms")
            print_table(rows, ["workload"] + libs + ["zarrc / fastest peer", "zarrc / encode floor"])
            cases.append({"layout": layout, "median_s": med, "runs": runs})
    print(f"\ntargets: reads <= {READ_TARGET:.2f} x the fastest peer; writes <= {FLOOR_TARGET:.2f} x the encode floor")
    for c in checks:
        print(f"  {c['layout']}: {c['check']}: {c['value']:.3f} (target <= {c['target']}): {c['status']}")
    conclude(args.json, args, facts, libs, cases, checks, t_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
