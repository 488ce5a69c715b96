"""Writing one array from the ranks of an MPI communicator (mpi4py).

Every function here is *collective*: every rank of ``comm`` calls it, in the same
order, and a failure on any rank raises on every rank (the failing rank raises its
own error, the others a :class:`~zarrc.errors.CollectiveError` naming it), so no
rank is left waiting.

- :func:`create_array` / :func:`open_array`: rank 0 does the store work (writes the
  metadata, consolidates it if asked); the others get the metadata documents by
  ``comm.bcast`` and build their :class:`~zarrc.Array` from them, without touching
  the file system (no polling, no metadata reads by every rank).
- :func:`write`: each rank passes its own slab (a basic selection and its values).
  Two-phase I/O, as MPI-IO's collective writes: the touched chunks (shards, for a
  sharded array: the store keys) are shared out among the ranks, each rank
  receives from the others the parts of their slabs that fall in its chunks
  (MPI subarray datatypes over the numpy buffers: no pickles, no staging copies) and writes its chunks
  with one ordinary zarrc write.  Each chunk or shard is encoded and stored by
  exactly one rank, in one piece: no two ranks ever write the same chunk file.

mpi4py is imported only when messages are sent: ``import zarrc`` never imports this
module, and ``zarrc.mpi`` imports without mpi4py.  The store must be one all ranks
share: a :class:`~zarrc.stores.LocalStore` (a directory on a shared file system).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zarrc.api import synchronous as api
from zarrc.core import indexing
from zarrc.core.array import Array
from zarrc.core.node_metadata import documents
from zarrc.errors import ArgumentError, ArgumentTypeError, CollectiveError, SelectionError
from zarrc.metadata.v2 import ArrayMetadataV2
from zarrc.metadata.v3 import metadata_from_json
from zarrc.stores import LocalStore, Store, make_store

__all__ = ["create_array", "open_array", "plan_owners", "write"]

TAG = 0x7A72             # the tag of write()'s messages ("zr")
MAX_MESSAGE = 1 << 30    # bytes of one message at most (MPI counts are C ints)

Box = tuple[tuple[int, ...], tuple[int, ...]]   # (starts, stops) of a region, in elements


# ---------------------------------------------------------------- collective errors

def _describe(exc: BaseException | None) -> str | None:
    return None if exc is None else f"{type(exc).__name__}: {exc}"


def _raise_any(comm: Any, own: BaseException | None, what: str) -> None:
    """Share whether this rank failed; raise ``own`` here if it did, else a
    CollectiveError if another rank did (every rank raises or none does)."""
    failed = [(r, msg) for r, msg in enumerate(comm.allgather(_describe(own))) if msg is not None]
    if own is not None:
        raise own
    if failed:
        r, msg = failed[0]
        more = f" (and {len(failed) - 1} other ranks)" if len(failed) > 1 else ""
        raise CollectiveError(f"{what}: rank {r} failed{more}: {msg}")


# ---------------------------------------------------------------- creating and opening

def create_array(comm: Any, store: Any, *, consolidate: bool | str = False, **kwargs: Any) -> Array:
    """Create an array collectively: rank 0 runs ``zarrc.create_array(store, **kwargs)``
    (every keyword of it: ``name``, ``shape``, ``dtype``, ``chunks``, ``shards``,
    ``zarr_format``, ``overwrite`` ...; ``data`` is written by rank 0), the others
    receive its metadata by broadcast.  Returns the Array on every rank.

    store : a directory path or a LocalStore, the same on every rank (the ranks must
        share it: a dict, MemoryStore or zip file is refused with ArgumentError when
        ``comm`` has more than one rank).
    consolidate : True to consolidate the metadata of the root group after creating
        (``zarrc.consolidate_metadata(store)``), or the path of the group to
        consolidate; False (default) to leave it.

    Raises on every rank what ``zarrc.create_array`` raised on rank 0 (there: the
    error itself; elsewhere: CollectiveError naming it).
    """
    return _collective_node(comm, store, "a", lambda s: api.create_array(s, **kwargs),
                            consolidate, "zarrc.mpi.create_array")


def open_array(comm: Any, store: Any, *, path: str = "", mode: str = "r+",
               consolidate: bool | str = False, **kwargs: Any) -> Array:
    """Open (mode "r", "r+") or create (mode "a" with ``shape``, "w", "w-") the array at
    ``path`` collectively: rank 0 runs ``zarrc.open_array(store, mode=mode, path=path,
    **kwargs)``, the others receive its metadata by broadcast (no file-system reads).
    ``store`` and ``consolidate`` as in :func:`create_array`; errors likewise."""
    return _collective_node(comm, store, "r" if mode == "r" else "a",
                            lambda s: api.open_array(s, mode=mode, path=path, **kwargs),
                            consolidate, "zarrc.mpi.open_array")


def _shared_store(store: Any, mode: str, nranks: int) -> Store:
    """The store of ``store`` for ``mode``; ArgumentError if the ranks cannot share it."""
    s = make_store(store, mode=mode)
    if nranks > 1 and not isinstance(s, LocalStore):
        raise ArgumentError(f"{s!r} is not shared between the ranks (each process has its own): "
                            "give a directory path or a LocalStore on a file system every rank sees")
    return s


def _collective_node(comm: Any, store: Any, mode: str, make: Callable[[Store], Array],
                     consolidate: bool | str, what: str) -> Array:
    rank = comm.Get_rank()
    s: Store | None = None
    error: BaseException | None = None
    try:
        if not (isinstance(consolidate, (bool, str))):
            raise ArgumentTypeError(f"consolidate must be True, False or a group path, got {consolidate!r}")
        s = _shared_store(store, mode, comm.Get_size())
    except Exception as exc:  # noqa: BLE001 - raised on every rank by _raise_any
        error = exc
    _raise_any(comm, error, what)
    assert s is not None
    payload: tuple | None = None
    if rank == 0:
        try:
            arr = make(s)
            if consolidate is not False:
                api.consolidate_metadata(s, path="" if consolidate is True else consolidate)
            payload = ("ok", arr.path, documents(arr.metadata), arr.read_only, arr.write_empty_chunks)
        except Exception as exc:  # noqa: BLE001 - raised here and, named, on every other rank
            error = exc
            payload = ("error", _describe(exc))
    payload = comm.bcast(payload, root=0)
    assert payload is not None
    if error is not None:
        raise error
    if payload[0] == "error":
        raise CollectiveError(f"{what}: rank 0 failed: {payload[1]}")
    if rank == 0:
        return arr
    _, path, docs, read_only, write_empty_chunks = payload
    return Array(s, path, _array_metadata(docs, path), read_only=read_only,
                 write_empty_chunks=write_empty_chunks)


def _array_metadata(docs: dict[str, bytes], path: str) -> Any:
    """The array metadata stored as ``docs`` (node_metadata.documents)."""
    if "zarr.json" in docs:
        return metadata_from_json(docs["zarr.json"], path)
    return ArrayMetadataV2.from_json(json.loads(docs[".zarray"]), json.loads(docs[".zattrs"]), path)


# ---------------------------------------------------------------- the collective write

def write(comm: Any, array: Array, selection: Any, data: Any) -> None:
    """Write every rank's slab of ``array`` collectively; returns when all are stored.

    comm : an mpi4py communicator; every rank of it calls ``write``.
    array : the zarrc Array, opened on every rank (e.g. by :func:`create_array`), in
        a store all ranks share.
    selection : this rank's slab, a basic selection (ints, slices with step 1, ``...``),
        or None for a rank with nothing to write.  The slabs of different ranks must
        not overlap (ArgumentError on every rank if they do); they need not be
        aligned to chunks or shards, nor cover a chunk together.
    data : the values (numpy broadcasting to the selection's shape; cast to the
        array's dtype); ignored when ``selection`` is None.

    The chunks (shards, for a sharded array: one per store key) that the slabs touch
    are shared out among the ranks in boxes (:func:`plan_owners`: balanced by bytes
    written, cut along the dimension that moves the fewest bytes between ranks).
    Each rank receives the parts of the other ranks' slabs in its box over MPI
    (``Isend`` / ``Irecv`` of subarray datatypes straight from and into numpy
    buffers) and stores its box with one zarrc write, so each chunk or shard is
    encoded and written once, by one rank, whole where the slabs cover it whole.  A
    chunk the slabs cover only partly is read, updated and stored by its owner
    alone (an ordinary partial write, with the array's write locking).  When the
    slabs in a rank's box leave holes, each slab part is written by its own call.

    Raises on every rank (the failing rank: its own error; the others:
    CollectiveError): SelectionError for a bad selection, ArgumentError for data
    that does not fit it, overlapping slabs, object (variable-length) dtypes, an
    array not the same on every rank or a store the ranks cannot share,
    ReadOnlyError for a read-only array, and any error of the writes.
    """
    rank, nranks = comm.Get_rank(), comm.Get_size()
    slab: Box | None = None
    block = None
    same = None
    error: BaseException | None = None
    try:
        if not isinstance(array, Array):
            raise ArgumentTypeError(f"zarrc.mpi.write needs a zarrc Array, got {type(array).__name__}")
        array._check_writable()
        if array.dtype.kind == "O":
            raise ArgumentError(f"zarrc.mpi.write cannot send variable-length items ({array.dtype}) "
                                "between ranks: write them with array[selection] = data")
        _shared_store(array.store, "a", nranks)
        same = (array.path, array.shape, array.dtype.str, key_grid(array))
        slab, block = _slab(array, selection, data)
    except Exception as exc:  # noqa: BLE001 - raised here and, named, on every other rank
        error = exc
    gathered = comm.allgather((same, slab, _describe(error)))
    if error is not None:
        raise error
    failed = [(r, msg) for r, (_, _, msg) in enumerate(gathered) if msg is not None]
    if failed:
        raise CollectiveError(f"zarrc.mpi.write: rank {failed[0][0]} failed: {failed[0][1]}")
    if any(g[0] != same for g in gathered):
        raise ArgumentError(f"zarrc.mpi.write: the ranks passed different arrays (path, shape, dtype, "
                            f"chunk grid): {sorted({g[0] for g in gathered}, key=str)}")
    slabs: list[Box | None] = [g[1] for g in gathered]
    _check_disjoint(slabs)
    assert same is not None
    owners = plan_owners(slabs, array.shape, same[3], array.dtype.itemsize, nranks)
    region, buf, pieces = _exchange(comm, rank, slabs, owners, block, array.dtype)
    error = None
    try:
        if region is not None and buf is not None:
            _store_owned(array, region, buf, pieces)
    except Exception as exc:  # noqa: BLE001 - raised on every rank by _raise_any
        error = exc
    _raise_any(comm, error, "zarrc.mpi.write")


def key_grid(array: Array) -> tuple[int, ...]:
    """The shape of the regions stored under one key: the shard shape of a sharded
    array (with codecs around the sharding codec too), else the chunk shape."""
    return tuple(array.metadata.chunk_shape)


def _slab(array: Array, selection: Any, data: Any) -> tuple[Box | None, np.ndarray | None]:
    """This rank's slab as a box and its values as a C-contiguous array of the box's
    shape (None, None for no slab).  SelectionError / ArgumentError for bad input."""
    if selection is None:
        return None, None
    starts, stops, out_shape = [], [], []
    for dim, item in enumerate(indexing.normalize_selection(selection, array.shape)):
        if isinstance(item, slice):
            if item.step != 1:
                raise SelectionError(f"zarrc.mpi.write takes slices of step 1, got step {item.step} "
                                     f"in dimension {dim}")
            start, stop = item.start, max(item.start, item.stop)
            out_shape.append(stop - start)
        else:
            start, stop = item, item + 1
        starts.append(start)
        stops.append(stop)
    try:
        values = np.asarray(data, dtype=array.dtype)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"zarrc.mpi.write: data cannot be cast to {array.dtype}: {exc}") from None
    try:
        values = np.broadcast_to(values, tuple(out_shape))
    except ValueError:
        raise ArgumentError(f"zarrc.mpi.write: data of shape {values.shape} does not fit the "
                            f"selection {selection!r} of shape {tuple(out_shape)}") from None
    box = (tuple(starts), tuple(stops))
    if _volume(box) == 0:
        return None, None
    return box, np.ascontiguousarray(values).reshape(_shape(box))


# ---------------------------------------------------------------- boxes

def _shape(box: Box) -> tuple[int, ...]:
    return tuple(b - a for a, b in zip(*box))


def _volume(box: Box | None) -> int:
    return 0 if box is None else math.prod(_shape(box))


def _intersect(a: Box | None, b: Box | None) -> Box | None:
    if a is None or b is None:
        return None
    lo = tuple(max(x, y) for x, y in zip(a[0], b[0]))
    hi = tuple(min(x, y) for x, y in zip(a[1], b[1]))
    return None if any(h <= low for low, h in zip(lo, hi)) else (lo, hi)


def _bounds(boxes: Sequence[Box]) -> Box:
    return (tuple(min(d) for d in zip(*(b[0] for b in boxes))),
            tuple(max(d) for d in zip(*(b[1] for b in boxes))))


def _slices(box: Box) -> tuple[slice, ...]:
    return tuple(slice(a, b) for a, b in zip(*box))


def _within(box: Box, outer: Box) -> tuple[slice, ...]:
    """``box`` as slices of an array holding ``outer``."""
    return tuple(slice(a - o, b - o) for a, b, o in zip(box[0], box[1], outer[0]))


def _check_disjoint(slabs: Sequence[Box | None]) -> None:
    live = [(r, s) for r, s in enumerate(slabs) if s is not None]
    if not live or not live[0][1][0]:
        if len(live) > 1:        # (0-d array: every slab is the one element)
            raise ArgumentError(f"zarrc.mpi.write: ranks {live[0][0]} and {live[1][0]} both write "
                                "the one element of a 0-d array")
        return
    lo = np.array([s[0] for _, s in live])
    hi = np.array([s[1] for _, s in live])
    overlap = np.all((lo[:, None, :] < hi[None, :, :]) & (lo[None, :, :] < hi[:, None, :]), axis=2)
    np.fill_diagonal(overlap, False)
    if overlap.any():
        i, j = np.argwhere(overlap)[0]
        raise ArgumentError(f"zarrc.mpi.write: the slabs of ranks {live[i][0]} and {live[j][0]} overlap "
                            f"({live[i][1]} and {live[j][1]}); each element must come from one rank")


# ---------------------------------------------------------------- who owns which chunks

def plan_owners(slabs: Sequence[Box | None], shape: Sequence[int], grid: Sequence[int],
                itemsize: int, nranks: int) -> list[Box | None]:
    """The region of the array each rank stores in a collective write: a box of whole
    chunks of ``grid`` (clipped to ``shape``), or None.  The boxes are disjoint and
    cover every chunk the ``slabs`` (one per rank, None for none) touch.

    Recursive bisection of the touched chunks' bounding box: the ranks are split in
    two halves (ordered by where their slabs lie), the box is cut at a chunk boundary
    so that the halves' shares of the bytes written match the halves' sizes, and
    the cut dimension and place are those that minimise the bytes sent across the
    cut plus the imbalance.  The same on every rank (no communication)."""
    live = [s for s in slabs if s is not None]
    owners: list[Box | None] = [None] * nranks
    if not live:
        return owners
    grid = tuple(grid)
    lo = tuple(min(s[0][d] for s in live) // g for d, g in enumerate(grid))
    hi = tuple(-(-max(s[1][d] for s in live) // g) for d, g in enumerate(grid))
    _bisect(list(enumerate(slabs)), (lo, hi), list(range(nranks)), tuple(shape), grid, itemsize, owners)
    return owners


def _element_box(cbox: Box, shape: tuple[int, ...], grid: tuple[int, ...]) -> Box:
    return (tuple(min(c * g, n) for c, g, n in zip(cbox[0], grid, shape)),
            tuple(min(c * g, n) for c, g, n in zip(cbox[1], grid, shape)))


def _bisect(slabs: list[tuple[int, Box | None]], cbox: Box, ranks: list[int], shape: tuple[int, ...],
            grid: tuple[int, ...], itemsize: int, owners: list[Box | None]) -> None:
    region = _element_box(cbox, shape, grid)
    parts = [(r, p) for r, s in slabs if (p := _intersect(s, region)) is not None]
    if not parts:
        return
    dims = [d for d in range(len(grid)) if cbox[1][d] - cbox[0][d] > 1]
    if len(ranks) == 1 or not dims:
        # one rank, or one chunk: the rank among ``ranks`` with the most of it (least to send)
        weight = {r: _volume(p) for r, p in parts}
        owners[max(ranks, key=lambda r: (weight.get(r, 0), -r))] = region
        return
    best = None
    total = sum(_volume(p) for _, p in parts)
    k = len(ranks) // 2
    target = total * k / len(ranks)
    for d in dims:
        centre = {r: (p[0][d] + p[1][d]) / 2 for r, p in parts}
        mid = (region[0][d] + region[1][d]) / 2
        order = sorted(ranks, key=lambda r: (centre.get(r, mid), r))
        left = set(order[:k])
        cuts = _candidate_cuts(parts, cbox, d, grid[d])
        x = np.minimum(cuts * grid[d], shape[d])[None, :]                 # cut in elements
        starts = np.array([p[0][d] for _, p in parts])[:, None]
        stops = np.array([p[1][d] for _, p in parts])[:, None]
        cross = np.array([_volume(p) // (p[1][d] - p[0][d]) for _, p in parts])[:, None]
        below = np.clip(np.minimum(stops, x) - starts, 0, None) * cross   # each part's volume below x
        above = (stops - starts) * cross - below
        in_left = np.array([r in left for r, _ in parts])[:, None]
        moved = np.where(in_left, above, below).sum(axis=0)
        score = (moved + np.abs(below.sum(axis=0) - target)) * itemsize
        i = int(np.argmin(score))
        if best is None or score[i] < best[0]:
            best = (score[i], d, int(cuts[i]), order)
    assert best is not None
    _, d, cut, order = best
    low_box = (cbox[0], cbox[1][:d] + (cut,) + cbox[1][d + 1:])
    high_box = (cbox[0][:d] + (cut,) + cbox[0][d + 1:], cbox[1])
    _bisect(slabs, low_box, order[:k], shape, grid, itemsize, owners)
    _bisect(slabs, high_box, order[k:], shape, grid, itemsize, owners)


def _candidate_cuts(parts: list[tuple[int, Box]], cbox: Box, d: int, g: int) -> np.ndarray:
    """Chunk boundaries (in chunks) strictly inside ``cbox`` along ``d`` where a cut may
    go: next to every slab edge, and a sample of at most 1024 evenly spaced ones."""
    lo, hi = cbox[0][d] + 1, cbox[1][d] - 1
    edges = np.array([e for _, p in parts for e in (p[0][d], p[1][d])])
    near = np.concatenate([edges // g, -(-edges // g)])
    even = np.linspace(lo, hi, num=min(hi - lo + 1, 1024)).round().astype(np.int64)
    cuts = np.unique(np.concatenate([near, even]))
    return cuts[(cuts >= lo) & (cuts <= hi)]


# ---------------------------------------------------------------- the exchange

def _exchange(comm: Any, rank: int, slabs: list[Box | None], owners: list[Box | None],
              block: np.ndarray | None, dtype: np.dtype) -> tuple[Box | None, np.ndarray | None, list[Box]]:
    """Send the parts of this rank's slab to their owners and receive the parts of
    the region this rank owns: (the bounding box of what it received, the values
    there, the parts received, one per sending rank), or (None, None, [])."""
    mine = owners[rank]
    incoming = [(r, p) for r, s in enumerate(slabs) if (p := _intersect(s, mine)) is not None]
    outgoing = [(o, p) for o, b in enumerate(owners)
                if o != rank and (p := _intersect(slabs[rank], b)) is not None]
    region = _bounds([p for _, p in incoming]) if incoming else None
    buf = np.empty(_shape(region), dtype) if region is not None else None
    if (incoming and any(r != rank for r, _ in incoming)) or outgoing:
        _transfer(comm, rank, incoming, outgoing, slabs[rank], block, region, buf)
    for r, p in incoming:
        if r == rank:
            assert buf is not None and block is not None and region is not None
            own = slabs[rank]
            assert own is not None
            buf[_within(p, region)] = block[_within(p, own)]
    return region, buf, [p for _, p in incoming]


def _transfer(comm: Any, rank: int, incoming: list[tuple[int, Box]], outgoing: list[tuple[int, Box]],
              own: Box | None, block: np.ndarray | None, region: Box | None, buf: np.ndarray | None) -> None:
    from mpi4py import MPI

    itemsize = (buf if buf is not None else block).dtype.itemsize   # type: ignore[union-attr]
    types: list[Any] = []
    requests: list[Any] = []

    def subarray(outer: Box, part: Box) -> Any:
        base = MPI.BYTE.Create_contiguous(itemsize)
        sizes = list(_shape(outer)) or [1]
        sub = base.Create_subarray(sizes, list(_shape(part)) or [1],
                                   [a - o for a, o in zip(part[0], outer[0])] or [0], order=MPI.ORDER_C)
        sub.Commit()
        base.Free()
        types.append(sub)
        return sub

    try:
        if buf is not None and region is not None:
            raw = buf.reshape(-1).view(np.uint8)
            for r, part in incoming:
                if r != rank:
                    for piece in _split(part, itemsize):
                        requests.append(comm.Irecv([raw, 1, subarray(region, piece)], source=r, tag=TAG))
        if outgoing:
            assert block is not None and own is not None
            raw_out = block.reshape(-1).view(np.uint8)
            for o, part in outgoing:
                for piece in _split(part, itemsize):
                    requests.append(comm.Isend([raw_out, 1, subarray(own, piece)], dest=o, tag=TAG))
        MPI.Request.Waitall(requests)
    finally:
        for t in types:
            t.Free()


def _split(box: Box, itemsize: int, limit: int = MAX_MESSAGE) -> list[Box]:
    """``box`` cut along its outer dimensions into boxes of at most ``limit`` bytes
    (the same cuts on the sending and the receiving rank)."""
    nbytes = _volume(box) * itemsize
    dims = [d for d, n in enumerate(_shape(box)) if n > 1]
    if nbytes <= limit or not dims:
        return [box]
    d = dims[0]
    lo, hi = box
    row = nbytes // (hi[d] - lo[d])
    step = max(1, limit // row)
    out: list[Box] = []
    for a in range(lo[d], hi[d], step):
        sub = (lo[:d] + (a,) + lo[d + 1:], hi[:d] + (min(a + step, hi[d]),) + hi[d + 1:])
        out.extend(_split(sub, itemsize, limit) if row > limit else [sub])
    return out


def _store_owned(array: Array, region: Box, buf: np.ndarray, pieces: list[Box]) -> None:
    """Store the received values: the whole region in one write when the pieces
    cover it, else each piece by its own write (the holes keep what is stored)."""
    if sum(_volume(p) for p in pieces) == _volume(region):
        array[_slices(region)] = buf if buf.ndim else buf[()]
        return
    for p in pieces:
        array[_slices(p)] = buf[_within(p, region)]
