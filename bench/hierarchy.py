"""Hierarchies at scale: opening and listing thousands of nodes, and a fresh open of a big shard.

    python bench/hierarchy.py [--rounds 3] [--repeat 3] [--sizes 1000,10000] [--libs zarrc,zarr]
                              [--cases ...] [--dir DIR] [--json PATH]

Run it with the interpreter whose zarr-python you want to compare against
(``.venv/bin/python``: zarr 3.1; ``.venv312/bin/python``: zarr 3.4).

Hierarchies of G groups x 100 arrays (1,000 nodes: 10 groups; 10,000: 100 groups;
each array 100 x 100 float32, chunks 10 x 10, bytes + zstd, two attributes), their
documents written as zarr-python writes them (indented zarr.json files); one copy
with v3 consolidated metadata in the root zarr.json, one without.  Cases, each
timed in a fresh process per library (imports done before timing), ``--repeat``
times, the libraries in turn, ``--rounds`` times; the figure is the median over
the rounds of each process's median:

- ``reach-one``: open the consolidated root read-only and reach one array
  (``g["g5/a50"]``).  Also compared with ``json.loads`` of the root document (the
  floor): target zarrc <= 2x that, and <= 0.5x zarr-python.
- ``list-consolidated``: open the consolidated root and list every member
  (``members(max_depth=None)``): target <= 0.5x zarr-python.
- ``list-plain``: the same without consolidated metadata (``use_consolidated=False``):
  target <= 0.5x zarr-python, and growth from 1,000 to 10,000 nodes linear
  (at most 12.5x for 10.1x the nodes).
- ``shard-one``: one v3 array of 1 float32 shard of N inner chunks of 4 x 4
  (N = 1,024 and 65,536; zstd inside, index at the end), opened afresh and one
  inner chunk read; the open and the read are timed together: target <= 0.8x
  zarr-python.  (Both read the whole index once, 1 MiB for 65,536 inner chunks:
  zarrc checks it in one native pass; the growth from 1,024 is printed, no target.)

Prints PASS / MISS against each target (not asserted) and the load average at the
start and end: the machine may be shared, which makes the figures noisy.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import announce, conclude, library_available, print_table, process_parser, split_names

LIBS = ["zarrc", "zarr"]
CASES = ["reach-one", "list-consolidated", "list-plain", "shard-one"]
ARRAYS_PER_GROUP = 100
SHARD_SIZES = {1000: 1024, 10000: 65536}
INNER = (4, 4)
RATIO_TARGET = {"reach-one": 0.5, "list-consolidated": 0.5, "list-plain": 0.5, "shard-one": 0.8}
LINEAR_GROWTH = 12.5          # for 10.1x the nodes


# -------------------------------------------------------------------- the data

def _array_doc(i: int, j: int) -> dict:
    return {"shape": [100, 100], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 10]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0.0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
            "attributes": {"i": i, "j": j}, "zarr_format": 3, "node_type": "array",
            "storage_transformers": []}


def _group_doc() -> dict:
    return {"attributes": {}, "zarr_format": 3, "node_type": "group"}


def _write(path: Path, doc: dict) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "zarr.json").write_text(json.dumps(doc, indent=2))


def build_hierarchy(root: Path, ngroups: int, consolidated: bool) -> None:
    """``ngroups`` groups of ARRAYS_PER_GROUP arrays below a root group, as zarr-python
    writes them (consolidated: also the root's ``consolidated_metadata``)."""
    entries: dict[str, dict] = {}
    for i in range(ngroups):
        _write(root / f"g{i}", _group_doc())
        entries[f"g{i}"] = {**_group_doc(), "consolidated_metadata": {
            "kind": "inline", "must_understand": False, "metadata": {}}}
        for j in range(ARRAYS_PER_GROUP):
            doc = _array_doc(i, j)
            _write(root / f"g{i}" / f"a{j}", doc)
            entries[f"g{i}/a{j}"] = doc
    root_doc = _group_doc()
    if consolidated:
        order = sorted(entries, key=lambda k: (k.count("/"), k))
        root_doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False,
                                             "metadata": {k: entries[k] for k in order}}
    _write(root, root_doc)


def build_shard(root: Path, n_inner: int) -> None:
    """One array, one shard of ``n_inner`` inner chunks of INNER, written by zarrc."""
    import numpy as np

    import zarrc

    side = round(n_inner ** 0.5)
    shape = (side * INNER[0], side * INNER[1])
    a = zarrc.create_array(str(root), shape=shape, dtype="float32", chunks=INNER, shards=shape,
                           compressors=[{"name": "zstd", "configuration": {"level": 1}}], zarr_format=3)
    a[...] = np.arange(shape[0] * shape[1], dtype="float32").reshape(shape)


# -------------------------------------------------------------------- workers

def _work(lib: str, case: str, path: str):
    """The function timed: one open and what the case does after it."""
    if lib == "json":
        text = (Path(path) / "zarr.json").read_bytes()
        return lambda: json.loads(text)
    if lib == "zarrc":
        import zarrc as z
    else:
        import zarr as z  # type: ignore[no-redef]
    mid = _middle(path) if case == "reach-one" else None
    if case == "reach-one":
        return lambda: z.open_group(path, mode="r")[mid]
    if case == "list-consolidated":
        return lambda: z.open_group(path, mode="r").members(max_depth=None)
    if case == "list-plain":
        return lambda: z.open_group(path, mode="r", use_consolidated=False).members(max_depth=None)
    return lambda: z.open_array(path, mode="r")[:INNER[0], :INNER[1]]


def _middle(path: str) -> str:
    ngroups = sum(1 for p in Path(path).iterdir() if p.is_dir())
    return f"g{ngroups // 2}/a{ARRAYS_PER_GROUP // 2}"


def worker(lib: str, case: str, path: str, repeat: int) -> None:
    import warnings

    warnings.simplefilter("ignore")
    fn = _work(lib, case, path)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    print(json.dumps(times))


def run_worker(lib: str, case: str, path: Path, repeat: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--worker", lib, "--case", case, "--path", str(path),
                          "--repeat", str(repeat)], check=True, capture_output=True, text=True)
    return statistics.median(json.loads(out.stdout.strip().splitlines()[-1]))


# -------------------------------------------------------------------- the run

def main() -> None:
    parser = process_parser(__doc__, LIBS, "hierarchy.json", repeat=3)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--case", help="(a worker's case)")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.case, args.path, args.repeat)
        return
    wanted = split_names(parser, "libs", args.libs, LIBS)
    cases = split_names(parser, "cases", args.cases, CASES)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    libs = [lib for lib in wanted if library_available(lib)]
    facts = announce(wanted, libs, args.repeat)
    t_start = time.perf_counter()
    base = Path(args.dir or tempfile.mkdtemp(prefix="zarrc-hierarchy-"))
    paths: dict[tuple[str, int], Path] = {}
    for size in sizes:
        ngroups = max(1, size // ARRAYS_PER_GROUP)
        for kind, consolidated in (("consolidated", True), ("plain", False)):
            p = base / f"{kind}-{size}"
            if not (p / "zarr.json").exists():
                build_hierarchy(p, ngroups, consolidated)
            paths[(kind, size)] = p
        p = base / f"shard-{size}"
        if not (p / "zarr.json").exists():
            build_shard(p, SHARD_SIZES.get(size, 1024))
        paths[("shard", size)] = p
    kind_of = {"reach-one": "consolidated", "list-consolidated": "consolidated", "list-plain": "plain",
               "shard-one": "shard"}
    runs: dict[tuple[str, int, str], list[float]] = {}
    for _ in range(args.rounds):
        for case in cases:
            for size in sizes:
                path = paths[(kind_of[case], size)]
                for lib in libs + (["json"] if case == "reach-one" else []):
                    runs.setdefault((case, size, lib), []).append(run_worker(lib, case, path, args.repeat))
    med = {key: statistics.median(v) for key, v in runs.items()}
    rows, checks, records = [], [], []
    for case in cases:
        for size in sizes:
            zc, zp = med.get((case, size, "zarrc")), med.get((case, size, "zarr"))
            label = f"{SHARD_SIZES.get(size, 1024)} inner" if case == "shard-one" else f"{size} nodes"
            ratio = zc / zp if zc and zp else None
            row = [case, label, None if zc is None else zc * 1e3, None if zp is None else zp * 1e3, ratio]
            if ratio is not None:
                ok = ratio <= RATIO_TARGET[case]
                checks.append({"check": f"{case} {label} zarrc/zarr <= {RATIO_TARGET[case]}",
                               "value": ratio, "status": "PASS" if ok else "MISS"})
            js = med.get((case, size, "json"))
            if js and zc:
                ok = zc / js <= 2
                checks.append({"check": f"{case} {label} zarrc/json.loads <= 2", "value": zc / js,
                               "status": "PASS" if ok else "MISS"})
            row.append(None if not js else js * 1e3)
            rows.append(row)
            records.append({"case": case, "size": label, "zarrc_s": zc, "zarr_s": zp, "json_s": js})
        if len(sizes) >= 2 and (case, sizes[0], "zarrc") in med and (case, sizes[-1], "zarrc") in med:
            growth = med[(case, sizes[-1], "zarrc")] / med[(case, sizes[0], "zarrc")]
            if case in ("list-consolidated", "list-plain"):
                checks.append({"check": f"{case} zarrc growth {sizes[0]} -> {sizes[-1]} <= {LINEAR_GROWTH}x",
                               "value": growth, "status": "PASS" if growth <= LINEAR_GROWTH else "MISS"})
            else:
                print(f"{case}: zarrc's time grows {growth:.1f}x from {sizes[0]} to {sizes[-1]} (no target)")
    print()
    print_table(rows, ["case", "size", "zarrc ms", "zarr ms", "zarrc/zarr", "json.loads ms"],
                right=[False, False, True, True, True, True])
    print()
    print_table([[c["check"], c["value"], c["status"]] for c in checks], ["target", "value", "status"],
                right=[False, True, False])
    import zarr

    facts["zarr"] = zarr.__version__
    conclude(args.json, args, facts, libs, records, checks, t_start)


if __name__ == "__main__":
    main()
