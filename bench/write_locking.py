"""The cost of the locks of partial writes (``write_locking``): "os" and
"lockfile" against "none", in the same run.

```
python bench/write_locking.py              # about a minute on 2 cores
python bench/write_locking.py --quick      # a smoke test
```

Cases (float32 smooth data, zstd level 3, a LocalStore in a temporary folder):

- `8 threads, one shard`: 8 threads, each writing its own inner chunk (256 KiB)
  of one shard of 8 inner chunks, ``--writes`` times; throughput in updates/s.
  With "none" updates are lost: the row gives the values lost at the end.
- `1 writer, inner chunk of a shard`: one thread writing one inner chunk of a
  shard of 8 inner chunks, over and over (a read-modify-write of the shard).
- `1 writer, part of a chunk`: one thread writing 1/8 of an unsharded 2 MiB chunk.
- `1 writer, whole shards`: one thread writing whole shards (no lock taken: the
  setting must cost nothing there; its ratio shows the machine's noise).
- `lock + unlock of one key alone`: ``zarrc.runtime.locks.hold`` of one chunk file,
  ``100 x --writes`` times: the cost each partly written chunk or shard adds
  ("updates/s": locks per second).

Each figure is the median of ``--repeat`` runs, the modes interleaved (none, os,
lockfile, none, ...) so that drift of a shared machine hits them alike; the ratio
is the mode's time over "none"'s (target: at most 1.05).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import zarrc
from bench._common import machine_facts, print_table, smooth_field, threaded_time, write_json
from zarrc.runtime import locks

MODES = ["none", "os", "lockfile"]
ROWS, COLS, NINNER = 256, 256, 8          # an inner chunk of 256 x 256 float32 = 256 KiB
ZSTD = [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}]


def make(path: Path, **kw) -> zarrc.Array:
    return zarrc.create_array(str(path), shape=(NINNER * ROWS, COLS), dtype="f4", compressors=ZSTD,
                              overwrite=True, **kw)


def threads_case(root: Path, data: np.ndarray, writes: int):
    a = make(root / "threads.zarr", chunks=(ROWS, COLS), shards=(NINNER * ROWS, COLS))
    a[...] = data

    def task(w: int):
        rows = slice(w * ROWS, (w + 1) * ROWS)

        def run() -> None:
            for k in range(writes):
                a[rows] = data[rows] + (k + 1)
        return run

    def once() -> float:
        return threaded_time([task(w) for w in range(NINNER)])

    def lost() -> int:
        expected = data + writes
        return int((a[...] != expected).sum())
    return once, lost, NINNER * writes


def single_case(root: Path, data: np.ndarray, writes: int, kind: str):
    if kind == "shard":
        a = make(root / "one.zarr", chunks=(ROWS, COLS), shards=(NINNER * ROWS, COLS))
        region = slice(3 * ROWS, 4 * ROWS)
    elif kind == "chunk":
        a = make(root / "chunk.zarr", chunks=(NINNER * ROWS, COLS))
        region = slice(3 * ROWS, 4 * ROWS)
    else:
        a = make(root / "whole.zarr", chunks=(ROWS, COLS), shards=(2 * ROWS, COLS))
        region = slice(None)
    a[...] = data

    def once() -> float:
        return threaded_time([lambda: [a.__setitem__(region, data[region] + k) for k in range(writes)]])
    return once, None, writes


def lock_case(root: Path, count: int):
    """One key locked and released ``count`` times (the cost each partial write adds)."""
    path = bytes(root / "c0")
    target = [(path, "c0", path)]

    def once() -> float:
        mode = zarrc.config.write_locking
        return threaded_time([lambda: _lock_loop(target, mode, count)])
    return once, None, count


def _lock_loop(target, mode: str, count: int) -> None:
    for _ in range(count):
        with locks.hold(target, mode, "/"):
            pass


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--writes", type=int, default=10, help="writes per thread per run")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", default=".bench/write_locking.json")
    args = p.parse_args(argv)
    if args.quick:
        args.repeat, args.writes = 3, 3
    facts = machine_facts()
    print(f"# {facts['cpu_model']}, {facts['cores_usable']} cores usable, load {facts['load_avg_1m']}")
    data = smooth_field((NINNER * ROWS, COLS), "f4")
    rows, payload = [], []
    with tempfile.TemporaryDirectory(prefix="zarrc-bench-") as tmp:
        root = Path(tmp)
        cases = {"8 threads, one shard": threads_case(root, data, args.writes),
                 "1 writer, inner chunk of a shard": single_case(root, data, args.writes, "shard"),
                 "1 writer, part of a chunk": single_case(root, data, args.writes, "chunk"),
                 "1 writer, whole shards": single_case(root, data, max(1, args.writes // 5), "whole"),
                 "lock + unlock of one key alone": lock_case(root, 100 * args.writes)}
        for name, (once, lost, updates) in cases.items():
            times: dict[str, list[float]] = {m: [] for m in MODES}
            lost_values: dict[str, int] = {}
            taken: dict[str, int] = {}
            for _ in range(args.repeat):
                for mode in MODES:
                    with zarrc.config.set(write_locking=mode):
                        before = locks.acquisitions()
                        times[mode].append(once())
                        taken[mode] = locks.acquisitions() - before
                        if lost is not None:
                            lost_values[mode] = max(lost_values.get(mode, 0), lost())
            base = statistics.median(times["none"])
            for mode in MODES:
                t = statistics.median(times[mode])
                rows.append([name, mode, round(t * 1e3, 1), round(updates / t, 1), round(t / base, 3),
                             taken[mode], lost_values.get(mode)])
                payload.append({"case": name, "mode": mode, "median_s": t, "updates_per_s": updates / t,
                                "ratio_to_none": t / base, "locks_per_run": taken[mode],
                                "lost_values_max": lost_values.get(mode), "times_s": times[mode]})
    print_table(rows, ["case", "write_locking", "median ms", "updates/s", "x none", "locks/run",
                       "lost values (max)"])
    print("\ntarget: 'os' and 'lockfile' at most 1.05 x 'none'; a shared, noisy machine moves "
          "these figures by several per cent from run to run")
    write_json(args.json, {"machine": facts, "repeat": args.repeat, "writes": args.writes, "results": payload})
    return 0


if __name__ == "__main__":
    sys.exit(main())
