"""Codec throughput: zarrc vs numcodecs, measured in the same run.

    python bench/bench_codecs.py [--quick] [--json PATH] [--only CODEC ...]

For blosc-lz4 (clevel 5, byte shuffle), zstd level 3, gzip level 1 and crc32c,
on uint16 and float32 simulation-like data cut into 1 MiB buffers, it reports
decode throughput into preallocated buffers, decode throughput returning new
bytes, encode throughput, and decode throughput from 1 and 2 Python threads;
for blosc also one 64 MiB buffer.  Throughput is GB/s of decoded bytes, the
median of interleaved repetitions (zarrc, numcodecs, zarrc, numcodecs, ...).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

warnings.filterwarnings("ignore", message="crc32c usage is deprecated", category=DeprecationWarning)

import numcodecs
import numcodecs.blosc

import zarrc
import zarrc.codecs
from bench._common import (
    REPO_ROOT,
    MiB,
    interleaved_times,
    machine_facts,
    pick_repeat,
    print_table,
    smooth_field,
    threaded_time,
    write_json,
)
from zarrc._kernels import library_versions

LIBS = ("zarrc", "numcodecs")
DTYPES = ("uint16", "float32")
SCALING_TARGET = 1.8
SMALL = 1 << 20  # bytes per buffer in the cache-resident scaling measure (fits L2/L3)

# name -> (zarrc codec, numcodecs codec), each built for a dtype's item size
CODECS = {
    "blosc-lz4": lambda itemsize: (
        zarrc.codecs.Blosc(cname="lz4", clevel=5, shuffle="shuffle", typesize=itemsize),
        numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)),
    "zstd-3": lambda itemsize: (zarrc.codecs.Zstd(level=3), numcodecs.Zstd(level=3)),
    "gzip-1": lambda itemsize: (zarrc.codecs.Gzip(level=1), numcodecs.GZip(level=1)),
    "crc32c": lambda itemsize: (zarrc.codecs.Crc32c(), numcodecs.CRC32C()),
}


class Runner:
    def __init__(self, quick: bool) -> None:
        self.total = (8 if quick else 64) * MiB  # bytes of data per dtype
        self.budget = 0.2 if quick else 1.0  # seconds per library per measure
        self.lo, self.hi = (3, 5) if quick else (5, 25)
        self.rows: list[dict] = []

    def measure(self, codec: str, dtype: str, measure: str, nbytes: int, fns: dict) -> dict:
        """Time ``fns`` (library name -> callable), interleaved; record GB/s."""
        warm = max(_once(fn) for fn in fns.values())
        repeat = pick_repeat(warm, self.budget, self.lo, self.hi)
        times = interleaved_times(fns, repeat)
        gbps = {name: nbytes / 1e9 / float(np.median(t)) for name, t in times.items()}
        return self.add(codec, dtype, measure, "GB/s", gbps, repeat, times)

    def add(self, codec, dtype, measure, unit, values, repeat=None, times=None) -> dict:
        z, n = values.get("zarrc"), values.get("numcodecs")
        row = {"codec": codec, "dtype": dtype, "measure": measure, "unit": unit,
               "zarrc": z, "numcodecs": n, "ratio": z / n if z and n else None,
               "expectation": "", "status": "", "repeat": repeat, "times": times}
        if measure.startswith("decode") and unit == "GB/s":
            row["expectation"] = "zarrc >= numcodecs"
            row["status"] = "PASS" if z >= n else "MISS"
        elif unit == "2T/1T":
            row["expectation"] = f"zarrc >= {SCALING_TARGET}x"
            row["status"] = "PASS" if z >= SCALING_TARGET else "MISS"
        self.rows.append(row)
        _print_row(row)
        return row

    def run_codec(self, name: str, dtype: str, data: np.ndarray) -> None:
        codecs = dict(zip(LIBS, CODECS[name](data.itemsize)))
        nchunks = data.nbytes // MiB
        chunks = np.split(data.reshape(-1), nchunks)
        raw = [c.view(np.uint8) for c in chunks]
        enc = {lib: [c.encode(x) for x in chunks] for lib, c in codecs.items()}
        outs = {lib: [np.empty(MiB, np.uint8) for _ in chunks] for lib in LIBS}
        for lib, c in codecs.items():
            _verify(f"{lib} {name} {dtype}", c, enc[lib], outs[lib], raw)

        compressed = {lib: sum(len(memoryview(e).cast("B")) for e in enc[lib]) for lib in LIBS}
        self.add(name, dtype, "compression ratio", "x",
                 {lib: data.nbytes / compressed[lib] for lib in LIBS})

        def decode_out(lib, items=None):
            c, pairs = codecs[lib], list(zip(enc[lib], outs[lib]))
            pairs = pairs if items is None else pairs[items]

            def run():
                for e, o in pairs:
                    c.decode(e, out=o)
            return run

        def decode_new(lib):
            c, es = codecs[lib], enc[lib]
            return lambda: [c.decode(e) for e in es]

        def encode(lib):
            c = codecs[lib]
            return lambda: [c.encode(x) for x in chunks]

        tag = f"{nchunks}x1MiB"
        nbytes = data.nbytes
        self.measure(name, dtype, f"decode->out {tag}", nbytes, {lib: decode_out(lib) for lib in LIBS})
        self.measure(name, dtype, f"decode->new {tag}", nbytes, {lib: decode_new(lib) for lib in LIBS})
        self.measure(name, dtype, f"encode {tag}", nbytes, {lib: encode(lib) for lib in LIBS})

        # Python threads, each decoding a disjoint half; the 1-thread case runs in a
        # worker thread too, so each codec call sees the same (non-main) thread policy.
        half = slice(0, nchunks // 2), slice(nchunks // 2, nchunks)
        fns = {}
        for lib in LIBS:
            fns[f"{lib} 1T"] = lambda lib=lib: threaded_time([decode_out(lib)])
            fns[f"{lib} 2T"] = lambda lib=lib: threaded_time([decode_out(lib, h) for h in half])
        for lib in LIBS:
            for o in outs[lib]:
                o.fill(0)
        fns["zarrc 2T"]()
        fns["numcodecs 2T"]()
        for lib in LIBS:
            _check(f"{lib} {name} {dtype} 2 threads", outs[lib], raw)
        # threaded_time returns the time from the barrier to the last finish, which is
        # what is recorded (not the thread start-up around it)
        warm = max(fn() for fn in fns.values())
        repeat = pick_repeat(warm, self.budget, self.lo, self.hi)
        times = interleaved_times(fns, repeat, self_timed=True)
        gbps = {}
        for nt in ("1T", "2T"):
            med = {lib: float(np.median(times[f"{lib} {nt}"])) for lib in LIBS}
            gbps[nt] = {lib: nbytes / 1e9 / med[lib] for lib in LIBS}
            self.add(name, dtype, f"decode->out {tag} {nt[0]} thread{'s' if nt == '2T' else ''}",
                     "GB/s", gbps[nt], repeat, {lib: times[f"{lib} {nt}"] for lib in LIBS})
        self.add(name, dtype, "scaling 2 threads / 1 thread", "2T/1T",
                 {lib: gbps["2T"][lib] / gbps["1T"][lib] for lib in LIBS})

    def run_cache_resident(self, name: str, dtype: str, data: np.ndarray) -> None:
        """Thread scaling without the memory-bandwidth ceiling: each thread decodes its
        own 1 MiB buffer over and over (input and output stay in the caches),
        so what is left is whether the threads really run at once (GIL released)."""
        codecs = dict(zip(LIBS, CODECS[name](data.itemsize)))
        items = SMALL // data.itemsize
        small = [data.reshape(-1)[i * items:(i + 1) * items] for i in range(2)]
        enc = {lib: [codecs[lib].encode(x) for x in small] for lib in LIBS}
        outs = {lib: [np.empty(SMALL, np.uint8) for _ in small] for lib in LIBS}
        for lib, c in codecs.items():
            _verify(f"{lib} {name} {dtype} cache-resident", c, enc[lib], outs[lib],
                    [x.view(np.uint8) for x in small])
        # enough repetitions for ~50 ms of work per thread, so thread start-up is noise
        per_call = max(_once(lambda c=codecs[lib], e=enc[lib][0], o=outs[lib][0]: c.decode(e, out=o))
                       for lib in LIBS for _ in range(3))
        reps = max(16, int(0.05 / max(per_call, 1e-7)))

        def loop(lib, i):
            c, e, o = codecs[lib], enc[lib][i], outs[lib][i]

            def run():
                for _ in range(reps):
                    c.decode(e, out=o)
            return run

        fns = {}
        for lib in LIBS:
            fns[f"{lib} 1T"] = lambda lib=lib: threaded_time([loop(lib, 0)])
            fns[f"{lib} 2T"] = lambda lib=lib: threaded_time([loop(lib, 0), loop(lib, 1)])
        warm = max(fn() for fn in fns.values())
        repeat = pick_repeat(warm, self.budget, self.lo, self.hi)
        times = interleaved_times(fns, repeat, self_timed=True)
        gbps = {}
        for nt, work in (("1T", reps * SMALL), ("2T", 2 * reps * SMALL)):
            gbps[nt] = {lib: work / 1e9 / float(np.median(times[f"{lib} {nt}"])) for lib in LIBS}
        self.add(name, dtype, "scaling 2 threads / 1 thread, 1 MiB cache-resident", "2T/1T",
                 {lib: gbps["2T"][lib] / gbps["1T"][lib] for lib in LIBS}, repeat,
                 {lib: times[f"{lib} 2T"] for lib in LIBS})

    def run_single_buffer(self, name: str, dtype: str, data: np.ndarray) -> None:
        """One buffer of all the data, decoded and encoded from the main thread."""
        codecs = dict(zip(LIBS, CODECS[name](data.itemsize)))
        raw = [data.reshape(-1).view(np.uint8)]
        enc = {lib: [c.encode(data)] for lib, c in codecs.items()}
        outs = {lib: [np.empty(data.nbytes, np.uint8)] for lib in LIBS}
        for lib, c in codecs.items():
            _verify(f"{lib} {name} {dtype} single buffer", c, enc[lib], outs[lib], raw)
        tag = f"1x{data.nbytes // MiB}MiB"
        self.measure(name, dtype, f"decode->out {tag}", data.nbytes,
                     {lib: (lambda c=codecs[lib], e=enc[lib][0], o=outs[lib][0]: c.decode(e, out=o))
                      for lib in LIBS})
        self.measure(name, dtype, f"decode->new {tag}", data.nbytes,
                     {lib: (lambda c=codecs[lib], e=enc[lib][0]: c.decode(e)) for lib in LIBS})
        self.measure(name, dtype, f"encode {tag}", data.nbytes,
                     {lib: (lambda c=codecs[lib]: c.encode(data)) for lib in LIBS})


def _once(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _verify(what: str, codec, encoded: list, outs: list, raw: list) -> None:
    """Both decode forms must give back the original bytes."""
    for o in outs:
        o.fill(0)
    for e, o in zip(encoded, outs):
        codec.decode(e, out=o)
    _check(f"{what} decode(out=)", outs, raw)
    _check(f"{what} decode()", [codec.decode(e) for e in encoded], raw)


def _check(what: str, got: list, raw: list) -> None:
    for i, (g, r) in enumerate(zip(got, raw)):
        g = np.frombuffer(memoryview(g).cast("B"), np.uint8)
        if not np.array_equal(g, r):
            raise SystemExit(f"WRONG OUTPUT: {what}, buffer {i}")


HEADER = ("codec", "dtype", "measure", "unit", "zarrc", "numcodecs", "z/n", "expectation", "")


def _table_row(r: dict) -> list:
    return [r["codec"], r["dtype"], r["measure"], r["unit"], r["zarrc"], r["numcodecs"],
            r["ratio"], r["expectation"], r["status"]]


def _print_row(r: dict) -> None:
    print("  ".join(str(v if not isinstance(v, float) else f"{v:.2f}") for v in _table_row(r)),
          file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="8 MiB per dtype, fewer repeats (smoke test)")
    p.add_argument("--json", default=str(REPO_ROOT / ".bench" / "codecs.json"), metavar="PATH",
                   help="where to write the results (default: .bench/codecs.json)")
    p.add_argument("--only", action="append", choices=sorted(CODECS), metavar="CODEC",
                   help=f"run only this codec (repeatable): {', '.join(CODECS)}")
    args = p.parse_args(argv)

    facts = machine_facts()
    facts["zarrc"] = getattr(zarrc, "__version__", "dev")
    facts["zarrc_libraries"] = library_versions()
    facts["zarrc_config"] = {"threads": zarrc.config.threads, "split_bytes": zarrc.config.split_bytes}
    facts["numcodecs"] = numcodecs.__version__
    facts["numcodecs_blosc"] = numcodecs.blosc.VERSION_STRING
    facts["numcodecs_blosc_threads"] = numcodecs.blosc.get_nthreads()
    print("machine:", ", ".join(f"{k}={v}" for k, v in facts.items()))
    if facts["load_avg_1m"] and facts["load_avg_1m"] > 0.5:
        print(f"WARNING: load average {facts['load_avg_1m']}: other work is running, "
              "results will be noisy")
    print("progress rows go to stderr; the table follows at the end\n", flush=True)

    runner = Runner(args.quick)
    t0 = time.perf_counter()
    names = args.only or list(CODECS)
    for dtype in DTYPES:
        itemsize = np.dtype(dtype).itemsize
        data = smooth_field((runner.total // itemsize // (512 * 512), 512, 512), dtype, seed=42)
        for name in names:
            runner.run_codec(name, dtype, data)
            runner.run_cache_resident(name, dtype, data)
        if "blosc-lz4" in names:
            runner.run_single_buffer("blosc-lz4", dtype, data)
        del data
    elapsed = time.perf_counter() - t0

    rows = sorted(runner.rows, key=lambda r: (names.index(r["codec"]), DTYPES.index(r["dtype"])))
    print()
    print_table([_table_row(r) for r in rows], HEADER)
    misses = [r for r in rows if r["status"] == "MISS"]
    print(f"\n{len(rows)} rows, {sum(r['status'] == 'PASS' for r in rows)} PASS, "
          f"{len(misses)} MISS; {elapsed:.0f} s")
    facts["load_avg_1m_end"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    print(f"load average: {facts['load_avg_1m']} at start, {facts['load_avg_1m_end']} at end")
    path = write_json(args.json, {"benchmark": "codecs", "quick": args.quick, "machine": facts,
                                  "seconds": elapsed, "rows": rows})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
