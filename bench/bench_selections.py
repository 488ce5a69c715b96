"""Selections benchmark (issue 22): points, orthogonal and mask selections, zarrc
against its peers on the same data in the same run.

    python bench/bench_selections.py [--quick] [--libs ...] [--repeat N] [--no-memory]
                                     [--json PATH] [--dir DIR]

f32: a 4096 x 4096 float32 array (--quick: 2048 x 2048), read at 100,000 distinct
random points (vindex; --quick 20,000), read at 1,000 random rows x 1,000 random
columns (oindex; --quick 500 x 500), written at 100,000 distinct random points
(vindex set).  u16: a 256^3 uint16 array (--quick: 128^3) read through a random
boolean mask selecting 1 %.  Both as v3 blosc-lz4 chunks (256 x 256, 64^3) and
sharded (512 x 512 shards of 64 x 64, 128^3 shards of 32^3).  Each array is written
once by zarrc; every library's result is checked bit-exactly against NumPy on the
source before timing.  A selection a library does not support shows "unsupported".
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
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
    proc_status,
    reset_peak_rss,
    same,
    split_names,
)
from bench._suite_cases import LAYOUTS, Dataset, Layout
from bench._suite_libs import create, writer

warnings.filterwarnings("ignore")

# zarr-fused: zarr-python with its opt-in FusedCodecPipeline (zarr-python 3.4+)
FUSED_PIPELINE = "zarr.core.codec_pipeline.FusedCodecPipeline"
LIBRARIES = ("zarrc", "zarr-python", "zarr-fused", "zarrs", "tensorstore")
LAYOUT_NAMES = ("blosc-lz4", "sharded")
RATIO_TARGET = 0.5      # zarrc / fastest peer
MEMORY_SLACK = 0.10     # peak growth <= output x (1 + slack) + one decoded chunk per thread


def datasets(quick: bool) -> dict[str, Dataset]:
    n2, n3 = (2048, 128) if quick else (4096, 256)
    # quick: 64^3 shards, so that the 128^3 array still has 2 shards along each axis
    return {"f32": Dataset("f32", (n2, n2), "float32", (256, 256), (512, 512), (64, 64), (64, 64)),
            "u16": Dataset("u16", (n3,) * 3, "uint16", (64,) * 3, (min(128, n3 // 2),) * 3, (32,) * 3,
                           (16,) * 3)}


def selections(ds: Dataset, quick: bool) -> dict[str, tuple[str, dict]]:
    """label -> (kind, arrays): the selections run on ``ds`` (same seeds for every layout)."""
    rng = np.random.default_rng(22)
    size = math.prod(ds.shape)
    if ds.name == "u16":
        mask = rng.random(ds.shape) < 0.01
        return {f"mask read, 1 % ({int(mask.sum()):,} values)": ("mask", {"mask": mask})}
    n_points, n_lines = (20_000, 500) if quick else (100_000, 1_000)

    def points(n: int) -> dict:
        flat = rng.choice(size, n, replace=False)  # distinct, in random order
        return dict(zip(("rows", "cols"), np.unravel_index(flat, ds.shape)))

    read_pts, lines = points(n_points), {
        "rows": rng.choice(ds.shape[0], n_lines, replace=False),
        "cols": rng.choice(ds.shape[1], n_lines, replace=False)}
    write_pts = points(n_points)
    write_pts["values"] = rng.standard_normal(n_points).astype(ds.dtype)
    return {f"points read ({n_points:,}, vindex)": ("points", read_pts),
            f"rows x cols read ({n_lines:,} x {n_lines:,}, oindex)": ("oindex", lines),
            f"points write ({n_points:,}, vindex)": ("write", write_pts)}


def expected(kind: str, sel: dict, data: np.ndarray) -> np.ndarray:
    """NumPy's answer: the values read, or the whole array after the write."""
    if kind == "points":
        return data[sel["rows"], sel["cols"]]
    if kind == "oindex":
        return data[np.ix_(sel["rows"], sel["cols"])]
    if kind == "mask":
        return data[sel["mask"]]
    out = data.copy()
    out[sel["rows"], sel["cols"]] = sel["values"]
    return out


def run_selection(lib: str, handle, kind: str, sel: dict):
    """The selection in ``lib``'s terms: vindex / oindex / a[mask] (tensorstore: the
    same, read or written synchronously).  Returns the values read (None for a write)."""
    if kind == "points":
        got = handle.vindex[sel["rows"], sel["cols"]]
    elif kind == "oindex":
        got = handle.oindex[sel["rows"], sel["cols"]]
    elif kind == "mask":
        got = handle[sel["mask"]]
    elif lib == "tensorstore":
        handle.vindex[sel["rows"], sel["cols"]].write(sel["values"]).result()
        return None
    else:
        handle.vindex[sel["rows"], sel["cols"]] = sel["values"]
        return None
    return got.read().result() if lib == "tensorstore" else got


# zarrs' pipeline raises these (with codec_pipeline.strict, as the suite opens it) for a
# selection it cannot express as slices of each chunk; not strict, it would quietly hand
# the whole read to zarr-python's own pipeline and the row would time zarr-python
ZARRS_UNSUPPORTED = ("DiscontiguousArrayError", "UnsupportedVIndexingError")


def unsupported(exc: BaseException) -> str | None:
    """Why ``exc`` means "this library does not do this selection" (None: a real error)."""
    name = type(exc).__name__
    if type(exc).__module__.startswith("zarrs") and name in ZARRS_UNSUPPORTED:
        return f"{name} (zarrs' pipeline, strict: no fallback to zarr-python's)"
    if isinstance(exc, (AttributeError, NotImplementedError)) or "not supported" in str(exc):
        return f"{name}: {str(exc).splitlines()[0][:100] if str(exc) else ''}"
    return None


# -- libraries: the suite's adapters, plus zarr-python with FusedCodecPipeline -----------

def has_fused() -> bool:
    try:
        from zarr.core import codec_pipeline
    except ImportError:
        return False
    return hasattr(codec_pipeline, "FusedCodecPipeline")


def available(names) -> list[str]:
    suite = _suite_libs.available([n for n in names if n != "zarr-fused"])
    return [n for n in names if n in suite or (n == "zarr-fused" and has_fused())]


def open_array(lib: str, path: str, layout: Layout, write: bool = False):
    if lib != "zarr-fused":
        return _suite_libs.open_array(lib, path, layout, write)
    import zarr

    with zarr.config.set({"codec_pipeline.path": FUSED_PIPELINE}):
        a = zarr.open_array(path, mode="r+" if write else "r")
    pipeline = type(getattr(a.async_array, "codec_pipeline", None)).__name__
    if pipeline != "FusedCodecPipeline":  # the config did not take: fail, do not mislabel
        raise SystemExit(f"zarr-fused: opened with {pipeline}, not FusedCodecPipeline")
    return a


# -- peak memory of zarrc, in a fresh process -------------------------------------------

def memory_child(argv: list[str]) -> None:
    """In a fresh process: open ``path`` with zarrc, load the selection, warm up (a
    read of one chunk per core; the same kind of selection of one element), reset VmHWM,
    run the selection, reset it again and run the selection once more; print the
    two VmHWM growths (bytes) as JSON."""
    path, kind, npz = argv
    import zarrc

    sel = dict(np.load(npz))
    a = zarrc.open_array(path, mode="r+" if kind == "write" else "r")
    # warm: first-call imports, and the thread pool with each thread's scratch (a read
    # of one chunk per core starts them; a one-element read does not) ...
    cores = os.cpu_count() or 1
    a[(slice(0, min(a.shape[0], a.chunks[0] * cores)),) + tuple(slice(0, c) for c in a.chunks[1:])]
    if kind != "mask":  # ... and the selection's own code path, on one element
        run_selection("zarrc", a, kind, {k: v[:1] for k, v in sel.items()})
    reset = reset_peak_rss()
    before = proc_status("VmRSS")
    run_selection("zarrc", a, kind, sel)
    first = proc_status("VmHWM") - before
    # the same call again: what each further call costs once the worker threads'
    # scratch (a compressed and a decoded chunk each, kept for the thread's life)
    # and the allocator's arenas have grown to this selection's chunks
    reset_peak_rss()
    before = proc_status("VmRSS")
    run_selection("zarrc", a, kind, sel)
    print(json.dumps({"first": first, "again": proc_status("VmHWM") - before, "hwm_reset": reset}))


def peak_memory(path: str, kind: str, sel: dict, scratch: Path) -> dict:
    """VmHWM growth of zarrc's selection in a fresh process (see memory_child)."""
    scratch.mkdir(parents=True, exist_ok=True)
    npz = scratch / "selection.npz"
    np.savez(npz, **sel)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # holds `bench`, as imported here
    code = (f"import sys; sys.path.insert(0, {root!r}); "
            "from bench.bench_selections import memory_child; memory_child(sys.argv[1:])")
    out = subprocess.run([sys.executable, "-c", code, path, kind, str(npz)], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    npz.unlink()
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- one dataset in one layout --------------------------------------------------------

class Case:
    def __init__(self, ds: Dataset, layout: Layout, data: np.ndarray, libs: list[str], root: Path,
                 args) -> None:
        self.ds, self.layout, self.data, self.libs, self.args = ds, layout, data, libs, args
        self.src = str(root / f"{ds.name}-{layout.name}")
        self.out = root / "out"
        self.rows: dict[str, dict] = {}

    def prepare(self) -> None:
        writer("zarrc", create("zarrc", self.src, self.ds, self.layout))(..., self.data)
        self.handles = {lib: open_array(lib, self.src, self.layout) for lib in self.libs}

    def run(self, label: str, kind: str, sel: dict) -> None:
        row: dict = {"kind": kind, "unsupported": {}, "all_s": {}}
        want = expected(kind, sel, self.data)
        fns = {}
        for lib in self.libs:
            try:
                ok = self.check(lib, kind, sel, want)
            except Exception as exc:
                why = unsupported(exc)
                if why is None:
                    raise
                row["unsupported"][lib] = why
                continue
            if not ok:
                raise SystemExit(f"{lib}: {label} on {self.src} differs from NumPy")
            fns[lib] = self.timed_write(lib, sel) if kind == "write" else (
                lambda lib=lib: run_selection(lib, self.handles[lib], kind, sel))
        if fns:
            row["all_s"] = interleaved_times(fns, self.args.repeat, self_timed=kind == "write")
        row["median_s"] = {lib: statistics.median(t) for lib, t in row["all_s"].items()}
        peers = [v for lib, v in row["median_s"].items() if lib != "zarrc"]
        row["zarrc_over_fastest_peer"] = (row["median_s"]["zarrc"] / min(peers)
                                          if "zarrc" in row["median_s"] and peers else None)
        if "zarrc" in row["median_s"] and self.args.memory:
            row["memory"] = self.memory(kind, sel, want)
        self.rows[label] = row

    def check(self, lib: str, kind: str, sel: dict, want: np.ndarray) -> bool:
        """One untimed run of the selection, compared with NumPy (a write: into a copy,
        read back whole by zarrc)."""
        if kind != "write":
            return same(run_selection(lib, self.handles[lib], kind, sel), want)
        dest = self.fresh_copy(lib)
        run_selection(lib, open_array(lib, dest, self.layout, write=True), kind, sel)
        return same(_suite_libs.open_array("zarrc", dest, self.layout)[...], want)

    def fresh_copy(self, lib: str) -> str:
        dest = str(self.out / lib)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.src, dest)
        return dest

    def timed_write(self, lib: str, sel: dict):
        """``() -> seconds`` of the write into a fresh copy, opened beforehand (not timed)."""
        def once() -> float:
            handle = open_array(lib, self.fresh_copy(lib), self.layout, write=True)
            t0 = time.perf_counter()
            run_selection(lib, handle, "write", sel)
            return time.perf_counter() - t0
        return once

    def memory(self, kind: str, sel: dict, want: np.ndarray) -> dict:
        path = self.fresh_copy("memory") if kind == "write" else self.src
        m = peak_memory(path, kind, sel, self.out)
        out_nbytes = sel["values"].nbytes if kind == "write" else want.nbytes
        chunk = math.prod(self.layout.chunks(self.ds)) * np.dtype(self.ds.dtype).itemsize
        m.update(grew=m["again"], output=out_nbytes,
                 allowed=out_nbytes * (1 + MEMORY_SLACK) + chunk * (os.cpu_count() or 1))
        return m

    def cleanup(self) -> None:
        self.handles = {}
        shutil.rmtree(self.src, ignore_errors=True)
        shutil.rmtree(self.out, ignore_errors=True)


def report(case: Case, checks: list) -> dict:
    ds, layout, libs = case.ds, case.layout, case.libs
    name = f"{ds.name}/{layout.name}"
    print(f"\n== {name}: {ds.dtype} {'x'.join(map(str, ds.shape))}, {layout.describe(ds)}")
    table = []
    for label, r in case.rows.items():
        cells = [f"{r['median_s'][lib]:.4f}" if lib in r["median_s"] else "unsupported" for lib in libs]
        ratio = r["zarrc_over_fastest_peer"]
        mem = r.get("memory")
        mem_cell = (f"{mem['first'] / 2**20:.1f}, {mem['grew'] / 2**20:.1f} / {mem['output'] / 2**20:.1f}"
                    if mem else "-")
        reps = len(next(iter(r["all_s"].values()))) if r["all_s"] else 0
        table.append([label] + cells + ["-" if ratio is None else f"{ratio:.2f}", mem_cell, reps])
        if ratio is not None:
            checks.append({"case": name, "check": f"{label}: zarrc / fastest peer", "value": ratio,
                           "target": RATIO_TARGET, "status": "PASS" if ratio <= RATIO_TARGET else "MISS"})
        if mem:
            checks.append({"case": name, "check": f"{label}: zarrc peak growth MiB (a repeated call)",
                           "value": mem["grew"] / 2**20, "target": mem["allowed"] / 2**20,
                           "status": "PASS" if mem["grew"] <= mem["allowed"] else "MISS"})
    header = ["selection (median s)"] + libs + ["zarrc/fastest peer", "zarrc peak 1st, again / output MiB",
                                                   "reps"]
    print_table(table, header, right=[False] + [True] * (len(libs) + 3))
    for label, r in case.rows.items():
        for lib, why in r["unsupported"].items():
            print(f"  unsupported: {lib}, {label}: {why}")
    return {"dataset": ds.name, "layout": layout.name, "dtype": ds.dtype, "shape": ds.shape,
            "description": layout.describe(ds), "libraries": libs, "rows": case.rows}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="2048^2 with 20,000 points and 500 x 500 lines, 128^3 mask: a smoke test")
    p.add_argument("--libs", default=",".join(LIBRARIES), help=f"comma-separated: {','.join(LIBRARIES)}")
    p.add_argument("--repeat", type=int, default=5, help="repetitions, interleaved (at least 3)")
    p.add_argument("--no-memory", dest="memory", action="store_false",
                   help="skip zarrc's peak memory (one fresh process per row)")
    p.add_argument("--json", default=str(REPO_ROOT / ".bench" / "selections.json"), help="results file")
    p.add_argument("--dir", default=str(REPO_ROOT / ".bench" / "data" / "selections"),
                   help="scratch directory")
    args = p.parse_args(argv)
    args.libs = split_names(p, "libs", args.libs, LIBRARIES)
    if args.repeat < 3:
        p.error("--repeat: at least 3")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    libs = available(args.libs)
    facts = announce(args.libs, libs, args.repeat)
    root = Path(args.dir)
    cases, checks = [], []
    for ds in datasets(args.quick).values():
        data = ds.make()
        sels = selections(ds, args.quick)
        for layout in (LAYOUTS[n] for n in LAYOUT_NAMES):
            t0 = time.perf_counter()
            case = Case(ds, layout, data, libs, root, args)
            try:
                case.prepare()
                for label, (kind, sel) in sels.items():
                    case.run(label, kind, sel)
            finally:
                case.cleanup()
            cases.append(report(case, checks) | {"seconds": time.perf_counter() - t0})
            print(f"({time.perf_counter() - t0:.0f} s)")
    if not args.memory:
        print("\n(zarrc peak memory skipped: --no-memory)")
    print(f"\ntargets (zarrc <= {RATIO_TARGET} x fastest peer; peak growth <= output x "
          f"{1 + MEMORY_SLACK:.2f} + one chunk per core):")
    for c in checks:
        print(f"{c['status']}  {c['case']:<13} {c['check']}: {c['value']:.2f} (target <= {c['target']:.2f})")
    conclude(args.json, args, facts, libs, cases, checks, t_start)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
