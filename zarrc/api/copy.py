"""Copying between stores and hierarchies: ``copy_store`` (keys' bytes), ``copy``
(an array or group into a group) and ``copy_all`` (a group's members), with
zarr-python 2's arguments and results ``(n_copied, n_skipped, n_bytes_copied)``.

Arrays are copied through zarrc's native read and write, a block at a time: a
block is a whole number of the destination's stored chunks (shards), at most
about ``BLOCK_BYTES``, so memory stays bounded whatever the array's size.  With
``if_exists="raise"`` every conflict is found (by a dry run) before anything is
written: a CopyError then changes nothing.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from zarrc.api.synchronous import create_array
from zarrc.core.array import Array
from zarrc.core.conventions import DIMENSIONS_ATTRIBUTE
from zarrc.core.group import Group, new_array
from zarrc.errors import ArgumentError, ArgumentTypeError, CopyError
from zarrc.metadata.names import join_path
from zarrc.stores import Store, make_store

__all__ = ["BLOCK_BYTES", "copy", "copy_all", "copy_store"]

BLOCK_BYTES = 64 << 20          # target size of one block of an array copy (uncompressed)
_STORE_BATCH = 64               # keys read and written at once by copy_store

IF_EXISTS = ("raise", "replace", "skip")
IF_EXISTS_ARRAYS = IF_EXISTS + ("skip_initialized",)


class _Log:
    """``log`` as zarr-python 2 takes it: None, a callable taking a line, or a
    file-like object with ``write``."""

    def __init__(self, log: Any) -> None:
        if log is None:
            self.write: Callable[[str], Any] | None = None
        elif callable(log):
            self.write = log
        elif hasattr(log, "write"):
            self.write = lambda line: log.write(line + "\n")
        else:
            raise ArgumentTypeError(f"log must be None, a callable or a file-like object, got {log!r}")

    def __call__(self, line: str) -> None:
        if self.write is not None:
            self.write(line)

    def summary(self, dry_run: bool, n_copied: int, n_skipped: int, n_bytes: int) -> None:
        lead = "dry run: " if dry_run else "all done: "
        self(f"{lead}{n_copied:,} copied, {n_skipped:,} skipped" +
             ("" if dry_run else f", {n_bytes:,} bytes copied"))


def _check_if_exists(if_exists: str, allowed: tuple[str, ...]) -> None:
    if if_exists not in allowed:
        raise ArgumentError(f"if_exists must be one of {allowed}, got {if_exists!r}")


def _patterns(value: Any, flags: int, what: str) -> list[re.Pattern]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    try:
        return [re.compile(p, flags) for p in value]
    except (TypeError, re.error) as exc:
        raise ArgumentError(f"copy_store: {what} {value!r}: {exc}") from None


def _prefix(path: str) -> str:
    path = path.strip("/")
    return path + "/" if path else ""


def copy_store(source: Any, dest: Any, source_path: str = "", dest_path: str = "",
               excludes: str | Iterable[str] | None = None, includes: str | Iterable[str] | None = None,
               flags: int = 0, if_exists: str = "raise", dry_run: bool = False,
               log: Any = None) -> tuple[int, int, int]:
    """Copy every key of ``source`` under ``source_path`` to ``dest`` under
    ``dest_path``, byte for byte (any format, any nodes).

    source, dest : stores, or what ``zarrc.open`` takes as one (a path, a dict).
    excludes, includes : regular expressions (one or a list, compiled with
        ``flags``): a key matching an exclude and no include is not copied.
    if_exists : "raise" (CopyError, before anything is copied, if a key to be
        copied is in ``dest``), "replace" or "skip".
    dry_run : count and log, write nothing.
    log : None, a callable taking a line, or a file-like object.

    Returns (n_copied, n_skipped, n_bytes_copied).  ArgumentError for an unknown
    ``if_exists`` or a bad pattern."""
    _check_if_exists(if_exists, IF_EXISTS)
    exclude, include = _patterns(excludes, flags, "excludes"), _patterns(includes, flags, "includes")
    src, dst = make_store(source, mode="r"), make_store(dest, mode="a")
    try:
        return _copy_keys(src, dst, source_path, dest_path, exclude, include, if_exists, dry_run, _Log(log))
    finally:            # stores made here from paths are closed (a zip file's directory written)
        for made, given in ((dst, dest), (src, source)):
            if made is not given and not isinstance(given, dict):
                made.close()


def _copy_keys(src: Store, dst: Store, source_path: str, dest_path: str, exclude: list[re.Pattern],
               include: list[re.Pattern], if_exists: str, dry_run: bool, logger: _Log) -> tuple[int, int, int]:
    src_prefix, dst_prefix = _prefix(source_path), _prefix(dest_path)
    pairs = []
    for key in sorted(src.list_prefix(src_prefix)):
        if any(p.search(key) for p in exclude) and not any(p.search(key) for p in include):
            continue
        pairs.append((key, dst_prefix + key[len(src_prefix):]))
    if if_exists == "raise":
        taken = [d for _, d in pairs if dst.exists(d)]
        if taken:
            raise CopyError(f"copy_store: key {taken[0]!r} exists in destination {dst!r} "
                            f"({len(taken)} key(s) would be overwritten; nothing copied)")
    n_copied = n_skipped = n_bytes = 0
    for start in range(0, len(pairs), _STORE_BATCH):
        batch = pairs[start:start + _STORE_BATCH]
        todo = []
        for key, dkey in batch:
            if if_exists == "skip" and dst.exists(dkey):
                logger(f"skip {key} -> {dkey}")
                n_skipped += 1
            else:
                logger(f"copy {key} -> {dkey}")
                todo.append((key, dkey))
        n_copied += len(todo)
        if dry_run or not todo:
            continue
        values = src.get_many([k for k, _ in todo])
        items = {dkey: value for (_, dkey), value in zip(todo, values) if value is not None}
        n_bytes += sum(len(v) for v in items.values())
        dst.set_many(items)
    logger.summary(dry_run, n_copied, n_skipped, n_bytes)
    return n_copied, n_skipped, n_bytes


def blocks(shape: tuple[int, ...], step: tuple[int, ...], itemsize: int,
           limit: int | None = None) -> Iterable[tuple[slice, ...]]:
    """Selections covering ``shape`` in blocks that are whole multiples of ``step``
    (the stored chunk or shard shape), grown from the last dimension while a block
    stays within ``limit`` bytes (None: BLOCK_BYTES; 0: one ``step`` each)."""
    if 0 in shape:
        return
    limit = BLOCK_BYTES if limit is None else limit
    block = [max(1, min(s, c)) for s, c in zip(shape, step)]
    for d in reversed(range(len(shape))):
        nbytes = math.prod(block) * max(itemsize, 1)
        factor = limit // max(nbytes, 1)
        if factor < 2:
            break
        block[d] = min(shape[d], block[d] * factor)
        if block[d] < shape[d]:
            break
    starts = [range(0, s, b) for s, b in zip(shape, block)]
    for origin in itertools.product(*starts):
        yield tuple(slice(o, min(o + b, s)) for o, b, s in zip(origin, block, shape))


def _copy_data(source: Array, dest: Array) -> int:
    """Copy ``source``'s values into ``dest`` (same shape) block by block; returns the
    bytes copied (elements times item size, as zarr-python 2 counts)."""
    if source.size == 0:
        return 0
    step = dest.shards or dest.chunks
    for sel in blocks(source.shape, step, dest.dtype.itemsize):
        dest[sel] = source[sel]
    return source.size * dest.dtype.itemsize


def _create_like(source: Array, dest: Group, name: str, without_attrs: bool,
                 create_kws: dict[str, Any]) -> Array:
    """A new array ``name`` in ``dest`` like ``source`` (replacing any node there):
    the same metadata when the formats agree and no ``create_kws`` are given, else
    ``zarrc.create_array`` with ``source``'s shape, data type, chunks, shards, fill
    value, dimension names (v2's ``_ARRAY_DIMENSIONS`` <-> v3's ``dimension_names``),
    every attribute (GDAL's georeferencing ones among them) (and codecs, when the
    formats agree) overridden by
    ``create_kws`` (``chunks`` given alone drops the shards)."""
    path = join_path(dest._path, name)
    attrs = {} if without_attrs else source.attrs.asdict()
    md = source.metadata
    same = md.zarr_format == dest.metadata.zarr_format
    if not create_kws and same:
        return new_array(dest.store, path, dataclasses.replace(md, attributes=attrs), overwrite=True)
    dims = source.dimension_names
    if dest.metadata.zarr_format == 2:     # written as _ARRAY_DIMENSIONS: named dimensions only
        dims = dims if dims is not None and all(isinstance(d, str) for d in dims) else None
    elif dims is not None:                 # v2 -> v3: the names move to dimension_names
        attrs.pop(DIMENSIONS_ATTRIBUTE, None)
    kws: dict[str, Any] = {
        "shape": source.shape, "dtype": md.data_type if md.zarr_format == 3 else source.dtype,
        "chunks": source.chunks, "shards": source.shards, "fill_value": md.fill_value,
        "dimension_names": dims, "attributes": attrs,
        "zarr_format": dest.metadata.zarr_format}
    if same:
        kws.update(filters=source.filters or None, compressors=source.compressors or None)
        if md.zarr_format == 3:
            kws["serializer"] = source.serializer
        else:
            kws["order"] = source.order
    if "chunks" in create_kws and "shards" not in create_kws:
        kws["shards"] = None
    kws.update(create_kws)
    return create_array(dest.store, name=path, overwrite=True, **kws)


def _copy(log: _Log, source: Any, dest: Group | None, name: str, root: bool, shallow: bool,
          without_attrs: bool, if_exists: str, dry_run: bool, create_kws: dict[str, Any]) -> tuple[int, int, int]:
    n_copied = n_skipped = n_bytes = 0
    exists = dest is not None and name in dest
    if isinstance(source, Array):
        do_copy = True
        if exists:
            assert dest is not None
            if if_exists == "raise":
                raise CopyError(f"an object {name!r} already exists in destination {dest.name!r}")
            if if_exists == "skip":
                do_copy = False
            elif if_exists == "skip_initialized":
                found = dest[name]
                do_copy = not (isinstance(found, Array) and found.nchunks_initialized == found.nchunks)
        if not do_copy:
            log(f"skip {source.name} {source.shape} {source.dtype}")
            return 0, 1, 0
        log(f"copy {source.name} {source.shape} {source.dtype}")
        if not dry_run:
            assert dest is not None
            new = _create_like(source, dest, name, without_attrs, create_kws)
            n_bytes += _copy_data(source, new)
        return 1, 0, n_bytes
    if not isinstance(source, Group):
        raise ArgumentTypeError(f"copy: source must be a zarrc Array or Group, got {type(source).__name__}")
    if not (root or not shallow):
        return 0, 0, 0
    there = dest[name] if exists and dest is not None else None
    exists_array = isinstance(there, Array)
    if exists_array and if_exists in ("skip", "skip_initialized"):
        log(f"skip {source.name}")
        return 0, 1, 0
    if exists_array and if_exists == "raise":
        assert dest is not None
        raise CopyError(f"an array {name!r} already exists in destination {dest.name!r}")
    log(f"copy {source.name}")
    group: Group | None = None
    if not dry_run:
        assert dest is not None
        if exists_array:
            del dest[name]
        group = dest.require_group(name)
        if not without_attrs:
            group.attrs.update(source.attrs.asdict())
    elif isinstance(there, Group):
        group = there                      # (a dry run looks for conflicts below an existing group)
    for key in sorted(source.keys()):
        c, s, b = _copy(log, source[key], group, key, False, shallow, without_attrs, if_exists, dry_run,
                        create_kws)
        n_copied, n_skipped, n_bytes = n_copied + c, n_skipped + s, n_bytes + b
    return n_copied + 1, n_skipped, n_bytes


def _check_dest(dest: Any) -> Group:
    if not isinstance(dest, Group):
        raise ArgumentTypeError(f"dest must be a zarrc Group, got {type(dest).__name__}")
    return dest


def copy(source: Array | Group, dest: Group, name: str | None = None, shallow: bool = False,
         without_attrs: bool = False, log: Any = None, if_exists: str = "raise", dry_run: bool = False,
         **create_kws: Any) -> tuple[int, int, int]:
    """Copy the array or group ``source`` into the group ``dest`` as ``name``
    (default: ``source``'s base name), as zarr-python 2's ``zarr.copy``.

    shallow : copy only ``source``'s immediate members (a group's subgroups are
        not copied).
    without_attrs : do not copy attributes.
    if_exists : "raise" (CopyError, found before anything is written), "replace",
        "skip", or "skip_initialized" (skip an existing array whose chunks are all
        written).  A group that exists in ``dest`` is merged into.
    dry_run : count and log only.
    create_kws : ``zarrc.create`` keywords for the new arrays (``chunks``,
        ``compressor``, ``codecs``, ``fill_value`` ...); without them an array keeps
        its metadata (when ``dest`` has its format).

    Data go through zarrc's native read and write in blocks of whole stored
    chunks.  Returns (n_copied, n_skipped, n_bytes_copied)."""
    _check_if_exists(if_exists, IF_EXISTS_ARRAYS)
    dest = _check_dest(dest)
    name = source.basename if name is None else name
    if not name:
        raise ArgumentError("copy: the source is a root group; give name=")
    logger = _Log(log)
    if if_exists == "raise" and not dry_run:
        _copy(_Log(None), source, dest, name, True, shallow, without_attrs, if_exists, True, create_kws)
    counts = _copy(logger, source, dest, name, True, shallow, without_attrs, if_exists, dry_run, create_kws)
    logger.summary(dry_run, *counts)
    return counts


def copy_all(source: Group, dest: Group, shallow: bool = False, without_attrs: bool = False,
             log: Any = None, if_exists: str = "raise", dry_run: bool = False,
             **create_kws: Any) -> tuple[int, int, int]:
    """Copy every member of the group ``source`` into the group ``dest``, and its
    attributes (unless ``without_attrs``), as zarr-python 2's ``zarr.copy_all``;
    the other arguments as :func:`copy`.  Returns (n_copied, n_skipped,
    n_bytes_copied)."""
    _check_if_exists(if_exists, IF_EXISTS_ARRAYS)
    dest = _check_dest(dest)
    if not isinstance(source, Group):
        raise ArgumentTypeError(f"copy_all: source must be a zarrc Group, got {type(source).__name__}")
    logger = _Log(log)
    keys = sorted(source.keys())
    if if_exists == "raise" and not dry_run:
        for key in keys:
            _copy(_Log(None), source[key], dest, key, False, shallow, without_attrs, if_exists, True,
                  create_kws)
    n_copied = n_skipped = n_bytes = 0
    for key in keys:
        c, s, b = _copy(logger, source[key], dest, key, False, shallow, without_attrs, if_exists, dry_run,
                        create_kws)
        n_copied, n_skipped, n_bytes = n_copied + c, n_skipped + s, n_bytes + b
    if not without_attrs and not dry_run:
        dest.attrs.update(source.attrs.asdict())
    logger.summary(dry_run, n_copied, n_skipped, n_bytes)
    return n_copied, n_skipped, n_bytes
