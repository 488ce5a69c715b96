"""Before/after: the suite's zarrc rows under two installs of zarrc, runs alternated.

```
python bench/bench_ab.py BEFORE_PYTHON AFTER_PYTHON [--rounds 3] [suite options]
python bench/bench_ab.py /tmp/before/.venv/bin/python .venv/bin/python \\
    --datasets u16,f32 --layouts sharded --workloads full,chunks,random,element
```

Each interpreter must import the zarrc to measure (a virtual environment with an
older commit installed, say); both run this checkout's ``bench`` package.  The
suite (``bench_suite.py --libs zarrc`` and the given options) runs ``--rounds``
times under each, alternated (before, after, before, ...), so that both see the
same machine state; the table gives, per dataset x layout x workload, the median
over the rounds of each run's median, after / before, and every run's median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench._common import print_table


def run_suite(python: str, args: list[str], json_path: str, data_dir: str, home: str) -> dict:
    """One suite run under ``python``, from ``home``: a directory holding only a link
    to this checkout's ``bench``, so that ``import zarrc`` finds the interpreter's
    own zarrc, not this checkout's sources."""
    cmd = [python, "-m", "bench.bench_suite", "--libs", "zarrc", "--json", json_path, "--dir", data_dir, *args]
    subprocess.run(cmd, check=True, cwd=home, stdout=subprocess.DEVNULL)
    with open(json_path) as f:
        return json.load(f)


def medians(result: dict) -> dict:
    """{(dataset, layout, workload): (median, unit)} of zarrc in one suite run."""
    out = {}
    for case in result["cases"]:
        for workload, r in case["results"].items():
            if "zarrc" in r.get("median_s", {}):
                out[(case["dataset"], case["layout"], workload)] = (r["median_s"]["zarrc"], r.get("unit", "s"))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", help="python of the install measured first (the baseline)")
    p.add_argument("after", help="python of the install compared with it")
    p.add_argument("--rounds", type=int, default=3)
    opts, suite_args = p.parse_known_args(argv)
    runs: dict = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="zarrc-ab-") as tmp:
        home = os.path.join(tmp, "home")
        os.mkdir(home)
        os.symlink(REPO_ROOT / "bench", os.path.join(home, "bench"))
        for i in range(opts.rounds):
            for which in ("before", "after"):
                python = os.path.abspath(getattr(opts, which))
                print(f"round {i + 1}/{opts.rounds}: {which} ({python})", flush=True)
                result = run_suite(python, suite_args, os.path.join(tmp, f"{which}{i}.json"),
                                   os.path.join(tmp, "data"), home)
                runs[which].append(medians(result))
    rows = []
    for key in runs["after"][0]:
        before = [r[key][0] for r in runs["before"] if key in r]
        after = [r[key][0] for r in runs["after"] if key in r]
        unit = runs["after"][0][key][1]
        b, a = statistics.median(before), statistics.median(after)
        rows.append(["/".join(key[:2]), f"{key[2]} ({unit})", f"{b:.4g}", f"{a:.4g}", f"{a / b:.3f}",
                     " ".join(f"{x:.4g}" for x in before), " ".join(f"{x:.4g}" for x in after)])
    print()
    print_table(rows, ["case", "workload", "before", "after", "after/before", "before runs", "after runs"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
