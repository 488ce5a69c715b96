"""``zarrc convert``'s data: the destination written in *units* of whole stored
objects, in parallel, in bounded memory, resumable.

A unit is one destination shard (sharded destinations), or a block of whole
destination chunks of at most ``UNIT_BYTES`` decoded.  Each unit is read from the
source with one native read (``source[box]``: the source's chunks fetched and
decoded in a batch, without the GIL) and written with one native write
(``dest[box] = values``: encoded and stored in a batch).  ``workers`` threads take
units in turn, and at most ``workers`` units are in flight, so memory holds at most
``workers`` units' values and their encoded bytes, plus the source chunks being
decoded (one per kernel thread).

The journal, under ``.zarrc-convert/`` in the destination: ``job.json`` (the source
and every destination node's metadata), written before anything else, and after
each unit a marker naming the unit's stored keys and their sizes.  A rerun with the
same source and options finds the job, keeps the nodes already created, and skips
each unit whose marker it can verify (every key the marker names holds as many
bytes as it did; whole chunks and shards are written atomically, so a unit whose
marker is written is complete).  A finished conversion removes its journal."""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
import threading
from argparse import Namespace
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from zarrc.api.copy import blocks
from zarrc.cli.options import UsageError
from zarrc.core.array import Array
from zarrc.core.create import node_path
from zarrc.core.group import Group, new_array, new_group, open_node
from zarrc.runtime.config import config
from zarrc.stores import Store

JOURNAL = ".zarrc-convert"
JOB_KEY = f"{JOURNAL}/job.json"
UNITS = f"{JOURNAL}/units"
UNIT_BYTES = 32 << 20      # an unsharded destination's unit: whole chunks up to this many bytes


@dataclasses.dataclass
class ArrayPlan:
    """One array to convert (made by ``zarrc.cli.convert.plan``)."""
    path: str                 # in the destination store ("" for its root)
    source: Array
    metadata: Any             # the destination's (zarrc metadata), written before any data


@dataclasses.dataclass
class GroupPlan:
    """One group to create."""
    path: str
    zarr_format: int
    attributes: dict[str, Any]


def default_workers() -> int:
    """Units converted at once by default: one more than the cores this process may
    use.  A unit's worker runs its chunks' codecs on its own thread when the others
    keep the cores busy (``runtime.threads.spare_threads``), and leaves its core
    idle while it reads the source's files and writes its shard; the extra unit
    fills that time (on 2 cores, the 1 GiB of ``bench/convert.py`` converted in
    about 0.55-0.6x the time of 2 workers, for one more unit of memory)."""
    return max(1, config.threads) + 1


def unit_boxes(shape: tuple[int, ...], step: tuple[int, ...], itemsize: int,
               sharded: bool) -> list[tuple[slice, ...]]:
    """The units covering ``shape``: one ``step`` (a shard) each when ``sharded``,
    else whole multiples of ``step`` (chunks) grown from the last dimension while a
    unit stays within UNIT_BYTES (``api.copy.blocks``)."""
    return list(blocks(shape, step, itemsize, 0 if sharded else UNIT_BYTES))


def unit_keys(dest: Array, box: tuple[slice, ...]) -> list[str]:
    """The store keys of ``dest``'s stored objects inside ``box``."""
    step = dest.shards or dest.chunks
    ranges = [range(b.start // c, -(-b.stop // c)) for b, c in zip(box, step)]
    return [dest._encoding.encode(coords, dest._prefix) for coords in itertools.product(*ranges)]


def _stat(store: Store, key: str) -> int | None:
    """The size of ``key``'s value; -1 present of unknown size; None absent."""
    size = store.size(key)
    if size is not None:
        return size
    return -1 if store.exists(key) else None


def _verified(store: Store, marker: bytes | None) -> bool:
    if marker is None:
        return False
    try:
        recorded = json.loads(marker)
    except ValueError:
        return False
    return isinstance(recorded, dict) and all(_stat(store, k) == v for k, v in recorded.items())


def _node_doc(node: Array | Group) -> dict[str, Any]:
    return {"metadata": node.metadata.to_json(), "attributes": node.attrs.asdict()}


def _job(groups: list[GroupPlan], arrays: list[ArrayPlan], args: Namespace) -> dict[str, Any]:
    nodes: dict[str, Any] = {g.path: {"group": g.zarr_format, "attributes": g.attributes} for g in groups}
    for a in arrays:
        nodes[a.path] = {"metadata": a.metadata.to_json(), "attributes": dict(a.metadata.attributes)}
    return json.loads(json.dumps({"source": args.src, "nodes": nodes}, default=str))


def _holds_zarr(store: Store) -> bool:
    return any(store.exists(k) for k in ("zarr.json", ".zarray", ".zgroup", ".zmetadata"))


def _start(store: Store, job: dict[str, Any], args: Namespace) -> bool:
    """Begin or resume the job in ``store``; True if resumed."""
    found = store.get(JOB_KEY)
    if found is not None and json.loads(found) == job and not args.overwrite:
        return True
    if found is None:
        other = next((k for k in store.list_prefix("") if not k.startswith(JOURNAL + "/")), None)
        if other is not None and not args.overwrite:
            raise UsageError(f"the destination {args.dst} is not empty (it holds {other!r}): "
                             "give --overwrite to replace it, or another destination")
        if other is not None and not _holds_zarr(store):
            raise UsageError(f"the destination {args.dst} holds data that is not Zarr ({other!r}); "
                             "refusing to delete it")
    elif not args.overwrite:
        raise UsageError(f"the destination {args.dst} holds an unfinished conversion of another source "
                         "or with other options: rerun that one, or give --overwrite to start again")
    store.delete_prefix("")
    store.set(JOB_KEY, json.dumps(job).encode())
    return False


def _create_nodes(store: Store, groups: list[GroupPlan], arrays: list[ArrayPlan],
                  job: dict[str, Any]) -> dict[str, Array]:
    """The destination's nodes (those a resumed job created are kept, once checked)."""
    out: dict[str, Array] = {}
    for g in groups:
        there = open_node(store, node_path(g.path))
        if there is None:
            new_group(store, node_path(g.path), attributes=g.attributes, zarr_format=g.zarr_format)
        elif not isinstance(there, Group) or there.attrs.asdict() != job["nodes"][g.path]["attributes"]:
            raise UsageError(f"the destination's node /{g.path} changed since the conversion began: "
                             "give --overwrite to start again")
    for a in arrays:
        there = open_node(store, node_path(a.path))
        if there is None:
            there = new_array(store, node_path(a.path), a.metadata)
        elif not isinstance(there, Array) or json.loads(json.dumps(_node_doc(there), default=str)) != {
                k: job["nodes"][a.path][k] for k in ("metadata", "attributes")}:
            raise UsageError(f"the destination's node /{a.path} changed since the conversion began: "
                             "give --overwrite to start again")
        assert isinstance(there, Array)
        out[a.path] = there
    return out


def _marker_prefix(path: str) -> str:
    return f"{UNITS}/{path}/" if path else f"{UNITS}/"


def _progress(total: int, initial: int, quiet: bool) -> Any:
    """A tqdm bar on stderr when it is a terminal (and tqdm installed), else None."""
    if quiet or total == 0 or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, unit="unit", desc="convert", file=sys.stderr,
                dynamic_ncols=True)


def _tasks(store: Store, arrays: list[ArrayPlan], dests: dict[str, Array],
           resumed: bool) -> tuple[list[tuple[ArrayPlan, Array, tuple[slice, ...], str, list[str]]], int]:
    """(the units left to write, how many were skipped as complete and verified)."""
    todo, skipped = [], 0
    for a in arrays:
        dest = dests[a.path]
        boxes = unit_boxes(dest.shape, dest.shards or dest.chunks, dest.dtype.itemsize, dest.shards is not None)
        prefix = _marker_prefix(a.path)
        done: set[str] = set()
        if resumed:
            markers = [k for k in store.list_prefix(prefix) if k[len(prefix):].startswith("u.")]
            for key, value in zip(markers, store.get_many(markers)):
                if _verified(store, value):
                    done.add(key)
        for i, box in enumerate(boxes):
            key = f"{prefix}u.{i}"
            if key in done:
                skipped += 1
            else:
                todo.append((a, dest, box, key, unit_keys(dest, box) if box else
                             [dest._encoding.encode((), dest._prefix)]))
    return todo, skipped


def _run_units(store: Store, todo: list, workers: int, advance: Callable[[int], object]) -> None:
    """Write every unit of ``todo`` on ``workers`` threads, at most ``workers`` in flight."""
    window = threading.Semaphore(workers)
    failed: list[BaseException] = []

    def one(task: tuple) -> None:
        plan, dest, box, marker, keys = task
        try:
            dest[box] = plan.source[box]
            store.set(marker, json.dumps({k: _stat(store, k) for k in keys}).encode())
        finally:
            window.release()

    def done(future: Future) -> None:
        if future.exception() is not None:
            failed.append(future.exception())   # type: ignore[arg-type]
        else:
            advance(1)

    with ThreadPoolExecutor(workers, thread_name_prefix="zarrc-convert") as pool:
        for task in todo:
            window.acquire()
            if failed:
                window.release()
                break
            pool.submit(one, task).add_done_callback(done)
    if failed:
        raise failed[0]


def run(groups: list[GroupPlan], arrays: list[ArrayPlan], store: Store, args: Namespace) -> str:
    """Convert into ``store``; returns a one-line summary."""
    job = _job(groups, arrays, args)
    resumed = _start(store, job, args)
    dests = _create_nodes(store, groups, arrays, job)
    todo, skipped = _tasks(store, arrays, dests, resumed)
    workers = args.workers or default_workers()
    bar = _progress(len(todo) + skipped, skipped, args.quiet)
    lock = threading.Lock()

    def advance(n: int) -> None:
        if bar is not None:
            with lock:
                bar.update(n)

    try:
        _run_units(store, todo, workers, advance)
    finally:
        if bar is not None:
            bar.close()
    nbytes = sum(a.source.nbytes for a in arrays)
    text = (f"converted {len(arrays):,} array(s) and {len(groups):,} group(s), {nbytes:,} bytes: "
            f"{len(todo):,} unit(s) written")
    if resumed:
        text += f", {skipped:,} skipped (complete and verified)"
    return text


def finish(store: Store) -> None:
    """Remove the journal of a finished conversion."""
    store.delete_prefix(JOURNAL + "/")
