"""The benchmark suite: zarrc against its peers, on the same data in the same run.

Peers: zarr-python, zarr-python with the zarrs codec pipeline, and tensorstore.

    python bench/bench_suite.py [--quick] [--datasets u16,f32] [--layouts raw,sharded,...]
                                [--workloads full,random,...] [--libs ...] [--repeat N] [--json PATH]

Datasets: u16 (512^3 uint16) and f32 (8192^2 float32), smooth fields with noisy low
bits.  Layouts: raw (v3, bytes codec only), blosc-lz4, zstd-3, gzip-1 (v3, 64^3 or
512x256 chunks), sharded (v3 blosc-lz4, 256^3 shards of 32^3 or 4096x2048 of 128x128)
and v2-blosc-lz4.  Each array is written once by zarrc and read bit-exactly by every
library before timing; data is in the page cache (caches are not dropped).
Libraries run interleaved within each repetition; tables show medians.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    REPO_ROOT,
    announce,
    conclude,
    interleaved_times,
    pick_repeat,
    print_table,
    same,
    split_names,
    threaded_time,
)
from bench._suite_cases import (
    LAYOUTS,
    Dataset,
    Layout,
    datasets,
    one_inner_chunk_per_shard,
    random_boxes,
    random_points,
    tiles,
)
from bench._suite_libs import LIBRARIES, available, create, open_array, reader, writer
from bench._suite_zarrc import codec_floor, peak_memory

warnings.filterwarnings("ignore")

WORKLOADS = {  # id -> what it is (see README)
    "full": "full read",
    "halves": "full read by 2 threads, half each",
    "chunks": "chunk-by-chunk read (inner chunks when sharded)",
    "random": "400 random 16^3 (2-D: 64x64) reads",
    "element": "single-element read, median per call",
    "scaling": "random reads from 1 thread and from 2 threads",
    "write": "full write into a fresh directory",
    "partial": "sharded only: one inner chunk written into every shard",
    "floor": "zarrc: decode every chunk with zarrc's kernels, bytes in memory",
    "memory": "zarrc: peak RSS of a full read in a fresh process",
}
N_RANDOM, N_POINTS = 400, 200  # --quick: 100, 50
BUDGET_S, MIN_REPEAT = 20.0, 3  # fewer repetitions (not below 3) if one takes over BUDGET_S / repeat
# targets (printed as PASS/MISS)
READ_RATIO = WRITE_RATIO = 0.8   # zarrc / fastest peer
FLOOR_RATIO = 1.25               # zarrc full read / codec floor
MEMORY_MULTIPLE = 1.10           # peak RSS growth / output size
ELEMENT_US = 30.0                # single-element read, layouts without a compressor or with blosc
SCALING = 1.7                    # 2-thread / 1-thread random-read throughput


def chunk_files(path: str) -> set[str]:
    return {str(p.relative_to(path)) for p in Path(path).rglob("*")
            if p.is_file() and not p.name.startswith((".z", "zarr.json"))}


class Case:
    """One dataset in one layout: its arrays, workloads and results."""

    def __init__(self, ds: Dataset, layout: Layout, data: np.ndarray, libs: list[str], root: Path,
                 repeat: int, quick: bool = False) -> None:
        self.ds, self.layout, self.data, self.libs, self.repeat = ds, layout, data, libs, repeat
        self.n_random, self.n_points = (N_RANDOM // 4, N_POINTS // 4) if quick else (N_RANDOM, N_POINTS)
        self.src = str(root / f"{ds.name}-{layout.name}")
        self.out = root / "out"
        self.results: dict[str, dict] = {}
        self.extra: dict[str, object] = {}

    def prepare(self) -> None:
        """Write the array with zarrc; open it in every library; check every read."""
        writer("zarrc", create("zarrc", self.src, self.ds, self.layout))(..., self.data)
        self.reads = {lib: reader(lib, open_array(lib, self.src, self.layout)) for lib in self.libs}
        for lib, read in self.reads.items():
            if not same(read(...), self.data):
                raise SystemExit(f"{lib} did not read {self.src} bit-exactly")

    def record(self, label: str, times: dict, unit: str = "s") -> None:
        med = {lib: statistics.median(t) for lib, t in times.items()}
        peers = [v for lib, v in med.items() if lib != "zarrc"]
        ratio = med["zarrc"] / min(peers) if "zarrc" in med and peers else None
        self.results[label] = {"unit": unit, "median_s": med, "zarrc_over_fastest_peer": ratio,
                               "all_s": times}

    def times(self, fns: dict, self_timed: bool = False) -> dict[str, list[float]]:
        """Interleaved times of ``fns``: ``repeat`` repetitions, or as many as fit in
        BUDGET_S (judged by the first), but at least MIN_REPEAT."""
        first = interleaved_times(fns, 1, self_timed)
        per_rep = sum(t[0] for t in first.values())
        n = pick_repeat(per_rep, BUDGET_S, min(MIN_REPEAT, self.repeat), self.repeat)
        rest = interleaved_times(fns, n - 1, self_timed)
        return {k: first[k] + rest[k] for k in fns}

    def each(self, work) -> dict:
        """``work(read)`` bound to every library's reader."""
        return {lib: (lambda r=r: work(r)) for lib, r in self.reads.items()}

    def run(self, workloads: set[str]) -> None:
        ds, rep, shape = self.ds, self.repeat, self.ds.shape
        box = "x".join(map(str, ds.box))
        if "full" in workloads:
            self.record("full read", self.times(self.each(lambda r: r(...))))
        if "halves" in workloads:
            h = shape[0] // 2

            def halves(r):
                return threaded_time([lambda: r((slice(0, h),)), lambda: r((slice(h, None),))])
            self.record("full read, 2 threads", self.times(self.each(halves), self_timed=True))
        if "chunks" in workloads:
            sels = tiles(shape, self.layout.chunks(ds))
            self.record(f"chunk-by-chunk read ({len(sels)})",
                        self.times(self.each(lambda r: [r(s) for s in sels])))
        if "random" in workloads:
            boxes = random_boxes(shape, ds.box, self.n_random, seed=1)
            self.record(f"{self.n_random} random {box} reads",
                        self.times(self.each(lambda r: [r(b) for b in boxes])))
        if "element" in workloads:
            points = random_points(shape, self.n_points, seed=2)
            self.record("single-element read", self.times(
                self.each(lambda r: per_call(r, points)), self_timed=True), unit="us")
        if "scaling" in workloads:
            self.scaling(random_boxes(shape, ds.box, self.n_random, seed=3),
                         random_boxes(shape, ds.box, self.n_random, seed=4), box)
        if "write" in workloads:
            self.full_write()
        if "partial" in workloads and self.layout.sharded:
            self.partial_write()
        if "floor" in workloads and "zarrc" in self.libs:
            self.record("codec floor (zarrc kernels)",
                        {"zarrc": codec_floor(self.src, ds, self.layout, rep)})
            self.record("codec floor, fresh output",
                        {"zarrc": codec_floor(self.src, ds, self.layout, rep, fresh=True)})
        if "memory" in workloads and "zarrc" in self.libs:
            self.extra["peak_memory"] = peak_memory(self.src)

    def scaling(self, a: list, b: list, box: str) -> None:
        fns = {}
        for lib, r in self.reads.items():
            fns[lib, 1] = lambda r=r: threaded_time([lambda: [r(s) for s in a]])
            fns[lib, 2] = lambda r=r: threaded_time([lambda: [r(s) for s in a], lambda: [r(s) for s in b]])
        times = self.times(fns, self_timed=True)
        labels = [f"{n} thread{'s' * (n > 1)} x {self.n_random} random {box} reads" for n in (1, 2)]
        for n, label in zip((1, 2), labels):
            self.record(label, {lib: times[lib, n] for lib in self.libs})
        one, two = (self.results[label]["median_s"] for label in labels)
        self.extra["scaling"] = {lib: 2 * one[lib] / two[lib] for lib in self.libs}

    def full_write(self) -> None:
        ds, layout = self.ds, self.layout

        def timed_write(lib: str) -> float:
            dest = str(self.out / lib)
            shutil.rmtree(dest, ignore_errors=True)
            t0 = time.perf_counter()
            writer(lib, create(lib, dest, ds, layout))(..., self.data)
            return time.perf_counter() - t0

        self.record("full write", self.times(
            {lib: (lambda lib=lib: timed_write(lib)) for lib in self.libs}, self_timed=True))
        self.check_written(self.data, same_files=True)

    def partial_write(self) -> None:
        sels = one_inner_chunk_per_shard(self.ds)
        new = [self.data[s] + 1 for s in sels]

        def timed_write(lib: str) -> float:
            dest = str(self.out / lib)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(self.src, dest)
            write = writer(lib, open_array(lib, dest, self.layout, write=True))
            t0 = time.perf_counter()
            for s, v in zip(sels, new):
                write(s, v)
            return time.perf_counter() - t0

        self.record(f"partial write ({len(sels)} inner chunks)", self.times(
            {lib: (lambda lib=lib: timed_write(lib)) for lib in self.libs}, self_timed=True))
        expected = self.data.copy()
        for s, v in zip(sels, new):
            expected[s] = v
        self.check_written(expected)

    def check_written(self, expected: np.ndarray, same_files: bool = False) -> None:
        """What each library wrote last reads back (with zarrc) as ``expected``."""
        files = chunk_files(self.src)
        for lib in self.libs:
            dest = str(self.out / lib)
            if not same(open_array("zarrc", dest, self.layout)[...], expected):
                raise SystemExit(f"{lib} wrote {dest} wrongly")
            if same_files and chunk_files(dest) != files:
                raise SystemExit(f"{lib} wrote a different set of chunk files in {dest}")
            shutil.rmtree(dest)

    def cleanup(self) -> None:
        self.reads = {}
        shutil.rmtree(self.src, ignore_errors=True)
        shutil.rmtree(self.out, ignore_errors=True)


def per_call(read, points) -> float:
    """Median seconds of one ``read(point)`` call."""
    times = []
    for p in points:
        t0 = time.perf_counter()
        read(p)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def report(case: Case, checks: list) -> dict:
    """Print the case's table and extra lines; append its target checks."""
    ds, layout, libs = case.ds, case.layout, case.libs
    name = f"{ds.name}/{layout.name}"
    print(f"\n== {name}: {ds.dtype} {'x'.join(map(str, ds.shape))}, {layout.describe(ds)}")
    rows = []
    for label, r in case.results.items():
        scale, fmt = (1e6, "{:.1f}") if r["unit"] == "us" else (1, "{:.4f}")
        cells = [fmt.format(r["median_s"][lib] * scale) if lib in r["median_s"] else "-" for lib in libs]
        ratio = r["zarrc_over_fastest_peer"]
        n = len(next(iter(r["all_s"].values())))
        rows.append([f"{label} ({r['unit']})"] + cells + ["-" if ratio is None else f"{ratio:.2f}", n])
    print_table(rows, ["workload (median)"] + libs + ["zarrc/fastest peer", "reps"],
                right=[False] + [True] * (len(libs) + 2))

    def check(what: str, value: float, target: float, below: bool = True) -> None:
        ok = value <= target if below else value >= target
        checks.append({"case": name, "check": what, "value": value, "target": target,
                       "status": "PASS" if ok else "MISS"})

    res, extra = case.results, case.extra
    for label, r in res.items():
        ratio = r["zarrc_over_fastest_peer"]
        if ratio is None or "thread x" in label or "threads x" in label:
            continue
        write = "write" in label
        check(f"{label}: zarrc / fastest peer", ratio, WRITE_RATIO if write else READ_RATIO)
    floor = res.get("codec floor (zarrc kernels)")
    if floor and "full read" in res:
        over = res["full read"]["median_s"]["zarrc"] / floor["median_s"]["zarrc"]
        extra["full_read_over_floor"] = over
        fresh = res["full read"]["median_s"]["zarrc"] / res["codec floor, fresh output"]["median_s"]["zarrc"]
        extra["full_read_over_floor_fresh_output"] = fresh
        print(f"zarrc full read / codec floor: {over:.2f} (/ codec floor into a fresh output: {fresh:.2f})")
        check("zarrc full read / codec floor", over, FLOOR_RATIO)
    if "peak_memory" in extra:
        m = extra["peak_memory"]
        note = "" if m["hwm_reset"] else " (VmHWM not reset: may include earlier use)"
        grew, size = (m["hwm_after"] - m["rss_before"]) / 2**20, m["nbytes"] / 2**20
        print(f"zarrc full read peak memory: {m['multiple']:.3f} x output "
              f"({grew:.0f} MiB for {size:.0f} MiB){note}")
        check("zarrc full read peak RSS / output", m["multiple"], MEMORY_MULTIPLE)
    if "scaling" in extra:
        print("random-read throughput, 2 threads / 1 thread: "
              + ", ".join(f"{lib} {x:.2f}x" for lib, x in extra["scaling"].items()))
        if "zarrc" in extra["scaling"]:
            check("zarrc 2-thread random-read scaling", extra["scaling"]["zarrc"], SCALING, below=False)
    elem = res.get("single-element read")
    if elem and "zarrc" in elem["median_s"] and layout.compressor in (None, "blosc"):
        check("zarrc single-element read (us)", elem["median_s"]["zarrc"] * 1e6, ELEMENT_US)
    return {"dataset": ds.name, "layout": layout.name, "dtype": ds.dtype, "shape": ds.shape,
            "description": layout.describe(ds), "libraries": libs, "results": res, **extra}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="128^3 and 2048^2 arrays, 2 repetitions, 100 random reads: a smoke test")
    p.add_argument("--datasets", default="u16,f32", help="comma-separated: u16,f32")
    p.add_argument("--layouts", default=",".join(LAYOUTS), help=f"comma-separated: {','.join(LAYOUTS)}")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help=f"comma-separated: {','.join(WORKLOADS)}")
    p.add_argument("--libs", default=",".join(LIBRARIES), help=f"comma-separated: {','.join(LIBRARIES)}")
    p.add_argument("--repeat", type=int, default=None,
                   help=f"repetitions (default 5, --quick 2); a workload gets fewer (at least "
                        f"{MIN_REPEAT}) if they would take over {BUDGET_S:.0f} s in all")
    p.add_argument("--json", default=str(REPO_ROOT / ".bench" / "suite.json"), help="results file")
    p.add_argument("--dir", default=str(REPO_ROOT / ".bench" / "data" / "suite"), help="scratch directory")
    args = p.parse_args(argv)
    for opt, valid in (("datasets", ("u16", "f32")), ("layouts", LAYOUTS), ("workloads", WORKLOADS),
                       ("libs", LIBRARIES)):
        setattr(args, opt, split_names(p, opt, getattr(args, opt), valid))
    args.repeat = args.repeat or (2 if args.quick else 5)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    libs = available(args.libs)
    facts = announce(args.libs, libs, args.repeat)
    root = Path(args.dir)
    cases, checks = [], []
    for ds in (datasets(args.quick)[n] for n in args.datasets):
        data = ds.make()
        for layout in (LAYOUTS[n] for n in args.layouts):
            t0 = time.perf_counter()
            case = Case(ds, layout, data, libs, root, args.repeat, args.quick)
            try:
                case.prepare()
                case.run(set(args.workloads))
            finally:
                case.cleanup()
            cases.append(report(case, checks) | {"seconds": time.perf_counter() - t0})
            print(f"({time.perf_counter() - t0:.0f} s)")
        del data
    print("\ntargets:")
    for c in checks:
        print(f"{c['status']}  {c['case']:<18} {c['check']}: {c['value']:.2f} (target "
              f"{'<=' if 'scaling' not in c['check'] else '>='} {c['target']})")
    conclude(args.json, args, facts, libs, cases, checks, t_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
