"""Import time: `import zarrc` against `import numpy` (which zarrc needs) and
`import zarr` (zarr-python, when installed), each in fresh interpreters.

    python bench/bench_import.py [--repeat 20]

Prints the median wall time of `python -c "import X"` over --repeat fresh processes
(interleaved, so a busy machine slows each alike), less that of `python -c "pass"`,
and zarrc's and zarr's time above numpy's.  The goal (issue 21): zarrc at most 40 ms
above numpy.  `python -X importtime -c "import zarrc"` shows where the time goes.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time


def wall(statement: str) -> float:
    start = time.perf_counter()
    # (run outside the checkout, whose zarrc/ source folder would shadow the install)
    subprocess.run([sys.executable, "-c", statement], check=True, cwd=tempfile.gettempdir())
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    names = ["numpy", "zarrc"] + (["zarr"] if importlib.util.find_spec("zarr") else [])
    statements = {"python": "pass", **{n: f"import {n}" for n in names}}
    for s in statements.values():      # warm the page cache and the .pyc files
        wall(s)
    times: dict[str, list[float]] = {k: [] for k in statements}
    for _ in range(args.repeat):
        for k, s in statements.items():
            times[k].append(wall(s))
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(f"median of {args.repeat} fresh processes, less `python -c pass` ({med['python']:.1f} ms):")
    for n in names:
        above = "" if n == "numpy" else f"   ({med[n] - med['numpy']:+.1f} ms vs numpy)"
        print(f"  import {n:<6} {med[n] - med['python']:7.1f} ms{above}")
    if "zarr" in med:
        print(f"  zarrc / zarr: {(med['zarrc'] - med['python']) / (med['zarr'] - med['python']):.2f}")
    if "zarr" not in names:
        print("  (zarr-python not installed: not measured)")


if __name__ == "__main__":
    main()
