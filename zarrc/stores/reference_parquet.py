"""kerchunk references stored as Parquet (fsspec's ``LazyReferenceMapper`` layout).

A directory holding ``.zmetadata`` (JSON: ``{"metadata": {key: JSON document},
"record_size": n}``) and, per array ``name`` (a v2 array: ``name/.zarray`` is in the
metadata), files ``name/refs.<r>.parq`` with the columns ``path``, ``offset``,
``size``, ``raw``.  Chunk ``name/i.j...`` is row ``k % n`` of file ``k // n``, where
``k`` is the C-order linear index of the chunk's coordinates over the array's chunk
grid (``ceil(shape / chunks)`` per dimension; a 0-d array has one chunk, ``name/0``).
A row holds ``raw`` (inline bytes), or ``path`` with ``offset`` and ``size`` (both 0:
the whole file), or neither (no such chunk).

Record files are read with pyarrow (fastparquet if pyarrow is missing) on first use
and kept in a bounded LRU.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrc.errors import MetadataError, MissingDependencyError
from zarrc.stores.reference_spec import Ref, inline_bytes
from zarrc.stores.reference_targets import EXTRA_HINT

ReadFile = Callable[[str], "bytes | None"]


class ChunkField:
    """An array's chunk layout: its chunk grid and its key separator."""

    __slots__ = ("count", "grid", "separator")

    def __init__(self, grid: tuple[int, ...], separator: str) -> None:
        self.grid, self.separator = grid, separator
        self.count = math.prod(grid)


def chunk_field(key: str, zarray: Any, where: str) -> ChunkField:
    """The chunk layout of the v2 array whose ``.zarray`` (``key``) is ``zarray``
    (its JSON, or the text of it).  Raises MetadataError naming ``where`` and ``key``."""
    if isinstance(zarray, (str, bytes)):
        try:
            zarray = json.loads(zarray)
        except ValueError:
            zarray = None
    try:
        shape, chunks = zarray["shape"], zarray["chunks"]
        grid = tuple(math.ceil(s / c) if c else 0 for s, c in zip(shape, chunks, strict=True))
    except (TypeError, KeyError, ValueError):
        raise MetadataError(f"{where}/.zmetadata: {key} has no valid shape and chunks") from None
    return ChunkField(grid or (1,), zarray.get("dimension_separator") or ".")


def locate(fields: dict[str, ChunkField], key: str) -> tuple[str, int] | None:
    """(field, the C-order index of the chunk in its array's grid) of a chunk key,
    or None if ``key`` names no chunk in the grid of an array of ``fields``."""
    field, _, name = key.rpartition("/")
    spec = fields.get(field)
    parts = name
    if spec is None or spec.separator != ".":
        for candidate, spec2 in fields.items():
            if spec2.separator == "/" and key.startswith(candidate + "/"):
                field, spec, parts = candidate, spec2, key[len(candidate) + 1:]
                break
        else:
            return None
    try:
        coords = [int(c) for c in parts.split(spec.separator)]
    except ValueError:
        return None
    if len(coords) != len(spec.grid) or any(not 0 <= c < n for c, n in zip(coords, spec.grid)):
        return None
    index = 0
    for c, n in zip(coords, spec.grid):
        index = index * n + c
    return field, index


def _read_table(data: bytes) -> dict[str, list]:
    """The columns of a Parquet file's bytes as lists.  ImportError (naming the
    ``remote`` extra) if neither pyarrow nor fastparquet is installed."""
    try:
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        pq = None
    if pq is not None:
        table = pq.read_table(io.BytesIO(data))
        return {name: table.column(name).to_pylist() for name in table.column_names}
    try:
        fastparquet = importlib.import_module("fastparquet")
    except ImportError:
        raise MissingDependencyError(f"Parquet references need pyarrow (or fastparquet): {EXTRA_HINT}") from None
    frame = fastparquet.ParquetFile(io.BytesIO(data)).to_pandas()
    return {name: [None if _is_null(v) else v for v in frame[name].tolist()] for name in frame.columns}


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


class ParquetReferences:
    """The references of one Parquet reference directory, read through
    ``read_file(relative path) -> bytes or None``; ``where`` names it in errors.
    Raises MetadataError if its ``.zmetadata`` is missing or malformed."""

    def __init__(self, read_file: ReadFile, where: str, cache_size: int = 128) -> None:
        self.read_file, self.where = read_file, where
        self.cache_size = max(1, cache_size)
        raw = read_file(".zmetadata")
        if raw is None:
            raise MetadataError(f"{where}: no .zmetadata: not a Parquet reference directory")
        try:
            doc = json.loads(raw)
        except ValueError as e:
            raise MetadataError(f"{where}/.zmetadata is not JSON: {e}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
            raise MetadataError(f'{where}/.zmetadata: no "metadata" object')
        size = doc.get("record_size")
        if type(size) is not int or size <= 0:
            raise MetadataError(f'{where}/.zmetadata: "record_size" must be a positive integer, not {size!r}')
        self.record_size: int = size
        self.metadata: dict[str, Any] = doc["metadata"]
        self.fields: dict[str, ChunkField] = {}
        for key, value in self.metadata.items():
            if key.endswith("/.zarray"):
                self.fields[key[:-len("/.zarray")]] = chunk_field(key, value, where)
        self._records: OrderedDict[tuple[str, int], Any] = OrderedDict()
        self._lock = threading.Lock()

    # -- keys ------------------------------------------------------------------

    def metadata_value(self, key: str) -> bytes | None:
        """The bytes of a metadata key (its JSON document), or None."""
        if key == ".zmetadata" and key not in self.metadata:
            doc = {"metadata": self.metadata, "zarr_consolidated_format": 1}
            return json.dumps(doc).encode()
        value = self.metadata.get(key)
        if value is None:
            return None
        return inline_bytes(value, key, self.where) if isinstance(value, str) else json.dumps(value).encode()

    def locate(self, key: str) -> tuple[str, int] | None:
        """(field, linear chunk index) of a chunk key, or None if ``key`` names no
        chunk of an array in the grid."""
        return locate(self.fields, key)

    def get(self, key: str) -> bytes | Ref | None:
        """The entry of ``key`` (inline bytes or a Ref), or None if absent.  Raises
        MetadataError for a malformed record file."""
        meta = self.metadata_value(key)
        if meta is not None:
            return meta
        found = self.locate(key)
        if found is None:
            return None
        field, index = found
        rows = self._record(field, index // self.record_size)
        return None if rows is None else _row(rows, index % self.record_size)

    def _record(self, field: str, record: int) -> dict[str, list] | None:
        """The columns of one record file (cached), or None if it does not exist."""
        with self._lock:
            rows = self._records.get((field, record))
            if rows is not None:
                self._records.move_to_end((field, record))
                return rows
        name = f"{field}/refs.{record}.parq"
        data = self.read_file(name)
        if data is None:
            return None
        try:
            rows = _read_table(data)
        except ImportError:
            raise
        except Exception as e:  # noqa: BLE001  (what a corrupt file makes the reader raise)
            raise MetadataError(f"{self.where}/{name} is not a readable Parquet file: {e}") from None
        if "raw" not in rows and "path" not in rows:
            raise MetadataError(f'{self.where}/{name}: neither a "path" nor a "raw" column')
        with self._lock:
            self._records[(field, record)] = rows
            while len(self._records) > self.cache_size:
                self._records.popitem(last=False)
        return rows

    def chunk_keys(self, field: str) -> list[str]:
        """The keys of the chunks of ``field`` that have references (every record
        file read)."""
        spec = self.fields[field]
        found: list[int] = []
        for record in range(math.ceil(spec.count / self.record_size)):
            rows = self._record(field, record)
            if rows is None:
                continue
            n = min(self.record_size, spec.count - record * self.record_size)
            base = record * self.record_size
            found.extend(base + i for i in range(n) if _row(rows, i) is not None)
        if not found:
            return []
        coords = np.stack(np.unravel_index(np.asarray(found), spec.grid), axis=1)
        sep = spec.separator
        return [f"{field}/" + sep.join(map(str, row)) for row in coords.tolist()]


def _row(rows: dict[str, list], i: int) -> bytes | Ref | None:
    """Row ``i`` of a record file as an entry, or None (no row, or neither raw nor path)."""
    raws = rows.get("raw")
    if raws is not None and i < len(raws) and raws[i] is not None:
        raw = raws[i]
        return raw if isinstance(raw, bytes) else inline_bytes(raw, str(i), "parquet raw")
    paths = rows.get("path")
    if paths is None or i >= len(paths) or paths[i] is None:
        return None
    # (null offset and size: the whole file, as 0 and 0; GDAL writes them so)
    offset, size = int(rows["offset"][i] or 0), int(rows["size"][i] or 0)
    if offset == 0 and size == 0:
        return Ref(paths[i])
    return Ref(paths[i], offset, size)
