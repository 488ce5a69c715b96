"""The transport floor of ``bench/remote.py``: obstore alone making zarrc's requests.

For one (store, workload) row, :class:`Floor` times the GETs (for ``write``: the
PUTs) that zarrc makes for it, through obstore with the store configuration that
zarrc's URL opening uses (``zarrc.stores.obstore_backend.open_obstore``: the
same URL, storage options, timeouts and retries), with at most
``zarrc.config.concurrency`` requests in flight, and nothing else: no zarr
metadata, no decoding, no copying into an array.  zarrc can be no faster than
that on this machine, so where 0.8 x the fastest peer is below the floor, the
target is out of reach for any client that goes through obstore's transport.

The requests, per workload (the same boxes as the libraries, in the same order):

- ``full``: a GET of every chunk key the box touches (all of them), at once;
- ``chunks``: one GET per box (one chunk each), one after another;
- ``random``: per box, the GETs of the chunk keys it touches at once, the boxes
  one after another;
- ``sharded``: a GET of each shard object whole, at once (zarrc reads a shard it
  mostly covers in one request);
- ``write``: a PUT of every chunk's stored bytes (from the local copy), at once,
  into an empty prefix (``use_multipart=False``, as zarrc puts).

"At once" means ``obstore.get(...).bytes()`` (``obstore.put``) on a thread pool of
``concurrency`` threads (obstore's blocking calls wait without the GIL).  The other
way, obstore's async API (``get_async`` / ``put_async``) on an asyncio loop run on
the calling thread with an ``asyncio.Semaphore`` of ``concurrency``, was measured
against it (2026-11-28, 2 cores, concurrency 10, 256^3 float32 in 512 chunks of
128 KiB, medians of 7, two runs): the pool was faster on every read of many keys
(full read: 0.13-0.16 s against 0.19-0.24 s on http-0ms, 0.62-0.64 against
0.69-0.71 s at 10 ms, 1.44-1.72 against 1.59-1.89 s on S3; the 40 boxes: 0.022-0.027
against 0.031-0.035 s on http-0ms) and the two were within noise of each other on
the 8 shard GETs and the 512 PUTs, so the floor uses the pool (``THREADS = False``
switches to the loop).  A single request (a box inside one chunk, a chunk of
``chunks``) is one blocking call on the calling thread, as zarrc makes it.

Other transports for that single request were measured against obstore's blocking
get (2026-11-28, 2 cores under a load average near 10, the HTTP server of this
benchmark at 0 ms serving 512 objects of 60 kB, one GET after another on one
thread, each client's connection kept alive, interleaved, medians of 9, two runs):
obstore 319-380 us a request, ``http.client.HTTPConnection`` 330-342 us, urllib3's
``HTTPConnectionPool`` 465-610 us, tensorstore's ``http`` kvstore 367-527 us.  No
client wins clearly: the server (Python's ``ThreadingHTTPServer``) takes most of
each request, so zarrc's HTTP store keeps obstore for single requests too.
"""

from __future__ import annotations

import asyncio
import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

THREADS = True          # False: "at once" on an asyncio loop instead of a thread pool


def keys_of(box: tuple, shape: tuple, grid: tuple) -> list[str]:
    """The v3 keys (``c/i/j/k``) of the grid cells (chunks or shards of shape
    ``grid``) that ``box`` (a tuple of slices) touches, in C order."""
    spans = []
    for sl, n, g in zip(box, shape, grid):
        start, stop, _ = sl.indices(n)
        spans.append(range(start // g, -(-stop // g)))
    return ["c/" + "/".join(map(str, cell)) for cell in itertools.product(*spans)]


def stored_bytes(array_dir: Path) -> dict[str, bytes]:
    """Key -> stored bytes of every chunk (or shard) object of a local v3 array."""
    return {p.relative_to(array_dir).as_posix(): p.read_bytes()
            for p in (array_dir / "c").rglob("*") if p.is_file()}


class Requests:
    """obstore requests at most ``concurrency`` in flight: ``get_all(store, keys)``
    (the values as obstore ``Bytes``, in order), ``put_all(store, items)``."""

    def __init__(self, concurrency: int, threads: bool = THREADS) -> None:
        import obstore

        self.obs, self.concurrency, self.threads = obstore, concurrency, threads
        self.pool: Any = ThreadPoolExecutor(concurrency, thread_name_prefix="floor") if threads else None
        self.loop = None if threads else asyncio.new_event_loop()

    @property
    def method(self) -> str:
        """How requests go out at once, in words."""
        how = f"obstore.get on {self.concurrency} threads" if self.threads else \
            f"get_async on an asyncio loop, {self.concurrency} in flight"
        return how + "; a single GET blocking on the calling thread"

    def get_one(self, store: Any, key: str) -> Any:
        return self.obs.get(store, key).bytes()

    def put_one(self, store: Any, item: tuple[str, bytes]) -> None:
        self.obs.put(store, item[0], item[1], use_multipart=False)

    def get_all(self, store: Any, keys: list[str]) -> list[Any]:
        if len(keys) == 1:
            return [self.get_one(store, keys[0])]
        if self.loop is None:
            return list(self.pool.map(lambda key: self.get_one(store, key), keys))
        return self.loop.run_until_complete(self._bounded([self._get(store, key) for key in keys]))

    def put_all(self, store: Any, items: dict[str, bytes]) -> None:
        if self.loop is None:
            list(self.pool.map(lambda item: self.put_one(store, item), items.items()))
            return
        self.loop.run_until_complete(self._bounded([self._put(store, k, v) for k, v in items.items()]))

    async def _get(self, store: Any, key: str) -> Any:
        result = await self.obs.get_async(store, key)
        return await result.bytes_async()

    async def _put(self, store: Any, key: str, value: bytes) -> None:
        await self.obs.put_async(store, key, value, use_multipart=False)

    async def _bounded(self, coros: list) -> list:
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(coro: Any) -> Any:
            async with semaphore:
                return await coro
        return await asyncio.gather(*(one(c) for c in coros))

    def close(self) -> None:
        if self.loop is not None:
            self.loop.close()
        if self.pool is not None:
            self.pool.shutdown()


class Floor:
    """The floor of one (store, workload): ``setup(rep, boxes)`` (untimed) gives the
    callable to time, ``check(result, boxes)`` raises if a value came back other
    than stored (a write: if the objects written are not the chunks).

    ``url_of(name)``: the URL of array ``name`` on the store; ``options``: zarrc's
    storage options for it; ``local``: the local copy's directory; ``grid``: the
    chunk shape (``sharded``: the shard shape); ``s3_client``: boto3's, for
    listing and deleting what ``write`` wrote."""

    def __init__(self, workload: str, url_of: Any, options: dict | None, local: Path, shape: tuple,
                 grid: tuple, requests: Requests, s3_client: Any = None, bucket: str = "") -> None:
        from zarrc.stores.obstore_backend import open_obstore

        self.workload, self.url_of, self.options = workload, url_of, options
        self.shape, self.grid, self.requests = shape, grid, requests
        self.s3_client, self.bucket = s3_client, bucket
        name = "sharded.zarr" if workload == "sharded" else "chunked.zarr"
        self.stored = stored_bytes(local / name)
        self.store = None if workload == "write" else open_obstore(url_of(name), options).store
        self.prefix: str | None = None

    def setup(self, rep: int, boxes: list[tuple]) -> Any:
        from zarrc.stores.obstore_backend import open_obstore

        requests = self.requests
        if self.workload == "write":
            self.prefix = f"w/floor-{rep}.zarr"
            store, items = open_obstore(self.url_of(self.prefix), self.options).store, self.stored
            return lambda: requests.put_all(store, items)
        store, per_box = self.store, self._keys(boxes)      # (the keys, untimed)
        if self.workload == "chunks":
            return lambda: [[requests.get_one(store, keys[0])] for keys in per_box]
        return lambda: [requests.get_all(store, keys) for keys in per_box]

    def _keys(self, boxes: list[tuple]) -> list[list[str]]:
        return [keys_of(box, self.shape, self.grid) for box in boxes]

    def requests_made(self, boxes: list[tuple]) -> int:
        """How many requests one timed call makes."""
        return sum(map(len, self._keys(boxes))) if self.workload != "write" else len(self.stored)

    def check(self, result: Any, boxes: list[tuple]) -> None:
        if self.workload == "write":
            prefix, self.prefix = self.prefix, None
            written = self._take_written(f"{prefix}/")
            if written != {k: len(v) for k, v in self.stored.items()}:
                raise SystemExit(f"transport floor write: {len(written)} objects written, not the "
                                 f"{len(self.stored)} chunks")
            return
        for keys, values in zip(self._keys(boxes), result, strict=True):
            for key, value in zip(keys, values, strict=True):
                if bytes(value) != self.stored[key]:
                    raise SystemExit(f"transport floor {self.workload}: other bytes at {key}")

    def _take_written(self, prefix: str) -> dict[str, int]:
        """Key (under ``prefix``) -> size of each object under ``prefix`` of the
        bucket, which are then deleted."""
        client = self.s3_client
        found = {o["Key"]: o["Size"] for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix) for o in page.get("Contents", [])}
        keys = list(found)
        for i in range(0, len(keys), 1000):
            client.delete_objects(Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]]})
        return {k[len(prefix):]: n for k, n in found.items()}
