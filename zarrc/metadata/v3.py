"""Zarr v3 ``zarr.json`` documents <-> frozen dataclasses (no I/O).

:class:`ArrayMetadataV3` and :class:`GroupMetadataV3` validate every requirement
of the v3 core spec when constructed (``from_json`` or directly), and ``to_json``
writes the document zarr-python writes (keys in the spec's order).  Errors are
MetadataError naming the document, the key and the value, e.g.
``zarr.json of /temperature: "fill_value" 1.5 is not valid for data type int32``.
"""

from __future__ import annotations

import json
import marshal
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from zarrc.errors import MetadataError, ZarrcUserWarning
from zarrc.metadata import rectilinear
from zarrc.metadata.codecs import CodecSpec, default_serializer, parse_codecs, parse_codecs_once
from zarrc.metadata.common import (
    JSON_LEAVES,
    FrozenDict,
    attributes_mapping,
    check_chunk_bytes,
    check_dims,
    check_int_list,
    check_members,
    check_object,
    error_context,
    fail,
    freeze,
    is_ignorable,
    is_int,
    json_default,
    parse_extension,
    thaw,
)
from zarrc.metadata.dtypes import DataType, as_data_type, parse_data_type
from zarrc.metadata.fill_value import FillValue, cast_fill_value, encode_fill_value, parse_fill_value

ARRAY_KEYS = ("zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
              "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names")
ARRAY_REQUIRED = ARRAY_KEYS[:8]
GROUP_KEYS = ("zarr_format", "node_type", "attributes", "consolidated_metadata")
DEFAULT_SEPARATORS = {"default": "/", "v2": "."}


def load_json(doc: Mapping | bytes | str) -> Mapping:
    """The top-level object of a zarr.json document (bytes, str or an already
    parsed dict).  Raises MetadataError for invalid JSON, a non-object, or a
    document of more than MAX_DOCUMENT_BYTES."""
    if isinstance(doc, (bytes, bytearray, memoryview, str)):
        size = len(doc) if not isinstance(doc, memoryview) else doc.nbytes
        if size > MAX_DOCUMENT_BYTES:
            raise MetadataError(f"holds {size} bytes, more than the {MAX_DOCUMENT_BYTES} a metadata "
                                f"document may hold (its attributes are too large)")
        try:
            doc = json.loads(bytes(doc) if not isinstance(doc, str) else doc)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise MetadataError(f"is not valid JSON: {exc}") from None
    if not isinstance(doc, Mapping):
        raise MetadataError(f"must hold a JSON object, not {type(doc).__name__}")
    return doc


# Deeper documents are refused up front, whatever the interpreter's recursion limit.
MAX_NESTING = 200
# Larger documents are refused before they are parsed: 1 GiB.  A document is parsed
# whole into Python objects (several times its size), so this bounds what a node's
# metadata (its attributes, chiefly) can make zarrc allocate; real documents are
# KiBs, consolidated metadata of a hundred thousand arrays some hundreds of MiB.
MAX_DOCUMENT_BYTES = 1 << 30


def nesting_depth(value: Any) -> int:
    """How deeply JSON arrays/objects nest in ``value`` (iterative: no recursion;
    level by level, each level's values gathered by C-level extends), up to the
    first level beyond MAX_NESTING."""
    depth = 0
    level = [value]
    while level and depth <= MAX_NESTING:
        below: list[Any] = []
        containers = False
        for item in level:
            kind = type(item)
            if kind in JSON_LEAVES:
                continue
            if kind is dict or (kind is not list and kind is not tuple and isinstance(item, Mapping)):
                below += item.values()
                containers = True
            elif kind is list or kind is tuple or isinstance(item, (list, tuple)):
                below += item
                containers = True
        if not containers:
            break
        depth += 1
        level = below
    return depth


def where(path: str) -> str:
    """The prefix of error messages about the document of the node at ``path``."""
    return f"zarr.json of /{path.strip('/')}: "


@dataclass(frozen=True)
class ChunkKeyEncodingSpec:
    """``chunk_key_encoding``: name "default" (separator "/" or ".") or "v2"."""

    name: str = "default"
    separator: str = "/"

    def __post_init__(self) -> None:
        if self.name not in DEFAULT_SEPARATORS:
            fail("chunk_key_encoding", self.name, 'is not a supported chunk key encoding ("default" or "v2")')
        if self.separator not in ("/", "."):
            fail("separator", self.separator, 'must be "/" or "."')

    @classmethod
    def from_json(cls, value: Any) -> ChunkKeyEncodingSpec:
        """Parse the JSON value (a name or an extension object).  Raises MetadataError."""
        name, config, _ = parse_extension("chunk_key_encoding", value)
        if name not in DEFAULT_SEPARATORS:
            fail("chunk_key_encoding", value, 'is not a supported chunk key encoding ("default" or "v2")')
        check_members("chunk_key_encoding", config, ("separator",))
        separator = config.get("separator", DEFAULT_SEPARATORS[name])
        if separator not in ("/", "."):
            fail("chunk_key_encoding", value, 'has a bad "separator" (must be "/" or ".")')
        return cls(name, separator)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"separator": self.separator}}


def parse_chunk_grid(value: Any, shape: Sequence[int] = ()
                     ) -> tuple[tuple[int, ...], tuple[rectilinear.DimEdges, ...] | None]:
    """The chunk shape of a ``regular`` chunk grid and None, or of a ``rectilinear``
    one its first chunk's shape and its edges (``metadata.rectilinear.parse``, over
    an array of ``shape``).  Other grids raise MetadataError."""
    name, config, _ = parse_extension("chunk_grid", value)
    if name == "rectilinear":
        edges = rectilinear.parse(config, shape)
        return rectilinear.representative(edges), edges
    if name != "regular":
        fail("chunk_grid", value, 'is not supported (only the "regular" and "rectilinear" chunk grids are)')
    check_members("chunk_grid", config, ("chunk_shape",))
    if "chunk_shape" not in config:
        fail("chunk_grid", value, 'needs "configuration": {"chunk_shape": [...]}')
    return check_int_list("chunk_shape", config["chunk_shape"]), None


def _chunk_edges(edges: Any, shape: tuple[int, ...]) -> tuple[rectilinear.DimEdges, ...]:
    """A rectilinear grid's edges given to the constructor, checked as the JSON is."""
    if not isinstance(edges, (list, tuple)) or len(edges) != len(shape):
        fail("chunk_grid.configuration.chunk_shapes", edges,
             f"must have one entry per dimension of shape {list(shape)}")
    parsed = tuple(e if isinstance(e, int) and not isinstance(e, bool) else tuple(e) for e in edges)
    return rectilinear.check_cover(tuple(rectilinear.parse_dim(list(e) if isinstance(e, tuple) else e, d)
                                         for d, e in enumerate(parsed)), shape)


def _check_header(doc: Mapping, node_type: str) -> None:
    if "zarr_format" not in doc:
        raise MetadataError('"zarr_format" is missing')
    if not is_int(doc["zarr_format"]) or doc["zarr_format"] != 3:
        fail("zarr_format", doc["zarr_format"], "must be 3")
    if "node_type" not in doc:
        raise MetadataError('"node_type" is missing')
    if doc["node_type"] != node_type:
        fail("node_type", doc["node_type"], f'must be "{node_type}" here')


def _extra_fields(doc: Mapping, known: tuple[str, ...]) -> FrozenDict:
    extra = {}
    for key, value in doc.items():
        if key not in known:
            if not is_ignorable(value):
                fail(key, value, 'is not a known field (unknown fields need "must_understand": false)')
            extra[key] = value
    return freeze(extra)


def _attributes(value: Any) -> FrozenDict:
    return attributes_mapping(check_object("attributes", value))


@dataclass(frozen=True, eq=False)
class ArrayMetadataV3:
    """The metadata of a v3 array.

    shape : array shape (zero-length dimensions allowed; ``()`` for 0-d arrays).
    data_type : DataType.
    chunk_shape : shape of the regular grid's chunks, same rank as ``shape``
        (each >= 1, or 0 where the array dimension is 0).
    chunk_key_encoding : ChunkKeyEncodingSpec.
    fill_value : numpy scalar of ``data_type.dtype`` (for fixed-length strings and
        null-terminated bytes a np.str_ / np.bytes_, of their own length); a ``str``
        for "string" and ``bytes`` for variable-length bytes (whose dtype is ``object``).
    codecs : tuple of normalised CodecSpec.
    attributes : user attributes: a read-only mapping whose values are the parsed JSON
        (lists, dicts; not copied or frozen), as zarr-python holds them.
    dimension_names : None, or one str / None per dimension.
    storage_transformers : kept ``"must_understand": false`` transformers (others
        are unsupported and raise).
    extra_fields : top-level ``"must_understand": false`` fields, kept verbatim.

    Constructing one (directly, or via ``from_json``) validates everything and
    normalises JSON forms of the fields; invalid values raise MetadataError.
    """

    shape: tuple[int, ...]
    data_type: DataType
    chunk_shape: tuple[int, ...]
    chunk_key_encoding: ChunkKeyEncodingSpec
    fill_value: FillValue
    codecs: tuple[CodecSpec, ...]
    attributes: Mapping[str, Any] = field(default_factory=FrozenDict)
    dimension_names: tuple[str | None, ...] | None = None
    storage_transformers: tuple[Mapping[str, Any], ...] = ()
    extra_fields: Mapping[str, Any] = field(default_factory=FrozenDict)
    # a rectilinear chunk grid's edges, one entry per dimension (metadata.rectilinear);
    # None for the regular grid.  ``chunk_shape`` is then the first chunk's shape.
    chunk_edges: tuple[rectilinear.DimEdges, ...] | None = None

    zarr_format: ClassVar[Literal[3]] = 3
    node_type: ClassVar[Literal["array"]] = "array"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        shape = check_int_list("shape", self.shape)
        check_dims("shape", shape)
        set_(self, "shape", shape)
        data_type = self.data_type
        if not isinstance(data_type, DataType):
            data_type = parse_data_type(data_type)
        set_(self, "data_type", data_type)
        chunks = check_int_list("chunk_shape", self.chunk_shape)
        if len(chunks) != len(shape):
            fail("chunk_shape", list(chunks),
                 f"has {len(chunks)} dimensions but shape {list(shape)} has {len(shape)}")
        if 0 in chunks and any(c == 0 and s != 0 for s, c in zip(shape, chunks)):
            fail("chunk_shape", list(chunks),
                 f"has a zero chunk length along a non-empty dimension of {list(shape)}")
        set_(self, "chunk_shape", chunks)
        if self.chunk_edges is not None:
            set_(self, "chunk_edges", _chunk_edges(self.chunk_edges, shape))
            largest = tuple(max(rectilinear.unique_edges(e), default=0) for e in self.chunk_edges)
            grid_key = "chunk_grid.configuration.chunk_shapes"
        else:
            largest, grid_key = chunks, "chunk_grid.configuration.chunk_shape"
        cke = self.chunk_key_encoding
        if not isinstance(cke, ChunkKeyEncodingSpec):
            set_(self, "chunk_key_encoding", ChunkKeyEncodingSpec.from_json(cke))
        fill = self.fill_value
        if data_type.kind == "bytes" and isinstance(fill, (bytes, bytearray)):
            set_(self, "fill_value", bytes(fill))  # already the value (its JSON form is base64)
        elif data_type.kind == "null_bytes" and isinstance(fill, (bytes, bytearray)):
            set_(self, "fill_value", np.bytes_(fill))  # likewise
        elif not (isinstance(fill, np.generic) and fill.dtype == data_type.dtype):
            set_(self, "fill_value", parse_fill_value(thaw(fill), data_type))
        with error_context('"codecs"'):
            codecs: Any = self.codecs
            if type(codecs) is not list or not all(type(c) is dict or type(c) is str for c in codecs):
                codecs = thaw(codecs)       # (objects and frozen specs to JSON; parsed JSON as it is)
            set_(self, "codecs", parse_codecs_once(codecs, chunks, data_type))
            if self.chunk_edges is not None:       # (each chunk shape must suit the codecs)
                for d, e in enumerate(self.chunk_edges):
                    for n in rectilinear.unique_edges(e)[1:]:
                        parse_codecs([c.to_json() for c in self.codecs], chunks[:d] + (n,) + chunks[d + 1:],
                                     data_type)
        _check_chunk_sizes(grid_key, largest, self.codecs, data_type.dtype.itemsize)
        set_(self, "attributes", _attributes(self.attributes))
        names = self.dimension_names
        if names is not None:
            if (not isinstance(names, (list, tuple)) or len(names) != len(shape)
                    or not all(n is None or isinstance(n, str) for n in names)):
                fail("dimension_names", names, f"must be an array of {len(shape)} strings or nulls")
            set_(self, "dimension_names", tuple(names))
        set_(self, "storage_transformers", _storage_transformers(self.storage_transformers))
        set_(self, "extra_fields", _extra_fields(self.extra_fields, ARRAY_KEYS))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the array's elements (native byte order)."""
        return self.data_type.dtype

    @classmethod
    def from_json(cls, doc: Mapping | bytes | str, path: str = "") -> ArrayMetadataV3:
        """Parse an array's zarr.json (bytes, str or parsed dict).  ``path`` is the
        node's path, used in error messages.  Raises MetadataError.

        A parsed document whose members but its attributes are those of one parsed
        before (``_TEMPLATES``) shares that one's checked members: only its
        attributes are checked (a hierarchy of thousands of arrays holds few
        distinct ones)."""
        text = None
        if type(doc) is dict and cls is ArrayMetadataV3:
            text = _template_key(doc)
            if text is not None:
                template = _TEMPLATES.get(text)
                if template is not None:
                    found = template._with_attributes(doc.get("attributes", _NO_ATTRIBUTES))
                    if found is not None:
                        return found
        with error_context(where(path)):
            doc = load_json(doc)
            _check_header(doc, "array")
            if "codecs" not in doc:
                doc = _without_codecs(doc, path)
            for key in ARRAY_REQUIRED:
                if key not in doc:
                    raise MetadataError(f'"{key}" is missing')
            if nesting_depth(doc) > MAX_NESTING:
                raise MetadataError(f"is nested too deeply (more than {MAX_NESTING} levels)")
            try:
                parsed = cls._from_parsed(doc)
            except RecursionError:
                raise MetadataError("is nested too deeply") from None
        if text is not None:
            if len(_TEMPLATES) >= _TEMPLATES_MAX:
                _TEMPLATES.clear()
            _TEMPLATES[text] = parsed
        return parsed

    def _with_attributes(self, attributes: Any) -> ArrayMetadataV3 | None:
        """This metadata with ``attributes`` (a document's JSON object) instead of its
        own, or None if they need ``from_json``'s checks (not an object, or nested
        too deeply: its error)."""
        if type(attributes) is not dict or nesting_depth(attributes) >= MAX_NESTING:
            return None
        copy = object.__new__(ArrayMetadataV3)
        members = copy.__dict__
        members.update(self.__dict__)
        members["attributes"] = FrozenDict(attributes)
        return copy

    @classmethod
    def _from_parsed(cls, doc: Mapping) -> ArrayMetadataV3:
        shape = check_int_list("shape", doc["shape"])
        chunk_shape, edges = parse_chunk_grid(doc["chunk_grid"], shape)
        return cls(
            shape=shape, chunk_edges=edges,
            data_type=parse_data_type(doc["data_type"]),
            chunk_shape=chunk_shape,
            chunk_key_encoding=ChunkKeyEncodingSpec.from_json(doc["chunk_key_encoding"]),
            fill_value=doc["fill_value"],
            codecs=doc["codecs"],
            attributes=doc.get("attributes", {}),
            dimension_names=doc.get("dimension_names"),
            storage_transformers=doc.get("storage_transformers", ()),
            extra_fields={k: v for k, v in doc.items() if k not in ARRAY_KEYS},
        )

    @classmethod
    def create(cls, shape: Sequence[int], dtype: Any, chunk_shape: Sequence[int], *,
               fill_value: Any = None, codecs: Sequence[Any] | None = None,
               chunk_key_encoding: Any = "default", attributes: Mapping | None = None,
               dimension_names: Sequence[str | None] | None = None,
               chunk_edges: Sequence[Any] | None = None) -> ArrayMetadataV3:
        """Metadata for a new array from user arguments.

        ``dtype`` is anything ``as_data_type`` accepts (numpy dtypes, "<f4", "int32");
        ``fill_value`` anything ``cast_fill_value`` accepts (None -> zero).  ``codecs``
        are names, codec objects (JSON dicts, CodecSpec, or objects with ``to_dict()``);
        None means just the data type's serializer (``bytes``; ``vlen-utf8`` /
        ``vlen-bytes`` for the variable-length types); values the spec lets an
        implementation choose are filled in and recorded (``bytes`` endian "little",
        blosc ``typesize`` = item size, 1 for variable-length types).  Raises
        MetadataError.
        """
        data_type = as_data_type(dtype)
        if codecs is None:
            codecs = [default_serializer(data_type)]
        return cls(
            shape=tuple(shape), data_type=data_type, chunk_shape=tuple(chunk_shape),
            chunk_key_encoding=chunk_key_encoding,
            fill_value=cast_fill_value(fill_value, data_type),
            # __post_init__ checks and normalises these (to tuples of CodecSpec, of names)
            codecs=complete_codecs(codecs, data_type),  # type: ignore[arg-type]
            attributes=attributes or {}, dimension_names=dimension_names,  # type: ignore[arg-type]
            chunk_edges=None if chunk_edges is None else tuple(chunk_edges),
        )

    def to_json(self) -> dict[str, Any]:
        """The zarr.json document as a dict (keys in the spec's order)."""
        doc: dict[str, Any] = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": self.chunk_grid_json(),
            "chunk_key_encoding": self.chunk_key_encoding.to_json(),
            "fill_value": encode_fill_value(self.fill_value, self.data_type),
            "codecs": [c.to_json() for c in self.codecs],
            "attributes": thaw(self.attributes),
            "storage_transformers": thaw(self.storage_transformers),
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        doc.update(thaw(self.extra_fields))
        return doc

    def chunk_grid_json(self) -> dict[str, Any]:
        """The ``chunk_grid`` object of the document."""
        if self.chunk_edges is not None:
            return rectilinear.to_json(self.chunk_edges)
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}

    def to_bytes(self) -> bytes:
        """The zarr.json document as UTF-8 JSON bytes (indent 2, as zarr-python)."""
        return dump_json(self.to_json())

    def _key(self) -> tuple:
        fill = self.fill_value
        fill_key = fill.tobytes() if isinstance(fill, np.generic) else fill  # str / bytes
        return (self.shape, self.data_type, self.chunk_shape, self.chunk_edges, self.chunk_key_encoding,
                fill_key, self.codecs, self.dimension_names, self.storage_transformers,
                self.extra_fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayMetadataV3):
            return NotImplemented
        return self._key() == other._key() and self.attributes == other.attributes

    def __hash__(self) -> int:
        # the attributes' names only: their values are plain JSON (lists are not hashable)
        return hash((self._key(), frozenset(self.attributes)))

    def to_dict(self) -> dict[str, Any]:
        """The document as zarr-python's ``metadata.to_dict()`` gives it: JSON arrays
        as tuples (but the attributes as stored), no ``dimension_names`` when
        there are none."""
        doc = self.to_json()
        out = {key: as_tuples(doc[key]) for key in ARRAY_KEYS[2:8]}
        out["attributes"] = doc["attributes"]
        if self.dimension_names is not None:
            out["dimension_names"] = tuple(self.dimension_names)
        out.update(zarr_format=3, node_type="array", storage_transformers=as_tuples(doc["storage_transformers"]))
        out.update(thaw(self.extra_fields))
        return out


# Parsed array documents, by the serialised form (``marshal``'s version 2, which has
# no references between objects: equal JSON values give equal bytes, and 1, 1.0 and
# true differ) of their members but "attributes" (for up to ``_TEMPLATES_MAX``
# distinct ones, each shorter than ``_TEMPLATE_BYTES``); every member of the
# metadata is immutable but the attributes, which each node holds its own of.
_TEMPLATES: dict[bytes, ArrayMetadataV3] = {}
_TEMPLATES_MAX = 256
_TEMPLATE_BYTES = 4096
_NO_ATTRIBUTES: dict = {}


def _template_key(doc: dict) -> bytes | None:
    """``_TEMPLATES``' key of a parsed array document, or None (one without
    ``codecs``, which warns when parsed; one holding values JSON has not, or too
    deep or too long to keep)."""
    if "codecs" not in doc:
        return None
    try:
        key = marshal.dumps([item for item in doc.items() if item[0] != "attributes"], 2)
    except (ValueError, RecursionError):
        return None
    return key if len(key) <= _TEMPLATE_BYTES else None


def _check_chunk_sizes(key: str, chunk_shape: tuple[int, ...], codecs: Any, itemsize: int) -> None:
    """Raise MetadataError if the chunks of ``chunk_shape`` (shards, if ``codecs``
    hold a sharding codec), or the inner chunks of each level of sharding, are too
    large to hold (common.check_chunk_bytes)."""
    while True:
        sharding = next((c for c in codecs if c.name == "sharding_indexed"), None)
        check_chunk_bytes(key, chunk_shape, itemsize, shard=sharding is not None)
        if sharding is None or not isinstance(sharding.configuration.get("chunk_shape"), tuple):
            return
        key = "codecs.sharding_indexed.configuration.chunk_shape"
        inner = sharding.configuration["chunk_shape"]
        if len(inner) == len(chunk_shape) and all(i > 0 for i in inner):
            # the shard index is decoded into one buffer, as a chunk: 16 bytes per inner chunk
            per_shard = tuple(-(-s // i) for s, i in zip(chunk_shape, inner))
            check_chunk_bytes(key + " (inner chunks per shard, each a 16-byte index entry)", per_shard, 16)
        chunk_shape = inner
        codecs = sharding.configuration.get("codecs", ())


def as_tuples(value: Any) -> Any:
    """``value`` (JSON) with every array a tuple, as zarr-python's ``to_dict`` has them."""
    if isinstance(value, (list, tuple)):
        return tuple(as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: as_tuples(v) for k, v in value.items()}
    return value


def _without_codecs(doc: Mapping, path: str) -> Mapping:
    """An array document with no ``codecs`` (GDAL's older v3 writer): read as a
    plain little-endian ``bytes`` codec, with a warning."""
    warnings.warn(f'{where(path)}"codecs" is missing: read as [{{"name": "bytes", '
                  '"configuration": {"endian": "little"}}]', ZarrcUserWarning, stacklevel=4)
    return {**doc, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}


def _storage_transformers(value: Any) -> tuple[FrozenDict, ...]:
    if not isinstance(value, (list, tuple)):
        fail("storage_transformers", value, "must be an array")
    kept = []
    for item in thaw(value):
        _, _, must_understand = parse_extension("storage_transformers", item)
        if must_understand:
            fail("storage_transformers", item, "is not supported (storage transformers are not implemented)")
        kept.append(freeze(item))
    return tuple(kept)


def codec_json(codec: Any) -> Any:
    """A codec the user gave (a name, a spec dict, or an object with ``to_dict()``)
    as JSON.  An object's ``to_dict()`` is taken without the options it leaves for
    the array to choose, so that the parser fills them from the data type as
    zarr-python's ``evolve_from_array_spec`` does: those zarr-python's codec objects
    name in ``_tunable_attrs`` (``BloscCodec``'s typesize and shuffle when not given),
    and in a sharding codec object, its inner and index codecs, each converted so."""
    if isinstance(codec, (str, Mapping)) or not hasattr(codec, "to_dict"):
        return thaw(codec)
    doc = thaw(codec.to_dict())
    config = doc.get("configuration") if isinstance(doc, dict) else None
    if not isinstance(config, dict):
        return doc
    for option in getattr(codec, "_tunable_attrs", None) or ():
        config.pop(option, None)
    for member in ("codecs", "index_codecs"):
        inner = getattr(codec, member, None)
        if member in config and isinstance(inner, (list, tuple)) \
                and all(hasattr(c, "to_dict") for c in inner):
            config[member] = [codec_json(c) for c in inner]
    return doc


def complete_codecs(codecs: Sequence[Any], data_type: DataType) -> list[Any]:
    """JSON codec list from user input (``codec_json``) with the ``bytes`` codec's
    ``endian`` a new array records: "little" for multi-byte types and structs with a
    multi-byte field, dropped for types without byte order, recursively inside
    ``sharding_indexed``.  (The other members left out, blosc's typesize and shuffle
    among them, are filled in by the parser, ``zarrc.metadata.codecs``.)"""
    if isinstance(codecs, (str, Mapping)) or hasattr(codecs, "to_dict"):
        codecs = [codecs]
    out = []
    for codec in codecs:
        codec = codec_json(codec)
        if isinstance(codec, str):
            codec = {"name": codec}
        if isinstance(codec, dict) and isinstance(codec.get("configuration", {}), dict):
            codec = dict(codec)
            config = dict(codec.get("configuration", {}))
            name = codec.get("name")
            if name == "bytes" and "endian" not in config and data_type.writes_endian:
                config["endian"] = "little"
            elif name == "bytes" and not data_type.writes_endian:
                config.pop("endian", None)      # as zarr-python: bytes and raw bytes have no byte order
            elif name == "sharding_indexed" and isinstance(config.get("codecs", []), (list, tuple)):
                config["codecs"] = complete_codecs(config.get("codecs", [default_serializer(data_type)]),
                                                   data_type)
            if config:
                codec["configuration"] = config
            elif name == "bytes":
                codec.pop("configuration", None)
        out.append(codec)
    return out


@dataclass(frozen=True, eq=False)
class GroupMetadataV3:
    """The metadata of a v3 group.

    attributes : user attributes: a read-only mapping whose values are the parsed JSON
        (lists, dicts; not copied or frozen), as zarr-python holds them.
    consolidated_metadata : the raw ``consolidated_metadata`` member, or None: a
        read-only mapping over the parsed JSON (its entries not copied or frozen, so
        a document of thousands of nodes is held at no cost beyond its parse);
        interpreted by ``zarrc.metadata.consolidated`` (each entry parsed when a
        node is first looked up).
    extra_fields : other top-level ``"must_understand": false`` fields, kept verbatim.
    """

    attributes: Mapping[str, Any] = field(default_factory=FrozenDict)
    consolidated_metadata: Mapping[str, Any] | None = None
    extra_fields: Mapping[str, Any] = field(default_factory=FrozenDict)
    # a rectilinear chunk grid's edges, one entry per dimension (metadata.rectilinear);
    # None for the regular grid.  ``chunk_shape`` is then the first chunk's shape.
    chunk_edges: tuple[rectilinear.DimEdges, ...] | None = None

    zarr_format: ClassVar[Literal[3]] = 3
    node_type: ClassVar[Literal["group"]] = "group"

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", _attributes(self.attributes))
        if self.consolidated_metadata is not None:
            consolidated = check_object("consolidated_metadata", self.consolidated_metadata)
            object.__setattr__(self, "consolidated_metadata", attributes_mapping(consolidated))
        object.__setattr__(self, "extra_fields", _extra_fields(self.extra_fields, GROUP_KEYS))

    @classmethod
    def from_json(cls, doc: Mapping | bytes | str, path: str = "") -> GroupMetadataV3:
        """Parse a group's zarr.json (bytes, str or parsed dict).  Raises MetadataError."""
        with error_context(where(path)):
            doc = load_json(doc)
            _check_header(doc, "group")
            return cls(attributes=doc.get("attributes", {}),
                       consolidated_metadata=doc.get("consolidated_metadata"),
                       extra_fields={k: v for k, v in doc.items() if k not in GROUP_KEYS})

    def to_json(self) -> dict[str, Any]:
        """The zarr.json document as a dict."""
        doc: dict[str, Any] = {"zarr_format": 3, "node_type": "group", "attributes": thaw(self.attributes)}
        if self.consolidated_metadata is not None:
            doc["consolidated_metadata"] = thaw(self.consolidated_metadata)
        doc.update(thaw(self.extra_fields))
        return doc

    def to_bytes(self) -> bytes:
        """The zarr.json document as UTF-8 JSON bytes."""
        return dump_json(self.to_json())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupMetadataV3):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((frozenset(self.attributes), self.consolidated_metadata is None, self.extra_fields))

    def to_dict(self) -> dict[str, Any]:
        """The document as zarr-python's ``metadata.to_dict()`` gives it: with
        consolidated metadata, each node's ``to_dict()`` (shallow paths first, then
        by case-folded path)."""
        out: dict[str, Any] = {"attributes": thaw(self.attributes), "zarr_format": 3, "node_type": "group"}
        out.update(thaw(self.extra_fields))
        member = self.consolidated_metadata
        if member is not None:
            entries = member.get("metadata") or {}
            order = sorted(entries, key=lambda k: (k.count("/"), unicodedata.normalize("NFKC", k).casefold()))
            out["consolidated_metadata"] = {
                "kind": member.get("kind"), "must_understand": member.get("must_understand", False),
                "metadata": {k: metadata_from_json(thaw(entries[k]), k).to_dict() for k in order}}
        return out


def dump_json(doc: Any) -> bytes:
    """A zarr.json document (or a v2 one) as UTF-8 JSON bytes, indented as zarr-python writes it."""
    return json.dumps(doc, indent=2, allow_nan=True, default=json_default).encode()


def metadata_from_json(doc: Mapping | bytes | str, path: str = "") -> ArrayMetadataV3 | GroupMetadataV3:
    """Parse a zarr.json document of either node type.  Raises MetadataError."""
    if type(doc) is dict:           # (parsed: no checks of the text)
        node_type = doc.get("node_type")
        if node_type == "array":
            return ArrayMetadataV3.from_json(doc, path)
        if node_type == "group":
            return GroupMetadataV3.from_json(doc, path)
    with error_context(where(path)):
        parsed = load_json(doc)
        node_type = parsed.get("node_type")
        if node_type not in ("array", "group"):
            _check_header(parsed, "array or group")
    if node_type == "array":
        return ArrayMetadataV3.from_json(parsed, path)
    return GroupMetadataV3.from_json(parsed, path)
