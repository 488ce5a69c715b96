"""kerchunk JSON references -> Parquet references, in the layout fsspec's
``LazyReferenceMapper`` reads and ``kerchunk.df.refs_to_dataframe`` writes (what
GDAL's ``CONVERT_TO_KERCHUNK_PARQUET_REFERENCE`` makes; see ``reference_parquet``):
``.zmetadata`` holding every metadata document and the record size, and per v2
array ``name`` the files ``name/refs.<r>.parq`` (columns ``path``, ``offset``,
``size``, ``raw``; zstd-compressed), row ``k % record_size`` of file
``k // record_size`` the reference of the chunk whose C-order index is ``k``.

The references are converted one array at a time and written one record file at a
time: the values of a reference set are turned into entries only when their record
is written (the JSON document itself is parsed whole; ``gen`` references are
expanded one ``gen`` entry at a time).  Record files holding no reference are not
written; ``.zmetadata`` is written last, so a directory without it is an
unfinished conversion.  Needs pyarrow.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from zarrc.errors import ArgumentError, MetadataError
from zarrc.stores.base import Store
from zarrc.stores.reference_parquet import ChunkField, chunk_field, locate
from zarrc.stores.reference_spec import Ref, ReferenceSet
from zarrc.stores.reference_targets import require

__all__ = ["RECORD_SIZE", "write_parquet_references"]

RECORD_SIZE = 100_000       # references per record file: kerchunk.df.refs_to_dataframe's default


def _is_metadata(key: str) -> bool:
    return key.rpartition("/")[2].startswith(".z")


def _metadata_document(refs: ReferenceSet, key: str) -> Any:
    value = refs.entry(key)
    if isinstance(value, Ref):
        raise MetadataError(f"{refs.where}: key {key!r} refers to {value.url}: Parquet references hold "
                            "metadata documents inline only")
    try:
        return json.loads(value)
    except ValueError as e:
        raise MetadataError(f"{refs.where}: key {key!r} is not a JSON document: {e}") from None


def _not_a_chunk(refs: ReferenceSet, key: str) -> MetadataError:
    if key.rpartition("/")[2] == "zarr.json":
        what = "Zarr v3 metadata: Parquet references hold Zarr v2 hierarchies only"
    else:
        what = "neither a metadata document nor a chunk of a Zarr v2 array (in its chunk grid)"
    return MetadataError(f"{refs.where}: key {key!r} is {what}")


def _record_bytes(pq: Any, pa: Any, paths: list, offsets: np.ndarray, sizes: np.ndarray, raws: list) -> bytes:
    # offset and size are required columns with statistics, as kerchunk writes them: fastparquet
    # (fsspec's default reader) takes integers as floats otherwise
    schema = pa.schema([pa.field("path", pa.string()), pa.field("offset", pa.int64(), nullable=False),
                        pa.field("size", pa.int64(), nullable=False), pa.field("raw", pa.binary())])
    table = pa.table([pa.array(paths, pa.string()), pa.array(offsets, pa.int64()),
                      pa.array(sizes, pa.int64()), pa.array(raws, pa.binary())], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def _write_field(store: Store, refs: ReferenceSet, name: str, spec: ChunkField, found: list[tuple[int, Any]],
                 record_size: int, parquet: tuple[Any, Any]) -> int:
    """Write the record files of one array from ``found`` ((chunk index, key in
    ``refs.refs`` or an entry); returns the references written."""
    found.sort(key=lambda pair: pair[0])
    written, i = 0, 0
    while i < len(found):
        record = found[i][0] // record_size
        base = record * record_size
        n = min(record_size, spec.count - base)
        paths: list[str | None] = [None] * n
        raws: list[bytes | None] = [None] * n
        offsets, sizes = np.zeros(n, np.int64), np.zeros(n, np.int64)
        while i < len(found) and found[i][0] < base + n:
            index, item = found[i]
            i += 1
            value = refs.entry(item) if isinstance(item, str) else item
            row = index - base
            if isinstance(value, Ref):
                if value.url is None:
                    key = item if isinstance(item, str) else f"{name}/#{index}"
                    raise MetadataError(f"{refs.where}: key {key!r} refers to the default target (no URL), "
                                        "which Parquet references cannot name")
                paths[row] = value.url
                if value.length is not None:
                    offsets[row], sizes[row] = value.offset or 0, value.length
            else:
                raws[row] = value
            written += 1
        store.set(f"{name}/refs.{record}.parq", _record_bytes(*parquet, paths, offsets, sizes, raws))
    return written


def write_parquet_references(refs: ReferenceSet, store: Store, record_size: int = RECORD_SIZE) -> tuple[int, int]:
    """Write the reference set ``refs`` into ``store`` as Parquet references
    (``record_size`` references per record file).  Returns (arrays, references
    written).

    Raises ArgumentError for a ``record_size`` that is not a positive integer,
    MetadataError (naming the key) for what the layout cannot hold: a key that is
    neither a metadata document nor a chunk of a v2 array in its grid (v3
    metadata among them), metadata that is not inline JSON, a reference without a
    URL; MissingDependencyError without pyarrow."""
    if type(record_size) is not int or record_size <= 0:
        raise ArgumentError(f"record_size must be a positive integer, not {record_size!r}")
    pq = require("pyarrow.parquet", "writing Parquet references")
    pa = require("pyarrow", "writing Parquet references")
    metadata = {key: _metadata_document(refs, key) for key in refs.refs
                if _is_metadata(key) and key != ".zmetadata"}     # (.zmetadata is written anew)
    if ".zarray" in metadata:
        raise MetadataError(f"{refs.where}: the root is an array: Parquet references hold arrays in groups only")
    fields = {key[:-len("/.zarray")]: chunk_field(key, doc, refs.where)
              for key, doc in metadata.items() if key.endswith("/.zarray")}
    found: dict[str, list[tuple[int, Any]]] = {name: [] for name in fields}

    def place(key: str, item: Any) -> None:
        where = locate(fields, key)
        if where is None:
            raise _not_a_chunk(refs, key)
        found[where[0]].append((where[1], item))

    for key in refs.refs:
        if not _is_metadata(key):
            place(key, key)
    generated: Iterable[dict[str, Ref]] = refs.generated()
    for entries in generated:
        for key, ref in entries.items():
            place(key, ref)
    total = 0
    for name, spec in fields.items():
        total += _write_field(store, refs, name, spec, found.pop(name), record_size, (pq, pa))
    store.set(".zmetadata", json.dumps({"metadata": metadata, "record_size": record_size}).encode())
    return len(fields), total

