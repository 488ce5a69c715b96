"""zarr-python's codec pipeline on zarrc's kernels: ``zarrc.ZarrcCodecPipeline``.

Selected in zarr-python with ``zarr.config.set({"codec_pipeline.path":
"zarrc.ZarrcCodecPipeline"})`` (or ``ZARR_CODEC_PIPELINE__PATH``); registered
through the ``zarr.codec_pipeline`` entry point.  zarr-python builds one pipeline
per array with ``from_array_metadata_and_store``: the array's metadata documents
(``to_buffer_dict``: the stored JSON, codecs included) are parsed by zarrc and
prepared by ``engine.prepare`` over zarrc's store on the same data
(``stores.zarr_python``: LocalStore, MemoryStore; ``stores.make_store``: its
remote ``ObjectStore`` and ``FsspecStore`` as a ``RemoteStore`` over the store
object, whose reads are fetched concurrently in windows while the previous window
decodes).

A ``read`` or ``write`` call of zarr-python hands over one (chunk key, chunk
selection, output selection) triple per chunk.  They are turned back into one
selection of the whole array: per dimension an int, a slice or an index array
(basic, orthogonal and block selections, whose chunks form a product), or one
coordinate array per dimension (coordinate and mask selections).  That selection
is planned by ``zarrc.core.indexing`` and run by the prepared strategy: one native
batch for the call (decode, gather into ``out`` / scatter from the value, encode,
partial chunk updates, shard assembly) with the GIL released, local chunk files
read and written by path.  Nothing is done per chunk in Python but reading its
key and selection.

What zarrc does not run (other stores: ZipStore, wrappers, GPU stores; GPU buffers,
data types or codecs zarrc's metadata parser rejects, irregular chunk grids,
``fields=`` reads, zarr-python 3.4's ``array.read_missing_chunks=False``) goes to
zarr-python's own ``BatchedCodecPipeline``; with the zarr config key
``codec_pipeline.strict`` true, it raises ``ZarrcPipelineUnsupported`` instead.
``from_codecs`` (used by zarr-python's sharding codec for inner chunks, and for
arrays without a store) gives the ``BatchedCodecPipeline`` too.

This module imports zarr; ``import zarrc`` does not import it (``zarrc.ZarrcCodecPipeline``
is a lazy attribute).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from zarr.abc.codec import CodecPipeline
from zarr.core.buffer import default_buffer_prototype
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.config import config as zarr_config

from zarrc.core import indexing
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid
from zarrc.core.chunk_key import ChunkKeyEncoding
from zarrc.engine import api as engine_api
from zarrc.engine.prepare import Prepared, prepare
from zarrc.errors import ReadOnlyError, ZarrcError
from zarrc.metadata.v2 import ArrayMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, metadata_from_json
from zarrc.stores import make_store


class ZarrcPipelineUnsupported(ZarrcError):
    """An array, store or call the zarrc pipeline cannot run natively, raised when
    ``codec_pipeline.strict`` is set (else zarr-python's pipeline runs it).  Not a
    NotImplementedError: zarr-python takes that from ``from_array_metadata_and_store``
    as "use ``from_codecs``", which would fall back silently."""


class _Unsupported(Exception):
    """Internal: this call goes to the fallback pipeline (the message says why)."""


class _Grown(Exception):
    """Internal: the selection reaches beyond the array's shape in hand (resized)."""


# calls touching at most this many chunks run on the event loop's thread: the hand-off
# to a thread costs more than decoding a few chunks (zarrc's kernels release the GIL
# and use their own worker threads either way)
INLINE_CHUNKS = 4

# zarr-python's store classes the pipeline runs natively (see _check_store)
NATIVE_STORES = ("LocalStore", "MemoryStore", "ObjectStore", "FsspecStore")


async def _run(call: Any, nchunks: int, inline: bool = True) -> None:
    """Run a native call: inline when small and ``inline`` (a local store), else on a
    thread (the loop stays free, also while a remote store's requests are awaited)."""
    if call is None:
        return
    if inline and nchunks <= INLINE_CHUNKS:
        call()
    else:
        await asyncio.to_thread(call)


def _strict() -> bool:
    return bool(zarr_config.get("codec_pipeline.strict", False))


def _zarrc_metadata(metadata: Any) -> ArrayMetadataV2 | ArrayMetadataV3:
    """zarrc's metadata of zarr-python's ``metadata``, parsed from the documents
    zarr-python stores for it.  _Unsupported for what zarrc cannot parse."""
    try:
        docs = metadata.to_buffer_dict(default_buffer_prototype())
        if metadata.zarr_format == 2:
            zattrs = docs.get(".zattrs")
            return ArrayMetadataV2.from_json(docs[".zarray"].to_bytes(),
                                             zattrs.to_bytes() if zattrs is not None else None)
        md = metadata_from_json(docs["zarr.json"].to_bytes())
    except Exception as e:          # (any parse failure: a type, codec or grid zarrc lacks)
        raise _Unsupported(f"zarrc cannot read the array's metadata: {e}") from e
    if not isinstance(md, ArrayMetadataV3):
        raise _Unsupported("not an array's metadata")
    return md


def _fallback_pipeline(metadata: Any) -> BatchedCodecPipeline:
    """zarr-python's BatchedCodecPipeline for ``metadata``, built as zarr-python does."""
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.metadata import ArrayV2Metadata

    if isinstance(metadata, ArrayV2Metadata):
        from zarr.codecs._v2 import V2Codec

        pipeline = BatchedCodecPipeline.from_codecs(
            [V2Codec(filters=metadata.filters, compressor=metadata.compressor)])
        shape, config = metadata.chunks, ArrayConfig.from_dict({"order": metadata.order})  # type: ignore[typeddict-item]
    else:
        pipeline = BatchedCodecPipeline.from_codecs(metadata.codecs)
        shape = getattr(metadata.chunk_grid, "chunk_shape", (1,) * len(metadata.shape))
        config = ArrayConfig.from_dict({})  # type: ignore[typeddict-item]
    try:      # zarr >= 3.2 evolves the pipeline from a chunk spec; 3.1's codecs are evolved
        spec = ArraySpec(shape=shape, dtype=metadata.dtype if metadata.zarr_format == 2
                         else metadata.data_type, fill_value=metadata.fill_value,
                         config=config, prototype=default_buffer_prototype())
        return pipeline.evolve_from_array_spec(spec)
    except Exception:  # noqa: BLE001 (any codec's own check: the pipeline as built serves)
        return pipeline


class ZarrcCodecPipeline(CodecPipeline):
    """zarr-python's ``CodecPipeline`` run by zarrc's native engine (see the module
    docstring).  Made by zarr-python through ``from_array_metadata_and_store``."""

    __module__ = "zarrc"       # zarr's registry keys it as "zarrc.ZarrcCodecPipeline"

    def __init__(self, metadata: Any, store: Any) -> None:
        self.metadata = metadata
        self.store = store
        self.fallback = _fallback_pipeline(metadata)
        self._prepared: dict[tuple[str, bool], Prepared] = {}
        self.unsupported: str | None = None
        self.native_calls = 0          # reads and writes run by zarrc (not exact under threads)
        self.fallback_calls = 0        # reads and writes handed to zarr-python's pipeline
        self._zstore: Any = None
        self._root: str | None = None
        self._zmd: Any = None
        self._key_parts: dict[int, int] = {}     # (of the metadata _zmd: by its id)
        try:
            self._check_store(store)
            self._zmd = _zarrc_metadata(metadata)
            self._connect()
        except _Unsupported as e:
            self.unsupported = str(e)
        if self.unsupported is not None and _strict():
            raise ZarrcPipelineUnsupported(self.unsupported)

    def _connect(self) -> None:
        """zarrc's store over zarr-python's (again, after a LocalStore moved): the
        native store on the same root or dict for LocalStore / MemoryStore, a
        RemoteStore over any other."""
        root = getattr(self.store, "root", None)
        try:
            self._zstore = make_store(self.store, mode="r" if getattr(self.store, "read_only", False) else "a")
        except ZarrcError as e:
            raise _Unsupported(f"zarrc cannot use the store: {e}") from e
        self._root = None if root is None else os.fspath(root)
        self._prepared.clear()

    @staticmethod
    def _check_store(store: Any) -> None:
        # zarr-python's stores zarrc reads and writes itself: its LocalStore and
        # MemoryStore (the same files or dict), and its remote ObjectStore and
        # FsspecStore (a RemoteStore over the store object).  Others fall back: a
        # ZipStore has one writer (zarrc would close zarr-python's), wrappers such as
        # LoggingStore count or change zarr-python's own calls, GPU stores hold no
        # numpy buffers.
        name = type(store).__name__
        if name not in NATIVE_STORES or type(store).__module__.split(".")[0] != "zarr":
            raise _Unsupported(f"zarrc does not run zarr-python's {name} natively")

    def __eq__(self, other: object) -> bool:
        """Pipelines of equal metadata over equal stores are equal (zarr-python's
        arrays compare their pipelines)."""
        if not isinstance(other, ZarrcCodecPipeline):
            return NotImplemented
        return bool(self.metadata == other.metadata and self.store == other.store)

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.metadata.shape)))

    # pickling: the description, prepared again where it is unpickled
    def __getstate__(self) -> dict[str, Any]:
        return {"metadata": self.metadata, "store": self.store}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["metadata"], state["store"])  # type: ignore[misc]

    @classmethod
    def from_array_metadata_and_store(cls, array_metadata: Any, store: Any) -> ZarrcCodecPipeline:
        """The pipeline of one array (zarr-python calls this for every array it opens)."""
        return cls(array_metadata, store)

    @classmethod
    def from_codecs(cls, codecs: Iterable[Any]) -> Any:
        """A pipeline for codecs alone, without a store: zarr-python's own."""
        return BatchedCodecPipeline.from_codecs(codecs)

    def evolve_from_array_spec(self, array_spec: Any) -> ZarrcCodecPipeline:
        """Already made for its array: itself."""
        return self

    @property
    def supports_partial_decode(self) -> bool:
        return self.fallback.supports_partial_decode

    @property
    def supports_partial_encode(self) -> bool:
        return self.fallback.supports_partial_encode

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fallback)

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        """zarr-python's checks of the codecs against the array."""
        self.fallback.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: Any) -> int:
        return self.fallback.compute_encoded_size(byte_length, array_spec)

    async def decode(self, chunk_bytes_and_specs: Iterable[tuple[Any, Any]]) -> Iterable[Any]:
        """Decode single chunks given as bytes (no selection): zarr-python's pipeline."""
        return await self.fallback.decode(chunk_bytes_and_specs)

    async def encode(self, chunk_arrays_and_specs: Iterable[tuple[Any, Any]]) -> Iterable[Any]:
        """Encode single chunks to bytes (no store): zarr-python's pipeline."""
        return await self.fallback.encode(chunk_arrays_and_specs)

    # ------------------------------------------------------------ read / write

    async def read(self, batch_info: Iterable[Any], out: Any, drop_axes: tuple[int, ...] = ()) -> Any:
        """Read the chunks of one selection into ``out`` (an NDBuffer) in one native batch."""
        batch = list(batch_info)
        if not await self._run_natively(batch, out, drop_axes, reading=True):
            return await self.fallback.read(batch, out, drop_axes)
        return None

    async def write(self, batch_info: Iterable[Any], value: Any, drop_axes: tuple[int, ...] = ()) -> None:
        """Write ``value`` (an NDBuffer, broadcast to the selection) to the chunks of one
        selection in one native batch (partial chunks read, updated and stored back)."""
        batch = list(batch_info)
        if not await self._run_natively(batch, value, drop_axes, reading=False):
            await self.fallback.write(batch, value, drop_axes)

    async def _run_natively(self, batch: list, buffer: Any, drop_axes: tuple[int, ...], reading: bool) -> bool:
        """Run one read or write call in one native batch; False (counted) when zarrc
        cannot and zarr-python's pipeline is to run it (with the strict setting: raise)."""
        try:
            call = self._call(batch, buffer, drop_axes, reading=reading)
        except _Unsupported as e:
            if _strict():
                raise ZarrcPipelineUnsupported(str(e)) from None
            self.fallback_calls += 1
            return False
        self.native_calls += 1
        await _run(call, len(batch), inline=self._zstore.fetch_window is None)
        return True

    def _call(self, batch: list, buf: Any, drop_axes: tuple[int, ...], reading: bool) -> Any:
        """The native call for one read or write (None: nothing to do), or _Unsupported."""
        if self.unsupported is not None:
            raise _Unsupported(self.unsupported)
        if not batch:
            return None
        spec = batch[0][1]
        if reading and getattr(spec.config, "read_missing_chunks", True) is False:
            raise _Unsupported("array.read_missing_chunks=False (zarrc fills missing chunks)")
        arr = buf.as_ndarray_like()
        if not isinstance(arr, np.ndarray):
            raise _Unsupported(f"the buffer holds a {type(arr).__name__}, not a numpy array")
        if not reading and getattr(self.store, "read_only", False):
            raise ReadOnlyError("store was opened in read-only mode and does not support writing")
        root = getattr(self.store, "root", None)
        if root is not None and os.fspath(root) != self._root:
            # (zarr-python's LocalStore.move changes its root in place)
            self._connect()
        write_empty = bool(getattr(spec.config, "write_empty_chunks", False))
        prefix = self._array_prefix(batch[0][0].path)
        prepared = self._prepare(prefix, write_empty)
        ndim = len(prepared.strategy.arr.shape)
        coords = [prepared.encoding.decode(info[0].path[len(prefix):], ndim) for info in batch]
        strategy = prepared.strategy
        za = strategy.arr
        if arr.dtype != za.dtype and not _same_but_order(arr.dtype, za.dtype) and not _strings(arr.dtype, za.dtype):
            raise _Unsupported(f"buffer dtype {arr.dtype} is not the array's {za.dtype}")
        try:
            sel = self._selection(prepared, batch, coords, arr, drop_axes)
        except _Grown:
            # zarr-python resizes an array by replacing its metadata object, not the
            # pipeline: the new shape is read from the store
            self._reload(prefix)
            prepared = self._prepare(prefix, write_empty)
            strategy = prepared.strategy
            sel = self._selection(prepared, batch, coords, arr, drop_axes)
        za = strategy.arr
        if reading:
            target = arr
            if isinstance(sel, tuple) and target.dtype == za.dtype and _basic(sel):
                # ints and slices: planned and read in one native call where the
                # strategy can (plain chunk or shard files), else planned here
                def run_basic() -> None:
                    if not strategy.read_basic_into(sel, target):
                        engine_api.read_into(strategy, _planned(sel, za), target)
                return run_basic
            dims = _planned(sel, za)

            def run_read() -> None:
                if target.dtype == za.dtype:
                    engine_api.read_into(strategy, dims, target)
                else:
                    target[...] = engine_api.read_selection(strategy, dims)
            return run_read
        dims = _planned(sel, za)

        value = arr
        if value.dtype != za.dtype:
            value = value.astype(za.dtype)

        def run_write() -> None:
            engine_api.write(strategy, dims, value, planned=True)
        return run_write

    def _prepare(self, prefix: str, write_empty: bool) -> Prepared:
        """The prepared array at key prefix ``prefix`` (``_array_prefix``)."""
        got = self._prepared.get((prefix, write_empty))
        if got is None:
            try:
                got = prepare(self._zstore, prefix.rstrip("/"), self._zmd, write_empty)
            except ZarrcError as e:
                raise _Unsupported(f"zarrc cannot prepare the array: {e}") from e
            self._prepared[(prefix, write_empty)] = got
        return got

    def _array_prefix(self, key_path: str) -> str:
        """The array's key prefix ("" or ending in "/") in chunk key ``key_path`` (an
        array's path is known from its keys only: zarr-python gives the pipeline no path)."""
        md = self._zmd
        parts = self._key_parts.get(id(md))
        if parts is None:
            parts = ChunkKeyEncoding.from_metadata(md).key_parts(len(md.shape))
            self._key_parts = {id(md): parts}
        pieces = key_path.split("/")
        if len(pieces) < parts:
            raise _Unsupported(f"unexpected chunk key {key_path!r}")
        head = pieces[:len(pieces) - parts]
        return "/".join(head) + "/" if head else ""

    def _reload(self, prefix: str) -> None:
        """The array's metadata read again from the store (after a resize)."""
        key = prefix + (".zarray" if isinstance(self._zmd, ArrayMetadataV2) else "zarr.json")
        try:
            doc = self._zstore.get(key)
            doc = doc.to_bytes() if hasattr(doc, "to_bytes") else doc
            if isinstance(self._zmd, ArrayMetadataV2):
                md: Any = ArrayMetadataV2.from_json(bytes(doc))
            else:
                md = metadata_from_json(bytes(doc))
        except Exception as e:       # (whatever the store or the parser raises)
            raise _Unsupported(f"the array's metadata could not be read again: {e}") from e
        self._zmd = md
        self._prepared.clear()

    def _selection(self, prepared: Prepared, batch: list, coords_list: list[tuple[int, ...]],
                   arr: np.ndarray, drop_axes: tuple[int, ...]) -> tuple | indexing.Plan:
        """The whole selection the per-chunk triples describe: per dimension an int, a
        slice or an index array (orthogonal), or zarrc's plan of points."""
        za = prepared.strategy.arr
        shape = za.shape
        outer = _Outer(self._zmd)
        ndim = len(shape)
        first_out = batch[0][3]
        if ndim == 0:
            return ()
        if not isinstance(first_out, tuple):
            return _plan_points(batch, coords_list, outer, shape, za.chunks, arr)
        dims: list[dict[int, tuple[Any, Any]]] = [{} for _ in range(ndim)]
        dropped = [False] * ndim
        for (_bg, _spec, chunk_sel, out_sel, _complete), coords in zip(batch, coords_list):
            if len(chunk_sel) != ndim:
                raise _Unsupported("chunk selection of an unexpected form")
            k = 0
            for d in range(ndim):
                cs = chunk_sel[d]
                drop = d in drop_axes or isinstance(cs, (int, np.integer))
                dropped[d] = drop
                os_ = None if drop else out_sel[k]
                if not drop:
                    k += 1
                if coords[d] not in dims[d]:
                    dims[d][coords[d]] = (cs, os_)
        selection: list[Any] = []
        for d in range(ndim):
            if dropped[d]:
                c, (cs, _) = next(iter(dims[d].items()))
                selection.append(int(_indices(cs, outer.length(d, c))[0]) + outer.start(d, c))
                if selection[-1] >= shape[d]:
                    raise _Grown
                continue
            merged = _merged_slices(dims[d], outer, d)
            if merged is not None:
                if merged.stop > shape[d]:
                    raise _Grown
                selection.append(merged)
                continue
            size = max(_end(os_) for _, os_ in dims[d].values())
            g = np.empty(size, np.int64)
            for c, (cs, os_) in dims[d].items():
                g[_indices(os_, size)] = _indices(cs, outer.length(d, c)) + outer.start(d, c)
            if size and int(g.max()) >= shape[d]:
                raise _Grown
            selection.append(_as_slice(g))
        return tuple(selection)


def _planned(sel: tuple | indexing.Plan, za: Any) -> indexing.Plan:
    """zarrc's plan of a selection from ``_selection``."""
    if isinstance(sel, tuple):
        return indexing.plan_orthogonal(sel, za.shape, za.chunks)[0]
    return sel


def _basic(sel: tuple) -> bool:
    """Whether a selection from ``_selection`` is made of ints and slices only (its
    slices have positive steps)."""
    return all(type(x) is int or type(x) is slice for x in sel)



def _plan_points(batch: list, coords_list: list[tuple[int, ...]], outer: _Outer,
                 shape: tuple[int, ...], chunks: tuple[int | Edges, ...], arr: np.ndarray) -> indexing.Plan:
    """A coordinate or mask selection: one coordinate array per dimension, in output order."""
    ndim = len(shape)
    if arr.ndim > 1:
        raise _Unsupported("coordinate selection with an output of more than one dimension")
    n = max(_end(b[3]) for b in batch)
    coords_out = np.empty((ndim, n), np.int64)
    for (_bg, _spec, chunk_sel, out_sel, _complete), coords in zip(batch, coords_list):
        pos = _indices(out_sel, n)
        for d in range(ndim):
            coords_out[d, pos] = np.asarray(chunk_sel[d]).reshape(-1) + outer.start(d, coords[d])
    if n and bool((coords_out.max(axis=1) >= np.asarray(shape)).any()):
        raise _Grown
    return indexing.plan_coordinate(tuple(coords_out), shape, chunks)


class _Outer:
    """The array's grid of stored chunks (shards for a sharded array): where chunk c
    of dimension d starts and its length there, regular or rectilinear."""

    def __init__(self, md: ArrayMetadataV2 | ArrayMetadataV3) -> None:
        edges = None if isinstance(md, ArrayMetadataV2) else md.chunk_edges
        self.dims: tuple[int | Edges, ...] = (
            tuple(md.chunks) if isinstance(md, ArrayMetadataV2)
            else tuple(md.chunk_shape) if edges is None else RectilinearChunkGrid(md.shape, edges).dims)

    def start(self, d: int, c: int) -> int:
        dim = self.dims[d]
        if isinstance(dim, int):
            return c * dim
        if c + 1 >= len(dim.offsets):
            raise _Grown                # (a chunk beyond the edges known: the array grew)
        return int(dim.offsets[c])

    def length(self, d: int, c: int) -> int:
        dim = self.dims[d]
        if isinstance(dim, int):
            return dim
        if c + 1 >= len(dim.offsets):
            raise _Grown
        return int(dim.edges[c])


def _indices(sel: Any, size: int) -> np.ndarray:
    """The int64 positions a per-dimension selector (int, slice, index or boolean
    array, possibly one axis of numpy.ix_'s open mesh) picks in a length ``size``."""
    if isinstance(sel, slice):
        return np.arange(*sel.indices(size), dtype=np.int64)
    if isinstance(sel, (int, np.integer)):
        return np.array([int(sel)], np.int64)
    a = np.asarray(sel)
    if a.dtype == bool:
        return np.flatnonzero(a).astype(np.int64)
    return a.reshape(-1).astype(np.int64, copy=False)


def _merged_slices(entries: dict[int, tuple[Any, Any]], outer: _Outer, d: int) -> slice | None:
    """The one slice of the array that per-chunk (chunk slice, output slice) pairs of a
    dimension make up, or None when they are not all slices of one step that line up
    (the common case of basic selections, without building index arrays)."""
    step = g0 = None
    n = 0
    for c, (cs, os_) in entries.items():
        if type(cs) is not slice or type(os_) is not slice or os_.stop is None:
            return None
        cstart, cstop, cstep = cs.indices(outer.length(d, c))
        ostart, ostop, ostep = os_.indices(os_.stop)
        count = len(range(cstart, cstop, cstep))
        if ostep != 1 or cstep < 1 or count != ostop - ostart or count == 0:
            return None
        if step is None:
            step = cstep
        elif step != cstep:
            return None
        start = outer.start(d, c) + cstart - step * ostart     # the global index of output 0
        if g0 is None:
            g0 = start
        elif g0 != start:
            return None
        n += count
    if g0 is None or step is None or g0 < 0:
        return None
    if n != max(os_.stop for _, os_ in entries.values()):
        return None                                    # (gaps or overlaps in the output)
    return slice(g0, g0 + step * (n - 1) + 1, step)


def _strings(buffer: np.dtype, array: np.dtype) -> bool:
    """Whether zarr-python's buffer is numpy 2's StringDType (zarr-python 3.2+ reads
    and writes the ``string`` data type so) for an array zarrc holds as ``str``
    objects: zarrc reads into it and writes from it (one conversion per call)."""
    return buffer.kind == "T" and array == np.dtype(object)


def _same_but_order(a: np.dtype, b: np.dtype) -> bool:
    """Whether two dtypes differ in byte order only (not for fields or new-style dtypes)."""
    if a.names or b.names or a.kind not in "biufc" or b.kind not in "biufc":
        return False
    return a.newbyteorder("=") == b.newbyteorder("=")


def _end(sel: Any) -> int:
    """One past the last output position a per-dimension output selector names."""
    if isinstance(sel, slice):
        if sel.stop is None or (sel.step or 1) < 0:
            raise _Unsupported(f"output selection {sel!r} of an unexpected form")
        return int(sel.stop)
    a = np.asarray(sel)
    if a.dtype == bool:
        return len(a)
    return int(a.max()) + 1 if a.size else 0


def _as_slice(g: np.ndarray) -> Any:
    """``g`` as a slice when it is an arithmetic progression of positive step, else itself."""
    n = len(g)
    if n == 0:
        return g
    if n == 1:
        return slice(int(g[0]), int(g[0]) + 1)
    step = int(g[1] - g[0])
    if step > 0 and (n == 2 or bool((np.diff(g) == step).all())):
        return slice(int(g[0]), int(g[-1]) + 1, step)
    return g
