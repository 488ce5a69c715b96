"""Data types benchmark (issue 23): full reads and writes of zarr-python 3's extension
data types and of a ``[sharding_indexed, zstd]`` array, zarrc against its peers on
the same data in the same run.

    python bench/bench_dtypes.py [--quick] [--libs ...] [--repeat N] [--json PATH] [--dir DIR]

datetime64: a 256^3 numpy.datetime64[ns] array (--quick: 32^3) in 64^3 chunks
(--quick: 16^3), zstd level 3.  utf32: a 1-D fixed_length_utf32 array of 10^7
items of up to 8 characters (U8; --quick: 10^5) in chunks of 2^18 items (--quick:
10^4), zstd level 3.  sharded-zstd: a 256^3 uint16 array (--quick: 32^3) whose
codecs are ``[sharding_indexed, zstd]`` (the sharding codec as serializer, then a
compressor, as zarr-python writes it given ``serializer=ShardingCodec(...)``):
128^3 shards (--quick: 16^3) of 32^3 inner chunks (--quick: 8^3).

Each array is written once (the reference, by zarr-python when installed, else
zarrc); every library reads it and is checked bit-exactly against NumPy before
timing.  A write is timed into a fresh copy of the reference's metadata (no chunks)
opened beforehand, and checked by reading the copy back.  A library that cannot
open, read or write an array shows "unsupported", with the reason below the table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _suite_libs
from bench._common import (
    REPO_ROOT,
    announce,
    conclude,
    interleaved_times,
    print_table,
    smooth_field,
    split_names,
)

warnings.filterwarnings("ignore")

FUSED_PIPELINE = "zarr.core.codec_pipeline.FusedCodecPipeline"   # zarr-python 3.4+
LIBRARIES = ("zarrc", "zarr-python", "zarr-fused", "zarrs", "tensorstore")
CASE_NAMES = ("datetime64", "utf32", "sharded-zstd")
RATIO_TARGET = 0.8      # zarrc / fastest peer
FLOOR_TARGET = 1.15     # zarrc's write / the encode floor (every stored object encoded in memory)
FLOOR = "encode floor"
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


# -- the arrays ---------------------------------------------------------------------

def case_specs(quick: bool) -> dict[str, dict]:
    """name -> shape, chunks (the grid), codecs (v3 JSON), data maker, description."""
    n3, c3 = (32, 16) if quick else (256, 64)
    n1, c1 = (10**5, 10**4) if quick else (10**7, 2**18)
    shard, inner = (16, 8) if quick else (128, 32)
    little = {"name": "bytes", "configuration": {"endian": "little"}}
    return {
        "datetime64": {"shape": (n3,) * 3, "chunks": (c3,) * 3, "codecs": [little, ZSTD],
                       "make": lambda: datetimes((n3,) * 3),
                       "describe": f"numpy.datetime64[ns] {n3}^3, chunks {c3}^3, zstd level 3"},
        "utf32": {"shape": (n1,), "chunks": (c1,), "codecs": [little, ZSTD], "make": lambda: strings(n1, 8),
                  "describe": f"fixed_length_utf32 U8 x {n1:,}, chunks of {c1:,}, zstd level 3"},
        "sharded-zstd": {
            "shape": (n3,) * 3, "chunks": (shard,) * 3,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [inner] * 3, "codecs": [little], "index_location": "end",
                "index_codecs": [little, {"name": "crc32c"}]}}, ZSTD],
            "make": lambda: smooth_field((n3,) * 3, "uint16"),
            "describe": f"uint16 {n3}^3, [sharding_indexed ({shard}^3 shards of {inner}^3), zstd level 3]"},
    }


def datetimes(shape) -> np.ndarray:
    """Timestamps a second apart, give or take a smooth field of microseconds."""
    base = np.datetime64("2020-01-01T00:00:00", "ns").astype(np.int64)
    steps = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * 10**9
    return (base + steps + smooth_field(shape, "int32").astype(np.int64) * 1000).view("M8[ns]")


def strings(n: int, length: int) -> np.ndarray:
    """``n`` strings of 1..``length`` lowercase letters, built as UTF-32 code units."""
    rng = np.random.default_rng(23)
    codes = rng.integers(ord("a"), ord("z") + 1, (n, length), dtype=np.uint32)
    codes[np.arange(length) >= rng.integers(1, length + 1, n)[:, None]] = 0
    return codes.view(f"<U{length}").reshape(n)


def same_bits(a, b: np.ndarray) -> bool:
    a = np.asarray(a)
    return (a.shape == b.shape and a.dtype == b.dtype
            and np.ascontiguousarray(a).view(np.uint8).tobytes() == np.ascontiguousarray(b).view(np.uint8).tobytes())


def write_reference(path: Path, spec: dict, data: np.ndarray, libs: list[str]) -> str:
    """The array at ``path`` with every chunk written (by zarr-python when installed);
    returns who wrote it."""
    shutil.rmtree(path, ignore_errors=True)
    doc = {"zarr_format": 3, "node_type": "array", "shape": list(spec["shape"]),
           "data_type": data_type_json(data.dtype),
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(spec["chunks"])}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": fill_json(data.dtype), "codecs": spec["codecs"], "attributes": {}}
    path.mkdir(parents=True)
    (path / "zarr.json").write_text(json.dumps(doc, indent=2))
    for lib in ("zarr-python", "zarrc"):
        if lib in libs or lib == "zarrc":
            try:
                open_array(lib, str(path), write=True)[...] = data
                return lib
            except Exception as exc:  # noqa: BLE001 - try the next writer
                print(f"  (reference not written by {lib}: {type(exc).__name__}: {exc})")
    raise SystemExit(f"{path}: no library could write the reference array")


def data_type_json(dtype: np.dtype):
    if dtype.kind == "M":
        unit, scale = np.datetime_data(dtype)
        return {"name": "numpy.datetime64", "configuration": {"unit": unit, "scale_factor": scale}}
    if dtype.kind == "U":
        return {"name": "fixed_length_utf32", "configuration": {"length_bytes": dtype.itemsize}}
    return dtype.name


def fill_json(dtype: np.dtype):
    return {"M": -2**63, "U": ""}.get(dtype.kind, 0)


# -- libraries ----------------------------------------------------------------------

def has_fused() -> bool:
    try:
        from zarr.core import codec_pipeline
    except ImportError:
        return False
    return hasattr(codec_pipeline, "FusedCodecPipeline")


def available(names) -> list[str]:
    suite = _suite_libs.available([n for n in names if n != "zarr-fused"])
    return [n for n in names if n in suite or (n == "zarr-fused" and has_fused())]


def open_array(lib: str, path: str, write: bool = False):
    if lib == "tensorstore":
        import tensorstore as ts

        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
        return ts.open(spec, open=True, read=True, write=write).result()
    if lib == "zarr-fused":
        import zarr

        with zarr.config.set({"codec_pipeline.path": FUSED_PIPELINE}):
            return zarr.open_array(path, mode="r+" if write else "r")
    return _suite_libs.open_array(lib, path, None, write)  # type: ignore[arg-type]  # (v3: layout unused)


def read_all(lib: str, handle) -> np.ndarray:
    return handle.read().result() if lib == "tensorstore" else handle[...]


def write_all(lib: str, handle, data: np.ndarray) -> None:
    if lib == "tensorstore":
        handle.write(data).result()
    else:
        handle[...] = data


def why(exc: BaseException) -> str:
    """The reason, one line (of a long tensorstore message, the cause after the path)."""
    lines = str(exc).split(" [tensorstore_spec")[0].splitlines()
    text = lines[0] if lines else ""
    if len(text) > 160:
        text = "..." + text.rsplit('": ', 1)[-1][:160]
    return f"{type(exc).__name__}: {text}"


# -- one array --------------------------------------------------------------------

class Case:
    def __init__(self, name: str, spec: dict, libs: list[str], root: Path, repeat: int) -> None:
        self.name, self.spec, self.libs, self.repeat = name, spec, libs, repeat
        self.src = root / name
        self.out = root / "out"
        self.rows: dict[str, dict] = {}

    def run(self) -> None:
        self.data = self.spec["make"]()
        self.writer = write_reference(self.src, self.spec, self.data, self.libs)
        self.rows["full read"] = self.measure(self.read_fn)
        self.rows["full write"] = self.measure(self.write_fn, {FLOOR: encode_floor_fn(self.spec, self.data)})

    def measure(self, make_fn, extra: dict | None = None) -> dict:
        """Each library's times (and ``extra``'s, interleaved with them but not a peer)."""
        row: dict = {"unsupported": {}, "all_s": {}}
        fns = dict(extra or {})
        for lib in self.libs:
            try:
                fns[lib] = make_fn(lib)
            except Exception as exc:  # noqa: BLE001 - reported as unsupported, with the reason
                row["unsupported"][lib] = why(exc)
        if fns:
            row["all_s"] = interleaved_times(fns, self.repeat, self_timed=True)
        row["median_s"] = {lib: statistics.median(t) for lib, t in row["all_s"].items()}
        peers = [v for lib, v in row["median_s"].items() if lib not in ("zarrc", FLOOR)]
        zarrc = row["median_s"].get("zarrc")
        row["zarrc_over_fastest_peer"] = zarrc / min(peers) if zarrc and peers else None
        floor = row["median_s"].get(FLOOR)
        row["zarrc_over_encode_floor"] = zarrc / floor if zarrc and floor else None
        return row

    def read_fn(self, lib: str):
        handle = open_array(lib, str(self.src))
        if not same_bits(read_all(lib, handle), self.data):
            raise SystemExit(f"{lib}: the read of {self.src} differs from NumPy")

        def once() -> float:
            t0 = time.perf_counter()
            read_all(lib, handle)
            return time.perf_counter() - t0
        return once

    def fresh(self, lib: str) -> str:
        """A copy of the reference's metadata alone (no chunks), for ``lib`` to write."""
        dest = self.out / lib
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        shutil.copy(self.src / "zarr.json", dest / "zarr.json")
        return str(dest)

    def write_fn(self, lib: str):
        write_all(lib, open_array(lib, self.fresh(lib), write=True), self.data)
        check = open_array(self.writer, str(self.out / lib))
        if not same_bits(read_all(self.writer, check), self.data):
            raise SystemExit(f"{lib}: its write of {self.name} reads back different")

        def once() -> float:
            handle = open_array(lib, self.fresh(lib), write=True)
            t0 = time.perf_counter()
            write_all(lib, handle, self.data)
            return time.perf_counter() - t0
        return once

    def cleanup(self) -> None:
        shutil.rmtree(self.src, ignore_errors=True)
        shutil.rmtree(self.out, ignore_errors=True)


def encode_floor_fn(spec: dict, data: np.ndarray):
    """Encoding every stored object (chunk; for the sharded array, shard) of ``data``
    in memory with zarrc's zstd on all cores, from C-contiguous copies made
    beforehand: the work any writer must do, without gathering, I/O or a store."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from zarrc.codecs import Zstd

    level = spec["codecs"][-1]["configuration"]["level"]
    codec = Zstd(level=level)
    grid = spec["chunks"]
    starts = [range(0, n, c) for n, c in zip(data.shape, grid)]
    parts = [np.ascontiguousarray(data[tuple(slice(i, i + c) for i, c in zip(corner, grid))])
             for corner in itertools.product(*starts)]
    pool = ThreadPoolExecutor(os.cpu_count() or 1)

    def once() -> float:
        t0 = time.perf_counter()
        for _ in pool.map(codec.encode, parts):
            pass
        return time.perf_counter() - t0
    return once


def report(case: Case, checks: list) -> dict:
    libs = case.libs
    print(f"\n== {case.name}: {case.spec['describe']} (reference written by {case.writer})")
    table = []
    for label, r in case.rows.items():
        cells = [f"{r['median_s'][lib]:.4f}" if lib in r["median_s"] else "unsupported" for lib in libs]
        ratio = r["zarrc_over_fastest_peer"]
        reps = len(next(iter(r["all_s"].values()))) if r["all_s"] else 0
        table.append([label] + cells + ["-" if ratio is None else f"{ratio:.2f}", reps])
        if ratio is not None:
            checks.append({"case": case.name, "check": f"{label}: zarrc / fastest peer", "value": ratio,
                           "target": RATIO_TARGET, "status": "PASS" if ratio <= RATIO_TARGET else "MISS"})
        floor = r.get("zarrc_over_encode_floor")
        if floor is not None:
            checks.append({"case": case.name, "check": f"{label}: zarrc / encode floor "
                           f"({r['median_s'][FLOOR]:.4f} s)", "value": floor, "target": FLOOR_TARGET,
                           "status": "PASS" if floor <= FLOOR_TARGET else "MISS"})
    print_table(table, ["(median s)"] + libs + ["zarrc/fastest peer", "reps"],
                right=[False] + [True] * (len(libs) + 2))
    for label, r in case.rows.items():
        for lib, reason in r["unsupported"].items():
            print(f"  unsupported: {lib}, {label}: {reason}")
    return {"case": case.name, "description": case.spec["describe"], "shape": case.spec["shape"],
            "chunks": case.spec["chunks"], "codecs": case.spec["codecs"], "writer": case.writer,
            "libraries": libs, "rows": case.rows}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="32^3 arrays and 10^5 strings: a smoke test")
    p.add_argument("--libs", default=",".join(LIBRARIES), help=f"comma-separated: {','.join(LIBRARIES)}")
    p.add_argument("--cases", default=",".join(CASE_NAMES), help=f"comma-separated: {','.join(CASE_NAMES)}")
    p.add_argument("--repeat", type=int, default=5, help="repetitions, interleaved (at least 3)")
    p.add_argument("--json", default=str(REPO_ROOT / ".bench" / "dtypes.json"), help="results file")
    p.add_argument("--dir", default=str(REPO_ROOT / ".bench" / "data" / "dtypes"), help="scratch directory")
    args = p.parse_args(argv)
    args.libs = split_names(p, "libs", args.libs, LIBRARIES)
    args.cases = split_names(p, "cases", args.cases, CASE_NAMES)
    if args.repeat < 3:
        p.error("--repeat: at least 3")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    libs = available(args.libs)
    facts = announce(args.libs, libs, args.repeat)
    specs = case_specs(args.quick)
    cases, checks = [], []
    for name in args.cases:
        t0 = time.perf_counter()
        case = Case(name, specs[name], libs, Path(args.dir), args.repeat)
        try:
            case.run()
        finally:
            case.cleanup()
        cases.append(report(case, checks) | {"seconds": time.perf_counter() - t0})
        print(f"({time.perf_counter() - t0:.0f} s)")
    print(f"\ntargets (zarrc <= {RATIO_TARGET} x fastest peer; writes also <= {FLOOR_TARGET} x the encode floor):")
    for c in checks:
        print(f"{c['status']}  {c['case']:<13} {c['check']}: {c['value']:.2f} (target <= {c['target']:.2f})")
    conclude(args.json, args, facts, libs, cases, checks, t_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
