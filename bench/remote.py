"""Remote reads and writes: zarrc against its peers over HTTP and S3 servers on 127.0.0.1.

    python bench/remote.py [--small] [--repeat 5] [--stores http-0ms,http-10ms,s3]
                           [--workloads ...] [--libs ...] [--concurrency 10,own]
                           [--dir DIR] [--json PATH]

One float32 array of 256^3 (64 MiB; ``--small``: 64^3), a smooth simulation-like
field (``_common.smooth_field``), written once per store by zarrc (Zarr v3, blosc
lz4 + byte shuffle, clevel 5) in chunks of 32^3 (128 KiB, 512 chunks; ``--small``:
16^3), and a sharded copy (shards of 128^3 holding the same 32^3 inner chunks;
``--small``: 32^3 of 16^3).

Servers, each started by this benchmark in a process of its own (so that serving
does not take the clients' GIL): the HTTP file server of the tests
(``tests/stores/serving.py``: ranges, ETags) with 0 ms and with 10 ms of latency
added to every request, and moto's S3 server (``ThreadedMotoServer``).

Workloads (per store; each library's array is opened anew, untimed, before every
timed repetition):

- ``full``: the whole array, ``a[:, :, :]``;
- ``chunks``: one read per chunk, ``a[chunk box]``, one after the other;
- ``random``: 40 boxes of 8^3 at random, unaligned corners, one after the other;
- ``sharded``: the whole sharded copy;
- ``write`` (S3 only): the whole array written into an empty array (its metadata
  made by zarrc beforehand, untimed; deleted afterwards, untimed).

Libraries: ``zarrc`` (URL and storage_options through ``zarrc.open_array``),
zarr-python over ``zarr.storage.ObjectStore`` (obstore; ``zarr-obstore``) and over
``zarr.storage.FsspecStore`` (fsspec's http, s3fs; ``zarr-fsspec``), zarr-python
with the zarrs codec pipeline (strict) over ObjectStore (``zarrs``), and
tensorstore (``zarr3`` driver, its ``http`` and ``s3`` kvstores); those not
installed are skipped with a note.  Every result is checked bit for bit against
the data (a write: read back by zarrc) before its time counts.

Concurrency (``--concurrency``, default ``10,own``): the rows run once per setting.
``10``: every library keeps at most 10 requests in flight (zarrc's
``config.concurrency``, zarr-python's ``async.concurrency``, tensorstore's
``http_request_concurrency`` / ``s3_request_concurrency`` context limits): 10 is
zarr-python's documented default (its PR 3526 raised it to 64, PR 3578 put it back
to 10; 3.1.6 and 3.4.2 have 10), which zarrc follows: the like-for-like comparison.  ``own``: each library
at its own default (zarrc and zarr-python 10; tensorstore its ``"shared"`` limit,
which keeps more requests in flight).  Under ``own`` the ``chunks`` workload is not
run again (one request per call: no concurrency to set).  Any positive int may be
given, and settings are separated by commas (``--concurrency 32``: one setting).

The transport floor (``floor``, ``bench/_transport.py``): per row, obstore alone
making the requests zarrc makes (no zarr, no decoding) at zarrc's concurrency,
timed in the same repetitions, interleaved with the libraries.  A row whose
0.8 x fastest peer is below it is out of reach through obstore on this machine.

Output: medians (seconds) per concurrency setting, store, workload and library;
zarrc / fastest peer (target <= 0.8); the floor and zarrc / floor, and for each miss whether it is
unreachable (0.8 x fastest peer < floor); for full reads, the latency bound
(requests x added latency / concurrency + decode time, decode time: zarrc reading
the same chunk bytes from a MemoryStore) and zarrc / that bound (target <= 1.5);
the requests each library (and the floor) made over HTTP.  JSON in ``.bench/remote.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench._common import (
    REPO_ROOT,
    MiB,
    machine_facts,
    pick_repeat,
    print_table,
    same,
    smooth_field,
    split_names,
    write_json,
)
from bench._transport import Floor, Requests

SIZES = {  # name: (shape, chunks, shards)
    "full": ((256, 256, 256), (32, 32, 32), (128, 128, 128)),
    "small": ((64, 64, 64), (16, 16, 16), (32, 32, 32)),
}
BLOSC = [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                             "typesize": 4, "blocksize": 0}}]
STORES = {"http-0ms": 0.0, "http-10ms": 0.010, "s3": 0.0}      # added latency per request
WORKLOADS = ["full", "chunks", "random", "sharded", "write"]
LIBS = ["zarrc", "zarr-obstore", "zarr-fsspec", "zarrs", "tensorstore"]
NEEDS = {"zarrc": ["zarrc"], "zarr-obstore": ["zarr", "obstore"], "zarr-fsspec": ["zarr", "fsspec", "aiohttp"],
         "zarrs": ["zarr", "obstore", "zarrs"], "tensorstore": ["tensorstore"]}
NEEDS_S3 = {"zarr-fsspec": ["s3fs"]}
FLOOR = "floor"     # the transport floor's name among the libraries of run_workload
RANDOM_BOXES, BOX = 40, 8
TARGET, BOUND_TARGET = 0.8, 1.5
BUCKET = "bench"
KEY, SECRET, REGION = "testing", "testing", "us-east-1"      # moto's dummy credentials
BUDGET = 60.0       # seconds one workload's timed repetitions may take (at least 3 run)
TESTS = REPO_ROOT / "tests"


# -- the servers, each in a process of its own ----------------------------------------

def serve(kind: str, root: str | None) -> None:
    """In the server process: start the server, print its address, then answer
    commands on stdin (``latency S``, ``reset``, ``count``) until stdin closes."""
    sys.path.insert(0, str(TESTS))
    from stores import serving

    if kind == "http":
        assert root is not None
        server: Any = serving.FileServer(root)
        print(server.url, flush=True)
    else:
        import logging

        logging.getLogger("werkzeug").setLevel(logging.ERROR)     # (moto's server logs every request)
        server = serving.S3()
        print(server.endpoint, flush=True)
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if kind == "http" and cmd == "latency":
            server.switches.latency = float(arg)
        elif kind == "http" and cmd == "reset":
            with server.switches.lock:
                server.switches.requests.clear()
        elif kind == "http" and cmd == "count":
            with server.switches.lock:
                reqs = list(server.switches.requests)
            print(json.dumps({"total": len(reqs), "HEAD": sum(r[0] == "HEAD" for r in reqs),
                              "ranged": sum(r[2] is not None for r in reqs)}), flush=True)
            continue
        print("ok", flush=True)
    if kind == "http":
        server.close()
    else:
        server.stop()


class Server:
    """A server process of this script (``serve``): ``address``, ``ask(command)``."""

    def __init__(self, kind: str, root: str | None = None) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", kind] + (["--root", root] if root else [])
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.address = self.proc.stdout.readline().strip()
        if not self.address.startswith("http://"):
            self.close()
            raise RuntimeError(f"the {kind} server did not start (exit {self.proc.poll()})")

    def ask(self, command: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- where the arrays are, in each library's terms -------------------------------------

class Place:
    """One store: ``kind`` ("http" or "s3"), ``base`` (the HTTP server's URL or the
    S3 endpoint); ``url(name)``, ``options`` (zarrc storage options)."""

    def __init__(self, kind: str, base: str) -> None:
        self.kind, self.base = kind, base
        self.options = None if kind == "http" else {"endpoint_url": base, "key": KEY, "secret": SECRET,
                                                     "region_name": REGION}

    def url(self, name: str) -> str:
        return f"{self.base}/{name}" if self.kind == "http" else f"s3://{BUCKET}/{name}"


# The concurrency setting being run: one limit on requests in flight for every
# library, or None: each library's own default (see Setting)
SAME_CONCURRENCY: int | None = None
OWN = "own"
# The default settings: every library at zarr-python's documented default of
# async.concurrency (10, zarrc's too), then each library at its own default
CONCURRENCY = f"10,{OWN}"


class Setting:
    """A concurrency setting of the run: ``label`` ("10", ..., or OWN) and ``limit``
    (None for OWN).  ``apply(libs)`` sets it in zarrc, zarr-python (and, through
    SAME_CONCURRENCY, tensorstore's context) before the setting's rows run."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.limit = None if label == OWN else int(label)
        if self.limit is not None and self.limit < 1:
            raise ValueError(label)

    def apply(self, libs: list[str], defaults: dict) -> int:
        """Set it; zarrc's concurrency under it."""
        import zarrc

        global SAME_CONCURRENCY
        SAME_CONCURRENCY = self.limit
        zarrc.config.concurrency = defaults["zarrc"] if self.limit is None else self.limit
        if any(lib.startswith("zarr") and lib != "zarrc" for lib in libs):
            import zarr

            zarr.config.set({"async.concurrency": defaults["zarr"] if self.limit is None else self.limit})
        return zarrc.config.concurrency


def own_defaults(libs: list[str]) -> dict:
    """The libraries' own concurrency defaults, before any setting changes them."""
    import zarrc

    found = {"zarrc": zarrc.config.concurrency}
    if any(lib.startswith("zarr") and lib != "zarrc" for lib in libs):
        import zarr

        found["zarr"] = zarr.config.get("async.concurrency")
    return found


def zarr_config(lib: str) -> Any:
    import zarr

    if lib == "zarrs":
        return zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True})
    return zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"})


def zarr_store(lib: str, place: Place, name: str, write: bool) -> Any:
    """The zarr-python store of ``lib`` for array ``name``."""
    import zarr.storage

    if lib == "zarr-fsspec":
        if place.kind == "http":
            return zarr.storage.FsspecStore.from_url(place.url(name), read_only=True)
        options = {"key": KEY, "secret": SECRET, "endpoint_url": place.base,
                   "client_kwargs": {"region_name": REGION}}
        return zarr.storage.FsspecStore.from_url(place.url(name), storage_options=options, read_only=not write)
    import obstore.store

    if place.kind == "http":
        inner = obstore.store.HTTPStore.from_url(place.url(name), client_options={"allow_http": True})
    else:
        inner = obstore.store.S3Store(BUCKET, prefix=name, endpoint=place.base, access_key_id=KEY,
                                      secret_access_key=SECRET, region=REGION,
                                      client_options={"allow_http": True})
    return zarr.storage.ObjectStore(inner, read_only=not write)


def ts_spec(place: Place, name: str) -> dict:
    if place.kind == "http":
        kvstore = {"driver": "http", "base_url": place.url(name)}
    else:
        kvstore = {"driver": "s3", "bucket": BUCKET, "path": name + "/", "endpoint": place.base,
                   "aws_region": REGION, "aws_credentials": {"type": "environment"}}
    return {"driver": "zarr3", "kvstore": kvstore}


def open_array(lib: str, place: Place, name: str, write: bool = False) -> Any:
    """Array ``name`` of ``place`` opened by ``lib`` (for writing with ``write``)."""
    if lib == "zarrc":
        import zarrc

        return zarrc.open_array(place.url(name), mode="r+" if write else "r", storage_options=place.options)
    if lib == "tensorstore":
        import tensorstore as ts

        context = None
        if SAME_CONCURRENCY is not None:
            limit = {"limit": SAME_CONCURRENCY}
            context = ts.Context({"http_request_concurrency": limit, "s3_request_concurrency": limit})
        return ts.open(ts_spec(place, name), open=True, read=True, write=write, context=context).result()
    import zarr

    with zarr_config(lib):
        return zarr.open_array(zarr_store(lib, place, name, write), mode="r+" if write else "r")


def reader(lib: str) -> Callable[[Any, tuple], np.ndarray]:
    if lib == "tensorstore":
        return lambda a, sel: a[sel].read().result()
    return lambda a, sel: a[sel]


def writer(lib: str) -> Callable[[Any, np.ndarray], None]:
    if lib == "tensorstore":
        return lambda a, data: a.write(data).result()

    def write(a: Any, data: np.ndarray) -> None:
        a[...] = data
    return write


def available(lib: str, s3: bool) -> str | None:
    """None if ``lib`` can run (on S3 too with ``s3``), else what is missing."""
    missing = [m for m in NEEDS[lib] + (NEEDS_S3.get(lib, []) if s3 else [])
               if importlib.util.find_spec(m) is None]
    return f"not installed: {', '.join(missing)}" if missing else None


# -- the data --------------------------------------------------------------------------

def write_arrays(target: str, data: np.ndarray, chunks: tuple, shards: tuple,
                 options: dict | None) -> None:
    """The chunked and the sharded copy of ``data`` under ``target`` (a directory or URL), by zarrc."""
    import zarrc

    for name, sh in (("chunked.zarr", None), ("sharded.zarr", shards)):
        a = zarrc.create_array(f"{target}/{name}", shape=data.shape, dtype=data.dtype, chunks=chunks,
                               shards=sh, compressors=BLOSC, fill_value=0, overwrite=True,
                               storage_options=options)
        a[...] = data


def decode_time(root: str, name: str, data: np.ndarray, repeat: int) -> float:
    """Median time of zarrc reading array ``name`` of the local copy ``root`` from a
    MemoryStore holding the same bytes (the decode time of a full read)."""
    import zarrc
    from zarrc.stores.memory import MemoryStore

    base = Path(root, name)
    stored = {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*") if p.is_file()}
    arr = zarrc.open_array(MemoryStore(stored, read_only=True), mode="r")
    if not same(arr[...], data):
        raise SystemExit(f"zarrc read other values from memory ({name})")
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        arr[...]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def chunk_boxes(shape: tuple, chunks: tuple) -> list[tuple]:
    grid = [range(0, n, c) for n, c in zip(shape, chunks)]
    return [tuple(slice(o, o + c) for o, c in zip(corner, chunks))
            for corner in np.stack(np.meshgrid(*grid, indexing="ij"), -1).reshape(-1, len(shape)).tolist()]


def random_boxes(shape: tuple, n: int, size: int, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    return [tuple(slice(int(o), int(o) + size) for o in rng.integers(0, [s - size + 1 for s in shape]))
            for _ in range(n)]


# -- one workload: every library in turn, each repetition ------------------------------

class Workload:
    """What one (store, workload) runs: ``setup(lib, rep)`` (untimed) gives the callable
    to time; ``check(lib, result)`` raises if the result is wrong.  ``lib`` FLOOR is
    the transport floor, ``floor``."""

    def __init__(self, name: str, place: Place, data: np.ndarray, boxes: list[tuple],
                 s3_client: Any = None, zarrc_chunks: tuple = (), floor: Floor | None = None) -> None:
        self.name, self.place, self.data, self.boxes = name, place, data, boxes
        self.s3_client, self.chunks, self.floor = s3_client, zarrc_chunks, floor
        self.written: str | None = None

    def setup(self, lib: str, rep: int, boxes: list[tuple] | None = None) -> Callable[[], Any]:
        boxes = self.boxes if boxes is None else boxes
        if lib == FLOOR:
            assert self.floor is not None
            return self.floor.setup(rep, boxes)
        if self.name == "write":
            import zarrc

            name = f"w/{lib}-{rep}.zarr"
            zarrc.create_array(self.place.url(name), shape=self.data.shape, dtype=self.data.dtype,
                               chunks=self.chunks, compressors=BLOSC, fill_value=0, overwrite=True,
                               storage_options=self.place.options)
            self.written = name
            arr, put, data = open_array(lib, self.place, name, write=True), writer(lib), self.data
            return lambda: put(arr, data)
        arr = open_array(lib, self.place, "sharded.zarr" if self.name == "sharded" else "chunked.zarr")
        get = reader(lib)
        return lambda: [get(arr, box) for box in boxes]

    def check(self, lib: str, result: Any, boxes: list[tuple] | None = None) -> None:
        boxes = self.boxes if boxes is None else boxes
        if lib == FLOOR:
            assert self.floor is not None
            self.floor.check(result, boxes)
            return
        if self.name == "write":
            import zarrc

            name, self.written = self.written, None
            assert name is not None
            back = zarrc.open_array(self.place.url(name), mode="r", storage_options=self.place.options)[...]
            keys = delete_prefix(self.s3_client, name + "/")
            nchunks = int(np.prod([-(-s // c) for s, c in zip(self.data.shape, self.chunks)]))
            if not same(back, self.data) or keys != nchunks + 1:
                raise SystemExit(f"{self.place.kind} write: {lib} wrote other values or {keys} keys "
                                 f"(expected {nchunks} chunks and zarr.json)")
            return
        for box, got in zip(boxes, result, strict=True):
            if not same(got, self.data[box]):
                raise SystemExit(f"{self.place.kind} {self.name}: {lib} read other values at {box}")


def delete_prefix(client: Any, prefix: str) -> int:
    """Delete every key under ``prefix`` of the bucket; how many there were."""
    keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
            for o in page.get("Contents", [])]
    for i in range(0, len(keys), 1000):
        client.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]]})
    return len(keys)


def run_workload(work: Workload, libs: list[str], repeat: int, server: Server | None) -> dict:
    """Warm-up (a few boxes, checked), then interleaved timed repetitions, each
    checked; HTTP request counts per library from the first timed repetition."""
    for lib in libs:
        few = work.boxes[:4]
        work.check(lib, work.setup(lib, -1, few)(), few)
    times: dict[str, list[float]] = {lib: [] for lib in libs}
    requests: dict[str, dict] = {}
    rep, wanted = 0, repeat
    while rep < wanted:
        for lib in libs:
            fn = work.setup(lib, rep)
            if server is not None and rep == 0:
                server.ask("reset")
            t = time.perf_counter()
            result = fn()
            times[lib].append(time.perf_counter() - t)
            if server is not None and rep == 0:
                requests[lib] = json.loads(server.ask("count"))
            work.check(lib, result)
        if rep == 0:
            wanted = pick_repeat(sum(times[lib][0] for lib in libs), BUDGET, min(3, repeat), repeat)
        rep += 1
    return {"times": times, "median_s": {lib: statistics.median(t) for lib, t in times.items()},
            "reps": wanted, "requests": requests}


# -- the run ---------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="64^3 instead of 256^3: a smoke test")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--libs", default=",".join(LIBS))
    parser.add_argument("--dir", default=None, help="where the local copy goes (default: a temporary directory)")
    parser.add_argument("--concurrency", default=CONCURRENCY,
                        help="comma-separated settings, each run in turn: N (requests in flight for every "
                             "library: zarrc's concurrency, zarr-python's async.concurrency, tensorstore's "
                             f"http/s3_request_concurrency) or {OWN!r} (each library's own default); "
                             f"default {CONCURRENCY!r}")
    parser.add_argument("--json", default=str(REPO_ROOT / ".bench" / "remote.json"))
    parser.add_argument("--serve", choices=["http", "s3"], help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.root)
        return 0
    t_start = time.perf_counter()
    stores = split_names(parser, "stores", args.stores, STORES)
    workloads = split_names(parser, "workloads", args.workloads, WORKLOADS)
    wanted = split_names(parser, "libs", args.libs, LIBS)
    if "zarrc" not in wanted:
        parser.error("--libs must include zarrc")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", KEY)          # (tensorstore's s3 kvstore reads these)
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", SECRET)
    os.environ.setdefault("AWS_REGION", REGION)
    facts = machine_facts()
    print("machine:", facts)
    skipped = {lib: why for lib in wanted if (why := available(lib, "s3" in stores))}
    libs = [lib for lib in wanted if lib not in skipped or available(lib, False) is None]
    for lib, why in skipped.items():
        print(f"skipped: {lib} ({why})" if lib not in libs else f"skipped on S3: {lib} ({why})")
    print(f"libraries: {libs}")

    try:
        settings = [Setting(label.strip()) for label in args.concurrency.split(",") if label.strip()]
    except ValueError:
        parser.error(f"--concurrency takes positive ints and {OWN!r}, got {args.concurrency!r}")
    if not settings:
        parser.error("--concurrency names no setting")
    defaults = own_defaults(libs)
    floors: dict[int, Requests] = {}       # the floor's requests, per zarrc concurrency
    has_floor = importlib.util.find_spec("obstore") is not None
    if not has_floor:
        print("skipped: the transport floor (obstore not installed)")
    shape, chunks, shards = SIZES["small" if args.small else "full"]
    data = smooth_field(shape, "float32")
    nchunks = len(chunk_boxes(shape, chunks))
    nshards = len(chunk_boxes(shape, shards))
    print(f"{shape} float32 ({data.nbytes / MiB:.0f} MiB), {nchunks} chunks of {chunks}; sharded: {nshards} "
          f"shards of {shards}; blosc lz4 + shuffle; concurrency settings "
          f"{', '.join(s.label for s in settings)} (own defaults: {defaults}); up to {args.repeat} "
          f"repetitions (at least 3; fewer than {args.repeat} if they would take over {BUDGET:.0f} s), "
          f"libraries interleaved, medians"
          + ("" if not has_floor else "; transport floor: obstore at zarrc's concurrency"))
    boxes = {"full": [(slice(None),) * 3], "sharded": [(slice(None),) * 3], "write": [(slice(None),) * 3],
             "chunks": chunk_boxes(shape, chunks), "random": random_boxes(shape, RANDOM_BOXES, BOX)}
    cases: list[dict] = []
    servers: list[Server] = []
    with tempfile.TemporaryDirectory(dir=args.dir) as root:
        write_arrays(root, data, chunks, shards, None)
        stored = {name: sum(p.stat().st_size for p in Path(root, name).rglob("*") if p.is_file())
                  for name in ("chunked.zarr", "sharded.zarr")}
        print(f"stored: {stored['chunked.zarr'] / MiB:.1f} MiB chunked, {stored['sharded.zarr'] / MiB:.1f} MiB "
              "sharded")
        decode = {"full": decode_time(root, "chunked.zarr", data, 7),
                  "sharded": decode_time(root, "sharded.zarr", data, 7)}
        print(f"decode time (zarrc from a MemoryStore): full {decode['full']:.3f} s, "
              f"sharded {decode['sharded']:.3f} s")
        try:
            http = Server("http", root) if any(s.startswith("http") for s in stores) else None
            if http is not None:
                servers.append(http)
            s3 = s3_client = None
            if "s3" in stores:
                s3 = Server("s3")
                servers.append(s3)
                import boto3

                s3_client = boto3.client("s3", endpoint_url=s3.address, aws_access_key_id=KEY,
                                         aws_secret_access_key=SECRET, region_name=REGION)
                s3_client.create_bucket(Bucket=BUCKET)
                place = Place("s3", s3.address)
                write_arrays(f"s3://{BUCKET}", data, chunks, shards, place.options)
            for setting in settings:
                concurrency = setting.apply(libs, defaults)
                requests = None
                if has_floor:
                    requests = floors.get(concurrency) or floors.setdefault(concurrency, Requests(concurrency))
                print(f"concurrency {setting.label}: zarrc {concurrency}"
                      + ("" if requests is None else f"; floor: {requests.method}"), flush=True)
                for store in stores:
                    latency = STORES[store]
                    if store.startswith("http"):
                        assert http is not None
                        http.ask(f"latency {latency}")
                        place, counter = Place("http", http.address), http
                    else:
                        assert s3 is not None
                        place, counter = Place("s3", s3.address), None
                    here = [lib for lib in libs if store != "s3" or lib not in skipped]
                    for name in workloads:
                        if name == "write" and store != "s3":
                            continue
                        if name == "chunks" and setting.limit is None and len(settings) > 1:
                            continue        # (one request per call: no concurrency to set)
                        floor = None if requests is None else Floor(
                            name, place.url, place.options, Path(root), shape,
                            shards if name == "sharded" else chunks, requests, s3_client, BUCKET)
                        work = Workload(name, place, data, boxes[name], s3_client, chunks, floor)
                        t0 = time.perf_counter()
                        found = run_workload(work, here + ([FLOOR] if floor else []), args.repeat, counter)
                        case = {"store": store, "workload": name, "latency_s": latency,
                                "concurrency": setting.label, "zarrc_concurrency": concurrency, **found}
                        if floor is not None:
                            case["floor"] = {"median_s": found["median_s"].pop(FLOOR),
                                             "times": found["times"].pop(FLOOR),
                                             "requests": floor.requests_made(boxes[name]),
                                             "served": found["requests"].pop(FLOOR, None)}
                        if name in ("full", "sharded"):
                            case["bound"] = bound(name, latency, concurrency, nchunks, nshards, decode[name])
                        cases.append(case)
                        med = found["median_s"]
                        print(f"  [{setting.label}] {store} {name}: "
                              + ", ".join(f"{lib} {med[lib]:.3f}" for lib in here)
                              + (f", floor {case['floor']['median_s']:.3f}" if floor else "")
                              + f"  ({found['reps']} reps, {time.perf_counter() - t0:.0f} s)", flush=True)
        finally:
            for server in servers:
                server.close()
            for requests in floors.values():
                requests.close()
    checks = report(cases, libs)
    total = time.perf_counter() - t_start
    npass = sum(c["status"] == "PASS" for c in checks)
    misses = [c for c in checks if c["status"] == "MISS" and "unreachable" in c]
    if misses:
        print(f"\n{sum(c['unreachable'] for c in misses)} of the {len(misses)} misses of {TARGET} x fastest peer "
              "are below the transport floor (unreachable through obstore here)", end="")
    print(f"\n{npass}/{len(checks)} PASS; total {total:.0f} s; load average now {os.getloadavg()[0]:.2f} "
          f"(at start {facts['load_avg_1m']})")
    facts["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    path = write_json(args.json, {"machine": facts, "args": vars(args), "libraries": libs, "skipped": skipped,
                                  "decode_s": decode, "concurrency": [s.label for s in settings],
                                  "own_defaults": defaults,
                                  "floor_method": {n: r.method for n, r in floors.items()}, "cases": cases,
                                  "checks": checks, "total_s": total})
    print(f"JSON: {os.path.relpath(path)}")
    return 0


def bound(name: str, latency: float, concurrency: int, nchunks: int, nshards: int, decode: float) -> dict:
    """The latency bound of a full read: requests x latency / concurrency + decode
    time.  Unsharded: one request per chunk.  Sharded: an index and a data request
    per shard, the data requests after the index ones (at least 2 latencies)."""
    if name == "full":
        requests, waits = nchunks, nchunks * latency / concurrency
    else:
        requests = 2 * nshards
        waits = max(requests / concurrency, 2) * latency
    return {"requests": requests, "waits_s": waits, "decode_s": decode, "bound_s": waits + decode}


def report(cases: list[dict], libs: list[str]) -> list[dict]:
    """Print the tables; return the checks."""
    checks: list[dict] = []
    rows = []
    misses = []
    for c in cases:
        med = c["median_s"]
        floor = c.get("floor")
        peers = [lib for lib in med if lib != "zarrc"]
        ratio = fastest = None
        if peers:
            fastest = min(peers, key=med.__getitem__)
            ratio = med["zarrc"] / med[fastest]
            status = "PASS" if ratio <= TARGET else "MISS"
            check = {"check": f"{_where(c)}: zarrc <= {TARGET} x fastest peer ({fastest})",
                     "ratio": ratio, "status": status}
            if floor is not None:
                check["unreachable"] = floor["unreachable"] = TARGET * med[fastest] < floor["median_s"]
            checks.append(check)
            if status == "MISS":
                misses.append((c, fastest))
        c["ratio"], c["fastest_peer"] = ratio, fastest
        if floor is not None:
            floor["zarrc_ratio"] = med["zarrc"] / floor["median_s"]
        rows.append([c.get("concurrency", "-"), c["store"], c["workload"], *[_s(med.get(lib)) for lib in libs],
                     _s(floor["median_s"] if floor else None),
                     "-" if ratio is None else f"{ratio:.2f} {checks[-1]['status']}",
                     "-" if floor is None else f"{floor['zarrc_ratio']:.2f}", c["reps"]])
    print(f"\nconc: the concurrency setting ({OWN}: each library's own default)")
    print("median seconds (floor: obstore alone making zarrc's requests, no zarr, no decoding)")
    print_table(rows, ["conc", "store", "workload", *libs, "floor", "zarrc/fastest peer", "zarrc/floor", "reps"],
                right=[False, False, False] + [True] * (len(libs) + 1) + [False, True, True])
    if misses:
        print(f"\nmisses of {TARGET} x fastest peer against the transport floor")
    for c, fastest in misses:
        target = TARGET * c["median_s"][fastest]
        floor = c.get("floor")
        where = f"  {_where(c)} ({c['ratio']:.2f} x): "
        if floor is None:
            print(where + "no transport floor measured")
            continue
        verdict = "unreachable" if floor["unreachable"] else "reachable"
        sign = "<" if floor["unreachable"] else ">="
        print(where + f"{verdict}: {TARGET}x {fastest} ({target:.3f} s) {sign} transport floor "
              f"({floor['median_s']:.3f} s)")
    rows = []
    for c in cases:
        if "bound" not in c:
            continue
        b = c["bound"]
        r = c["median_s"]["zarrc"] / b["bound_s"]
        status = "PASS" if r <= BOUND_TARGET else "MISS"
        b["ratio"], b["status"] = r, status
        checks.append({"check": f"{_where(c)}: zarrc <= {BOUND_TARGET} x latency bound",
                       "ratio": r, "status": status})
        rows.append([c.get("concurrency", "-"), c["store"], c["workload"], b["requests"], f"{b['waits_s']:.3f}",
                     f"{b['decode_s']:.3f}",
                     f"{b['bound_s']:.3f}", f"{c['median_s']['zarrc']:.3f}", f"{r:.2f} {status}"])
    if rows:
        print("\nfull reads against the latency bound (requests x latency / concurrency + decode)")
        print_table(rows, ["conc", "store", "workload", "requests", "waits s", "decode s", "bound s", "zarrc s",
                           "zarrc/bound"], right=[False, False, False, True, True, True, True, True, False])
    rows = [[c.get("concurrency", "-"), c["store"], c["workload"],
             *[_requests(c["requests"].get(lib)) for lib in libs],
             _requests(c.get("floor", {}).get("served"))] for c in cases if c["requests"]]
    if rows:
        print("\nHTTP requests per timed call (total / HEAD / ranged)")
        print_table(rows, ["conc", "store", "workload", *libs, "floor"],
                    right=[False, False, False] + [True] * (len(libs) + 1))
    return checks


def _where(case: dict) -> str:
    """A row's name: ``[setting] store workload``."""
    return f"[{case.get('concurrency', '-')}] {case['store']} {case['workload']}"


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f}"


def _requests(count: dict | None) -> str:
    return "-" if count is None else f"{count['total']}/{count['HEAD']}/{count['ranged']}"


if __name__ == "__main__":
    raise SystemExit(main())
