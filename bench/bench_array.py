"""Array read/write benchmark on one layout: a shortcut into bench_suite.py.

    python bench/bench_array.py [--layout chunked|sharded] [--quick] [--repeat N] [--json PATH]

The u16 dataset (512^3 uint16) as v3 blosc-lz4 with 64^3 chunks ("chunked") or as
256^3 shards of 32^3 inner chunks ("sharded"), every workload of the suite; see
bench_suite.py and bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bench_suite
from bench._common import REPO_ROOT


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", choices=("chunked", "sharded"), default="chunked")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--json", default=None, help="default: .bench/array-<layout>.json")
    args = parser.parse_args(argv)
    layout = "blosc-lz4" if args.layout == "chunked" else "sharded"
    forward = ["--datasets", "u16", "--layouts", layout,
               "--json", args.json or str(REPO_ROOT / ".bench" / f"array-{args.layout}.json")]
    forward += ["--quick"] * args.quick + (["--repeat", str(args.repeat)] if args.repeat else [])
    return bench_suite.main(forward)


if __name__ == "__main__":
    raise SystemExit(main())
