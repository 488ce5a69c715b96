"""Helpers shared by the benchmarks: test data, timing, machine facts, output.

Nothing here imports zarrc, so a benchmark can time any library with it.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20


def smooth_field(shape: Sequence[int], dtype, seed: int = 0) -> np.ndarray:
    """A field that compresses like simulation output: a sum of low-frequency
    sines/cosines over a 3-D grid (smooth, highly compressible) plus seeded
    Gaussian noise in the low bits (incompressible).

    Integer dtypes look like a quantized 12-bit quantity (about 1000..5000, or
    0..100 for 8-bit types) with noise of a few units, so the lowest ~2 bits are
    noise; float dtypes look like a temperature field (about 260..300) with
    noise of ~1e-3, so the low mantissa bits are noise.
    """
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    grid = np.ogrid[tuple(slice(0, 1, n * 1j) for n in shape)]
    grid = [g.astype(np.float32) for g in grid]
    field = np.zeros(shape, dtype=np.float32)
    for _ in range(4):
        amp = rng.uniform(0.2, 1.0)
        term = np.float32(amp)
        for axis, g in enumerate(grid):
            freq, phase = rng.uniform(0.25, 1.5), rng.uniform(0, 2 * np.pi)
            wave = np.sin if axis % 2 == 0 else np.cos
            term = term * wave(np.float32(2 * np.pi * freq) * g + np.float32(phase))
        field += term
    lo, hi = float(field.min()), float(field.max())
    field -= lo
    field *= np.float32(1.0 / (hi - lo))  # now in [0, 1]
    dtype = np.dtype(dtype)
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        base, span, noise = (1000, 4000, 2.0) if info.bits > 8 else (0, 100, 1.0)
        field *= np.float32(span)
        field += np.float32(base)
        field += rng.standard_normal(shape, dtype=np.float32) * np.float32(noise)
        np.clip(field, info.min, info.max, out=field)
        return field.astype(dtype)
    field *= np.float32(40.0)
    field += np.float32(260.0)
    field += rng.standard_normal(shape, dtype=np.float32) * np.float32(1e-3)
    return field.astype(dtype)


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` calls of ``fn``, in seconds."""
    return statistics.median(_timed(fn) for _ in range(repeat))


def interleaved_times(fns: dict[str, Callable[[], object]], repeat: int,
                      self_timed: bool = False) -> dict[str, list[float]]:
    """Wall times of each function, run in turn within each repetition (a, b, a, b, ...)
    so that drift in the machine's speed affects all of them alike.  With
    ``self_timed`` each function returns its own time in seconds (e.g. threaded_time)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(fn() if self_timed else _timed(fn))
    return times


def pick_repeat(seconds_per_call: float, budget: float, lo: int, hi: int) -> int:
    """As many repetitions as fit in ``budget`` seconds, clamped to [lo, hi]."""
    return max(lo, min(hi, int(budget / max(seconds_per_call, 1e-9))))


def threaded_time(tasks: Sequence[Callable[[], object]]) -> float:
    """Run each task in its own ``threading.Thread``, all released together by a
    Barrier; return the wall time from the first start to the last finish."""
    barrier = threading.Barrier(len(tasks))
    starts = [0.0] * len(tasks)
    ends = [0.0] * len(tasks)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        barrier.wait()
        starts[i] = time.perf_counter()
        try:
            tasks[i]()
        except BaseException as exc:  # noqa: BLE001  # reported in the main thread
            errors.append(exc)
        ends[i] = time.perf_counter()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(tasks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return max(ends) - min(starts)


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def same(a, b: np.ndarray) -> bool:
    """Bit-exact equality (NaN-safe for floats)."""
    a = np.asarray(a)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    kind = f"u{b.dtype.itemsize}"
    return bool(np.array_equal(a.view(kind), b.view(kind)))


def machine_facts() -> dict[str, object]:
    """Cores, CPU model, load average, OS and Python version."""
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu_model": model, "cores": os.cpu_count(), "cores_usable": usable,
            "load_avg_1m": round(load[0], 2) if load else None,
            "platform": platform.platform(), "python": sys.version.split()[0],
            "numpy": np.__version__}


def print_table(rows: Sequence[Sequence[object]], header: Sequence[str],
                right: Sequence[bool] | None = None) -> None:
    """Print rows as a plain fixed-width table (numbers right-aligned; ``right``:
    which columns to right-align, overriding that)."""
    cells = [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(header)]
    numeric = list(right) if right is not None else [
        all(isinstance(row[i], (int, float)) or row[i] is None for row in rows)
        for i in range(len(header))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    print(line(header))
    print(line(["-" * w for w in widths]))
    for r in cells:
        print(line(r))


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def write_json(path: str | os.PathLike, payload: dict) -> Path:
    """Write ``payload`` as indented JSON, creating parent directories."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


# -- peak memory, in the fresh process of a measure -------------------------------------

def proc_status(key: str) -> int:
    """A value of /proc/self/status (given in kB), in bytes: VmRSS, VmHWM."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS; False where the kernel does not allow it (the
    peak measured afterwards may then include earlier use: an overestimate)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# -- the options of a benchmark run in one process per library -------------------------

def process_parser(doc: str, libs: Sequence[str], json_name: str, repeat: int = 3) -> Any:
    """An argument parser with the options every process-per-library benchmark takes:
    ``--rounds``, ``--repeat``, ``--libs``, ``--dir``, ``--json`` (``.bench/<json_name>``)
    and the hidden ``--worker LIB --path P`` a round's process is started with."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--libs", default=",".join(libs))
    parser.add_argument("--dir", default=None, help="where the data goes (default: a temporary directory)")
    parser.add_argument("--json", default=str(REPO_ROOT / ".bench" / json_name))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    return parser


def library_available(lib: str, needs: Sequence[str] = ()) -> bool:
    """Whether library ``lib`` of a benchmark can run in this interpreter, with the
    modules ``needs`` too: ``zarrc``, ``tensorstore`` (modules), ``zarr``, ``zarrs``
    (its pipeline, and zarr-python), ``zarr-fused`` (zarr-python's FusedCodecPipeline,
    zarr >= 3.4)."""
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m in needs):
        return False
    if lib in ("zarrc", "tensorstore"):
        return importlib.util.find_spec(lib) is not None
    if importlib.util.find_spec("zarr") is None:
        return False
    if lib == "zarrs":
        return importlib.util.find_spec("zarrs") is not None
    if lib == "zarr-fused":
        import zarr.core.codec_pipeline as pipelines

        return hasattr(pipelines, "FusedCodecPipeline")
    return True


# -- a benchmark run's header and footer ------------------------------------------------

def announce(wanted: Sequence[str], libs: Sequence[str], repeat: int) -> dict[str, object]:
    """Print the machine and which of the ``wanted`` libraries run; return machine_facts()."""
    missing = [lib for lib in wanted if lib not in libs]
    facts = machine_facts()
    print("machine:", facts)
    print(f"libraries: {list(libs)}" + (f" (not installed: {missing})" if missing else "")
          + f"; {repeat} repetitions, interleaved; medians; data in the page cache")
    return facts


def conclude(json_path: str, args, facts: dict, libs: Sequence[str], cases: list, checks: list,
             t_start: float) -> None:
    """Print how many target checks passed and the load average, and write the JSON."""
    total = time.perf_counter() - t_start
    npass = sum(c["status"] == "PASS" for c in checks)
    print(f"\n{npass}/{len(checks)} PASS; total {total:.0f} s; load average now "
          f"{os.getloadavg()[0]:.2f} (at start {facts['load_avg_1m']})")
    path = write_json(json_path, {"machine": facts, "args": vars(args), "libraries": list(libs),
                                  "cases": cases, "checks": checks, "total_s": total})
    print(f"JSON: {os.path.relpath(path)}")


def split_names(parser: Any, option: str, value: str, valid: Any) -> list[str]:
    """A comma-separated option's names, each one of ``valid`` (else the parser's
    error, naming the option and the choices)."""
    names = [n for n in value.split(",") if n]
    bad = [n for n in names if n not in valid]
    if bad:
        parser.error(f"--{option}: unknown {bad}; choose from {list(valid)}")
    return names
