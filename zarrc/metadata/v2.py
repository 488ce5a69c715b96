"""Zarr v2 ``.zarray`` / ``.zgroup`` / ``.zattrs`` documents <-> frozen dataclasses
(no I/O).

:class:`ArrayMetadataV2` and :class:`GroupMetadataV2` check every rule of the v2
spec when constructed (``from_json`` or directly); ``to_json`` writes the document
zarr-python 3 writes for ``zarr_format=2`` (same keys, same order).  Attributes
live in ``.zattrs``, so they are passed to ``from_json`` separately and written by
``attributes_to_json``.  Errors are MetadataError naming the document, the key and
the value, e.g. ``.zarray of /temperature: "order" "K" must be "C" or "F"``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from zarrc.errors import MetadataError, ZarrcUserWarning
from zarrc.metadata.common import (
    FrozenDict,
    attributes_mapping,
    check_int_list,
    check_object,
    describe,
    error_context,
    fail,
    freeze,
    is_int,
    thaw,
)
from zarrc.metadata.dtypes_v2 import (
    OBJECT_CODECS,
    cast_fill_value_v2,
    dtype_to_json_v2,
    encode_fill_value_v2,
    object_codec_id,
    parse_dtype_v2,
    parse_fill_value_v2,
)
from zarrc.metadata.v3 import MAX_NESTING, dump_json, load_json, nesting_depth

ARRAY_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters")
ARRAY_KEYS = ARRAY_REQUIRED + ("dimension_separator",)


def where(document: str, path: str) -> str:
    """The prefix of error messages about ``document`` (".zarray", ...) at ``path``."""
    return f"{document} of /{path.strip('/')}: "


def _ignore_unknown(doc: Mapping, known: tuple[str, ...], prefix: str) -> None:
    """Warn about the keys of ``doc`` not in ``known`` (as zarr-python, they are
    ignored: older NCZarr writes ``_NCZARR_ARRAY``, netCDF-C ``_NCZARR_SUPERBLOCK``)."""
    unknown = [key for key in doc if key not in known]
    if unknown:
        warnings.warn(f"{prefix}ignoring unknown key(s) {', '.join(map(describe, unknown))}",
                      ZarrcUserWarning, stacklevel=4)


def _nczarr_dimrefs(entry: Any) -> tuple[str, ...] | None:
    refs = entry.get("dimrefs") if isinstance(entry, Mapping) else None
    if isinstance(refs, list) and all(isinstance(r, str) for r in refs):
        return tuple(refs)
    return None


def _load(document: str, doc: Mapping | bytes | str, path: str) -> Mapping:
    with error_context(where(document, path)):
        parsed = load_json(doc)
        if nesting_depth(parsed) > MAX_NESTING:
            raise MetadataError(f"is nested too deeply (more than {MAX_NESTING} levels)")
        return parsed


def _check_zarr_format(doc: Mapping) -> None:
    if "zarr_format" not in doc:
        raise MetadataError('"zarr_format" is missing')
    if not is_int(doc["zarr_format"]) or doc["zarr_format"] != 2:
        fail("zarr_format", doc["zarr_format"], "must be 2")


def _is_codec(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("id"), str) and bool(value["id"])


def _codec(value: Any) -> FrozenDict:
    if not _is_codec(value):
        fail("compressor", value, 'must be null or a codec configuration: an object with a string "id"')
    return freeze(value)


def _filters(value: Any) -> tuple[FrozenDict, ...]:
    if not isinstance(value, (list, tuple)):
        fail("filters", value, "must be null or an array of codec configurations")
    for item in value:
        if not _is_codec(item):
            fail("filters", value, f'has an entry {describe(item)} that is not a codec configuration '
                 '(an object with a string "id")')
    return tuple(freeze(item) for item in value)


def _attributes(value: Any) -> FrozenDict:
    return attributes_mapping(check_object("attributes", value))


def attributes_from_json(zattrs_doc: Mapping | bytes | str | None, path: str = "") -> FrozenDict:
    """The attributes in a ``.zattrs`` document (None: no .zattrs -> empty).
    Raises MetadataError if it is not a JSON object."""
    if zattrs_doc is None:
        return FrozenDict()
    return attributes_mapping(_load(".zattrs", zattrs_doc, path))


@dataclass(frozen=True, eq=False)
class ArrayMetadataV2:
    """The metadata of a v2 array (``.zarray`` plus ``.zattrs``).

    shape : array shape (``()`` for 0-d arrays).
    chunks : chunk shape, same rank as ``shape``, each >= 1.
    dtype : numpy dtype with the byte order of the stored data (``|O`` for
        variable-length objects, which need an object codec among ``filters``).
    compressor : numcodecs configuration (read-only mapping with "id"), or None.
    fill_value : numpy scalar, None (undefined), or for ``|O`` a str / bytes.  Given
        directly, numpy scalars and bytes are cast to ``dtype``; other values are
        read as the JSON form (so "NaN" and base64 strings work, as in .zarray).
    order : "C" or "F", the layout of elements within a chunk.
    filters : tuple of numcodecs configurations, or None.
    dimension_separator : "." (the default) or "/".
    attributes : user attributes (from ``.zattrs``): a read-only mapping whose values are
        the parsed JSON (lists, dicts; not copied or frozen), as zarr-python holds them.
    nczarr_dimrefs : the dimension references of the ``_NCZARR_ARRAY`` key netCDF-C 4.8
        writes in ``.zarray`` (read, never written), or None.

    Constructing one (directly or via ``from_json``) validates everything; the JSON
    forms of ``dtype``, ``fill_value``, ``compressor`` and ``filters`` are accepted
    and normalised.  Invalid values raise MetadataError.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype
    compressor: Mapping[str, Any] | None = None
    fill_value: Any = None
    order: str = "C"
    filters: Sequence[Mapping[str, Any]] | None = None     # (a tuple once constructed)
    dimension_separator: str = "."
    attributes: Mapping[str, Any] = field(default_factory=FrozenDict)
    nczarr_dimrefs: tuple[str, ...] | None = field(default=None, repr=False)

    zarr_format: ClassVar[Literal[2]] = 2
    node_type: ClassVar[Literal["array"]] = "array"
    dimension_names: ClassVar[None] = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        shape = check_int_list("shape", self.shape)
        set_(self, "shape", shape)
        chunks = check_int_list("chunks", self.chunks, minimum=1)
        if len(chunks) != len(shape):
            fail("chunks", list(chunks),
                 f"has {len(chunks)} dimensions but shape {list(shape)} has {len(shape)}")
        set_(self, "chunks", chunks)
        dtype = self.dtype
        if isinstance(dtype, (str, list, tuple)):
            dtype = parse_dtype_v2(thaw(dtype))
        else:
            try:
                dtype = np.dtype(dtype)
            except (TypeError, ValueError) as exc:
                fail("dtype", repr(dtype), f"is not a data type ({exc})")
        dtype_to_json_v2(dtype)  # has a v2 form
        set_(self, "dtype", dtype)
        if self.compressor is not None:
            set_(self, "compressor", _codec(self.compressor))
        filters = self.filters
        if filters is not None:
            filters = _filters(filters)
            set_(self, "filters", filters)
        if dtype.kind == "O" and object_codec_id(filters) is None:
            fail("filters", thaw(filters), f'must include an object codec ({", ".join(OBJECT_CODECS)}) '
                 'for dtype "|O"')
        fill = self.fill_value
        if isinstance(fill, np.ndarray) and fill.ndim == 0:
            fill = fill[()]
        if isinstance(fill, (np.generic, bytes, bytearray)):
            fill = cast_fill_value_v2(fill, dtype, filters)
        else:  # JSON form (numbers, "NaN", base64 strings, [re, im], null)
            fill = parse_fill_value_v2(thaw(fill), dtype, filters)
        set_(self, "fill_value", fill)
        if self.order not in ("C", "F"):
            fail("order", self.order, 'must be "C" or "F"')
        if self.dimension_separator not in (".", "/"):
            fail("dimension_separator", self.dimension_separator, 'must be "." or "/"')
        set_(self, "attributes", _attributes(self.attributes))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        """The chunk shape (``chunks``; named as in v3 metadata)."""
        return self.chunks

    @property
    def data_type(self) -> str | list:
        """The ``dtype`` as .zarray writes it."""
        return dtype_to_json_v2(self.dtype)

    @classmethod
    def from_json(cls, zarray_doc: Mapping | bytes | str, zattrs_doc: Mapping | bytes | str | None = None,
                  path: str = "") -> ArrayMetadataV2:
        """Parse a ``.zarray`` document and, if given, the array's ``.zattrs``
        (bytes, str or parsed dicts).  ``path`` is the node's path, used in error
        messages.  Raises MetadataError for missing or unknown keys and bad values."""
        attributes = attributes_from_json(zattrs_doc, path)
        doc = _load(".zarray", zarray_doc, path)
        with error_context(where(".zarray", path)):
            _check_zarr_format(doc)
            for key in ARRAY_REQUIRED:
                if key not in doc:
                    raise MetadataError(f'"{key}" is missing')
            _ignore_unknown(doc, ARRAY_KEYS, where(".zarray", path))
            return cls(
                shape=doc["shape"],
                chunks=doc["chunks"],
                dtype=parse_dtype_v2(doc["dtype"]),
                compressor=doc["compressor"],
                fill_value=doc["fill_value"],
                order=doc["order"],
                filters=doc["filters"],
                dimension_separator=doc.get("dimension_separator", "."),
                attributes=attributes,
                nczarr_dimrefs=_nczarr_dimrefs(doc.get("_NCZARR_ARRAY")),
            )

    def to_json(self) -> dict[str, Any]:
        """The ``.zarray`` document as a dict, keys in zarr-python 3's order."""
        return {
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": dtype_to_json_v2(self.dtype),
            "fill_value": encode_fill_value_v2(self.fill_value, self.dtype, self.filters),
            "order": self.order,
            "filters": None if self.filters is None else thaw(self.filters),
            "dimension_separator": self.dimension_separator,
            "compressor": None if self.compressor is None else thaw(self.compressor),
            "zarr_format": 2,
        }

    def to_bytes(self) -> bytes:
        """The ``.zarray`` document as UTF-8 JSON bytes (indent 2, as zarr-python)."""
        return dump_json(self.to_json())

    def attributes_to_json(self) -> dict[str, Any]:
        """The ``.zattrs`` document as a dict."""
        return thaw(self.attributes)

    def attributes_to_bytes(self) -> bytes:
        """The ``.zattrs`` document as UTF-8 JSON bytes."""
        return dump_json(self.attributes_to_json())

    def _key(self) -> str:
        return dump_json([self.to_json(), self.attributes_to_json()]).decode()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV2):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def to_dict(self) -> dict[str, Any]:
        """The document as zarr-python's ``metadata.to_dict()`` gives it: the
        .zarray fields (shapes as tuples, a zstd compressor without a false
        "checksum") with the attributes."""
        doc = self.to_json()
        compressor = doc["compressor"]
        if compressor is not None and compressor.get("id") == "zstd" and not compressor.get("checksum", True):
            compressor.pop("checksum")
        return {"shape": tuple(self.shape), "chunks": tuple(self.chunks), "dtype": doc["dtype"],
                "fill_value": doc["fill_value"], "order": self.order, "filters": doc["filters"],
                "dimension_separator": self.dimension_separator, "compressor": compressor,
                "attributes": thaw(self.attributes), "zarr_format": 2}


@dataclass(frozen=True, eq=False)
class GroupMetadataV2:
    """The metadata of a v2 group: ``.zgroup`` (``{"zarr_format": 2}``) plus the
    attributes from ``.zattrs``."""

    attributes: Mapping[str, Any] = field(default_factory=FrozenDict)

    zarr_format: ClassVar[Literal[2]] = 2
    node_type: ClassVar[Literal["group"]] = "group"

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", _attributes(self.attributes))

    @classmethod
    def from_json(cls, zgroup_doc: Mapping | bytes | str, zattrs_doc: Mapping | bytes | str | None = None,
                  path: str = "") -> GroupMetadataV2:
        """Parse a ``.zgroup`` document and, if given, the group's ``.zattrs``.
        Raises MetadataError for a wrong or missing ``zarr_format`` or any other key."""
        attributes = attributes_from_json(zattrs_doc, path)
        doc = _load(".zgroup", zgroup_doc, path)
        with error_context(where(".zgroup", path)):
            _check_zarr_format(doc)
            _ignore_unknown(doc, ("zarr_format",), where(".zgroup", path))
            return cls(attributes=attributes)

    def to_json(self) -> dict[str, Any]:
        """The ``.zgroup`` document as a dict."""
        return {"zarr_format": 2}

    def to_bytes(self) -> bytes:
        """The ``.zgroup`` document as UTF-8 JSON bytes."""
        return dump_json(self.to_json())

    def attributes_to_json(self) -> dict[str, Any]:
        """The ``.zattrs`` document as a dict."""
        return thaw(self.attributes)

    def attributes_to_bytes(self) -> bytes:
        """The ``.zattrs`` document as UTF-8 JSON bytes."""
        return dump_json(self.attributes_to_json())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupMetadataV2):
            return NotImplemented
        return self.attributes == other.attributes

    def __hash__(self) -> int:
        return hash(frozenset(self.attributes))    # (the values are plain JSON, not hashable)

    def to_dict(self) -> dict[str, Any]:
        """The metadata as zarr-python's ``metadata.to_dict()`` gives it."""
        return {"attributes": thaw(self.attributes), "zarr_format": 2, "node_type": "group"}
