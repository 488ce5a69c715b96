"""Array read/write benchmark: zarrc against zarr-python, zarr-python with the zarrs
codec pipeline, and tensorstore, on the same data in the same run.

    python bench/bench_array.py [--layout chunked|sharded] [--quick] [--repeat N] [--json PATH]

Data: a 512^3 uint16 field (smooth waves plus noisy low bits, like simulation
output) stored as Zarr v3, blosc lz4 + byte shuffle (clevel 5), written once by
zarrc and checked bit-exact in every library.  Layouts: "chunked" (64^3 chunks)
and "sharded" (256^3 shards of 32^3 inner chunks, index bytes + crc32c).
Workloads: full read; chunk-by-chunk (or shard-by-shard and inner-chunk-by-inner-
chunk) read; 100 single-element reads; 400 random 16^3 reads; full write.
Libraries run interleaved within each repetition; the table shows median seconds
and zarrc's time as a ratio of the fastest peer (< 1: zarrc is faster).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._common import (  # noqa: E402
    REPO_ROOT, interleaved_times, machine_facts, print_table, smooth_field, write_json,
)

warnings.filterwarnings("ignore")


def open_peers(path: str) -> dict:
    """Read handles on the array at ``path`` for every library that is installed."""
    import zarrc

    handles = {"zarrc": zarrc.open_array(path, mode="r")}
    try:
        import zarr

        handles["zarr-python"] = zarr.open_array(path, mode="r")
        try:
            import zarrs  # noqa: F401

            with zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline"}):
                handles["zarrs"] = zarr.open_array(path, mode="r")
        except ImportError:
            pass
    except ImportError:
        pass
    try:
        import tensorstore as ts

        handles["tensorstore"] = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}},
                                         read=True).result()
    except ImportError:
        pass
    return handles


def reader(name: str, handle):
    if name == "tensorstore":
        return lambda sel: handle[sel].read().result()
    return lambda sel: handle[sel]


def writer(name: str, path: str, shape, chunks, shards=None):
    """A function writing the whole array with library ``name`` into a fresh ``path``
    (``shards``: the shard shape, ``chunks`` then being the inner chunks)."""
    blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                "typesize": 2, "blocksize": 0}}
    if name == "zarrc":
        import zarrc

        def write(data):
            a = zarrc.create_array(path, shape=shape, dtype="uint16", chunks=chunks, shards=shards,
                                   compressors=blosc, overwrite=True)
            a[...] = data
        return write
    if name in ("zarr-python", "zarrs"):
        import zarr

        def write(data):
            conf = {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline"} if name == "zarrs" else {}
            with zarr.config.set(conf):
                a = zarr.create_array(path, shape=shape, dtype="uint16", chunks=chunks, shards=shards,
                                      overwrite=True,
                                      compressors=zarr.codecs.BloscCodec(cname="lz4", clevel=5,
                                                                         shuffle="shuffle"))
                a[...] = data
        return write
    import tensorstore as ts

    def write(data):
        codecs = [{"name": "bytes", "configuration": {"endian": "little"}}, blosc]
        grid = chunks
        if shards is not None:
            grid = shards
            codecs = [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": list(chunks), "codecs": codecs, "index_location": "end",
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}]}}]
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path},
                "metadata": {"shape": list(shape), "data_type": "uint16",
                             "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
                             "codecs": codecs}}
        t = ts.open(spec, create=True, delete_existing=True).result()
        t.write(data).result()
    return write


def boxes_of(shape, box):
    """Selections tiling ``shape`` with boxes of ``box``."""
    grid = [range(0, s, c) for s, c in zip(shape, box)]
    return [tuple(slice(i, i + c) for i, c in zip(corner, box))
            for corner in np.array(np.meshgrid(*grid, indexing="ij")).reshape(len(shape), -1).T]


def workloads(shape, chunks, shards, rng):
    points = [tuple(int(v) for v in rng.integers(0, shape)) for _ in range(100)]
    corners = [tuple(int(v) for v in rng.integers(0, np.array(shape) - 16)) for _ in range(400)]
    boxes = [tuple(slice(c, c + 16) for c in corner) for corner in corners]
    work = {"full read": lambda read: read(...)}
    if shards is None:
        chunk_sels = boxes_of(shape, chunks)
        work["chunk-by-chunk read"] = lambda read: [read(s) for s in chunk_sels]
    else:
        shard_sels, inner_sels = boxes_of(shape, shards), boxes_of(shape, chunks)
        work["shard-by-shard read"] = lambda read: [read(s) for s in shard_sels]
        work["inner-chunk-by-inner-chunk read"] = lambda read: [read(s) for s in inner_sels]
    work["100 single-element reads"] = lambda read: [read(p) for p in points]
    work["400 random 16^3 reads"] = lambda read: [read(b) for b in boxes]
    return work


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", choices=("chunked", "sharded"), default="chunked")
    parser.add_argument("--quick", action="store_true", help="128^3 array, 3 repetitions")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--json", default=None, help="default: .bench/array-<layout>.json")
    parser.add_argument("--dir", default=str(REPO_ROOT / ".bench" / "data"))
    args = parser.parse_args(argv)
    n = 128 if args.quick else 512
    repeat = args.repeat or (3 if args.quick else 5)
    shape = (n, n, n)
    if args.layout == "chunked":
        chunks, shards = (64, 64, 64), None
    else:
        chunks, shards = (32, 32, 32), (min(n, 256),) * 3
    print("machine:", machine_facts())
    data = smooth_field(shape, np.uint16, seed=0)
    root = Path(args.dir)
    source = str(root / f"u16_{n}_{args.layout}_blosc_lz4")
    writer("zarrc", source, shape, chunks, shards)(data)

    handles = open_peers(source)
    names = list(handles)
    readers = {name: reader(name, h) for name, h in handles.items()}
    for name, read in readers.items():
        if not np.array_equal(np.asarray(read(...)), data):
            raise SystemExit(f"{name} did not read the data bit-exactly")
    print(f"libraries: {names}; data {shape} uint16, chunks {chunks}, shards {shards}, blosc lz4 shuffle; "
          f"{repeat} repetitions, interleaved; all read the data bit-exactly\n")

    rows, results = [], {}
    rng = np.random.default_rng(1)
    for label, work in workloads(shape, chunks, shards, rng).items():
        times = interleaved_times({name: (lambda r=readers[name], w=work: w(r)) for name in names}, repeat)
        results[label] = times
    writes = {name: writer(name, str(root / f"write_{name}"), shape, chunks, shards) for name in names}
    results["full write"] = interleaved_times({name: (lambda w=w: w(data)) for name, w in writes.items()},
                                              repeat)
    for name in names:
        shutil.rmtree(root / f"write_{name}", ignore_errors=True)

    header = ["workload"] + [f"{n} s" for n in names] + ["zarrc / fastest peer"]
    summary = {}
    for label, times in results.items():
        med = {name: float(np.median(t)) for name, t in times.items()}
        peers = [med[n] for n in names if n != "zarrc"]
        ratio = med["zarrc"] / min(peers) if peers else None
        rows.append([label] + [med[n] for n in names] + [ratio])
        summary[label] = {"median_s": med, "zarrc_over_fastest_peer": ratio, "all_s": times}
    print_table([[r[0]] + [f"{v:.4f}" for v in r[1:-1]] + [r[-1]] for r in rows], header)
    json_path = args.json or str(REPO_ROOT / ".bench" / f"array-{args.layout}.json")
    path = write_json(json_path, {"machine": machine_facts(), "shape": shape, "chunks": chunks, "shards": shards,
                                  "repeat": repeat, "results": summary})
    print(f"\nJSON: {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
