"""The ``codecs`` member of zarr.json: parsing, validation and normalisation.

A codec list is parsed into a tuple of :class:`CodecSpec` (name + normalised,
immutable configuration).  The chain must be array->array*, then exactly one
array->bytes, then bytes->bytes*.  Each core codec's configuration is checked
against the representation it receives (shape and data type), e.g. ``transpose``
needs a permutation of the dimensions it sees and ``bytes`` needs ``endian`` for
multi-byte types.  The variable-length data types take exactly their own
array -> bytes codec (``string``: ``vlen-utf8``, variable-length bytes:
``vlen-bytes``), and those codecs no other type.  The configuration kept is the one
zarr-python writes: members left out get zarr-python's values (its codecs' defaults
and what it derives from the data type: blosc ``typesize`` and ``shuffle`` from the
item size, cname "zstd", clevel 5; zstd level 0 and ``checksum`` false; gzip level 5;
sharding's inner and index codecs and ``index_location``), when reading as when
creating, as zarr-python does; ``endian`` dropped for one-byte types, and the vlen
codecs written with an empty ``"configuration": {}``.  (A multi-byte ``bytes``
without ``endian`` is refused when read, as zarr-python 3.4 does; a new array's gets
"little" from ``zarrc.metadata.v3.complete_codecs``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zarrc.errors import MetadataError, UnknownCodecError
from zarrc.metadata.common import (
    FrozenDict,
    check_int_list,
    check_members,
    describe,
    error_context,
    fail,
    freeze,
    is_int,
    parse_extension,
    thaw,
)
from zarrc.metadata.dtypes import CORE_TYPES, DataType

ARRAY_TO_ARRAY = "array->array"
ARRAY_TO_BYTES = "array->bytes"
BYTES_TO_BYTES = "bytes->bytes"

CODEC_CATEGORIES = {
    "transpose": ARRAY_TO_ARRAY,
    "bytes": ARRAY_TO_BYTES,
    "sharding_indexed": ARRAY_TO_BYTES,
    "vlen-utf8": ARRAY_TO_BYTES,
    "vlen-bytes": ARRAY_TO_BYTES,
    "blosc": BYTES_TO_BYTES,
    "gzip": BYTES_TO_BYTES,
    "zstd": BYTES_TO_BYTES,
    "crc32c": BYTES_TO_BYTES,
}
# codecs whose output size does not depend on the data: the only ones allowed in
# a sharding index
FIXED_SIZE_CODECS = ("transpose", "bytes", "crc32c")
BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")      # in the order of blosc's codes 0, 1, 2
ZSTD_LEVELS = (-131072, 22)     # zstd's ZSTD_minCLevel() .. ZSTD_maxCLevel()
# the array -> bytes codec of each variable-length data type kind
VLEN_CODECS = {"string": "vlen-utf8", "bytes": "vlen-bytes"}
# a sharding codec's index codecs when it names none (zarr-python's default)
DEFAULT_INDEX_CODECS = ({"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"})
# codecs written with "configuration": {} when it is empty (as zarr-python writes them)
EMPTY_CONFIGURATION_WRITTEN = ("vlen-utf8", "vlen-bytes")
# numcodecs codecs in v3 arrays: "numcodecs.<id>", run by numcodecs (or natively where zarrc has
# the same format); the categories of zarr-python's wrappers (zarr.codecs.numcodecs).  Any other
# id numcodecs' registry knows is array -> array before the array -> bytes codec and bytes ->
# bytes after it (the last such codec is the array -> bytes one in a chain without one)
NUMCODECS_PREFIX = "numcodecs."
IMAGECODECS_PREFIX = "imagecodecs_"      # imagecodecs' codecs: v3 names and numcodecs ids alike
NUMCODECS_CATEGORIES = {
    **dict.fromkeys(("blosc", "lz4", "zstd", "zlib", "gzip", "bz2", "lzma", "shuffle", "crc32", "crc32c",
                     "adler32", "fletcher32", "jenkins_lookup3"), BYTES_TO_BYTES),
    **dict.fromkeys(("delta", "bitround", "fixedscaleoffset", "quantize", "packbits", "astype"),
                    ARRAY_TO_ARRAY),
    **dict.fromkeys(("pcodec", "zfpy"), ARRAY_TO_BYTES),
}
# configuration members zarr-python fills in from the array's data type when they are missing
# (its wrappers' evolve_from_array_spec): (member, "itemsize" or "dtype")
NUMCODECS_DEFAULTS = {
    "shuffle": ("elementsize", "itemsize"),
    "fixedscaleoffset": ("dtype", "dtype"),
    "quantize": ("dtype", "dtype"),
    "astype": ("decode_dtype", "dtype"),
}


@dataclass(frozen=True)
class CodecSpec:
    """One entry of a codec list.

    name : the codec's registered name ("bytes", "blosc", ...).
    configuration : read-only mapping; JSON arrays are tuples, and the sharding
        codec's "codecs" / "index_codecs" are tuples of CodecSpec.
    must_understand : False only for an unknown codec marked
        ``"must_understand": false``, which readers skip.
    role : the category of a ``numcodecs.<id>`` codec (see NUMCODECS_CATEGORIES), None
        for the others (their category is their name's).
    """

    name: str
    configuration: Mapping[str, Any] = field(default_factory=FrozenDict)
    must_understand: bool = True
    role: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.configuration, FrozenDict):
            object.__setattr__(self, "configuration", freeze(self.configuration))

    @property
    def category(self) -> str | None:
        """"array->array", "array->bytes", "bytes->bytes", or None for unknown codecs."""
        return self.role or CODEC_CATEGORIES.get(self.name)

    def to_json(self) -> dict[str, Any]:
        """The codec object as zarr-python writes it (no "configuration" when empty,
        except for the vlen and numcodecs codecs)."""
        out: dict[str, Any] = {"name": self.name}
        written = self.name in EMPTY_CONFIGURATION_WRITTEN or self.role is not None
        if self.configuration or (self.must_understand and written):
            out["configuration"] = thaw(self.configuration)
        if not self.must_understand:
            out["must_understand"] = False
        return out


def _level(key: str, config: Mapping, low: int, high: int) -> int:
    value: Any = config.get(key)
    if not is_int(value) or not low <= value <= high:
        fail(key, value, f"must be an integer from {low} to {high}")
    return value


def _required(config: Mapping, names: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    check_members("configuration", config, names + optional)
    for name in names:
        if name not in config:
            raise MetadataError(f'"configuration" is missing "{name}"')


def default_serializer(data_type: DataType, complete: bool = False) -> dict[str, Any]:
    """The array -> bytes codec zarr-python chooses for ``data_type``: ``vlen-utf8``
    / ``vlen-bytes`` for the variable-length types, ``bytes`` otherwise (its
    ``endian``, "little" where the type writes one, given with ``complete``, else
    filled in by ``zarrc.metadata.v3.complete_codecs``)."""
    if data_type.kind in VLEN_CODECS:
        return {"name": VLEN_CODECS[data_type.kind], "configuration": {}}
    if complete and data_type.writes_endian:
        return {"name": "bytes", "configuration": {"endian": "little"}}
    return {"name": "bytes"}


def _bytes(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    _required(config, (), ("endian",))
    if data_type.kind in VLEN_CODECS:
        raise MetadataError(f"cannot encode the variable-length data type {data_type.name} "
                            f'(use "{VLEN_CODECS[data_type.kind]}")')
    endian = config.get("endian")
    if "endian" in config and endian not in ("little", "big"):
        fail("endian", endian, 'must be "little" or "big"')
    if endian is None:
        if data_type.has_endianness:
            raise MetadataError(f'"configuration" needs "endian" for data type {data_type.name}')
        return {}
    if data_type.itemsize == 1:
        return {}  # as zarr-python: endian is meaningless for one-byte types
    return {"endian": endian}


def _transpose(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    _required(config, ("order",))
    order = config["order"]
    if (not isinstance(order, (list, tuple)) or not all(is_int(i) for i in order)
            or sorted(order) != list(range(len(shape)))):
        fail("order", order,
             f"must be a permutation of 0..{len(shape) - 1} (the chunk has {len(shape)} dimensions)")
    return {"order": tuple(order)}


def blosc_item_size(data_type: DataType) -> int:
    """The item size blosc shuffles by for ``data_type``: its size, 1 for the
    variable-length types (whose chunks are a byte stream), as zarr-python."""
    return 1 if data_type.variable_length else data_type.itemsize


def blosc_default_shuffle(typesize: int) -> str:
    """blosc's shuffle when none is given (zarr-python's for a ``BloscCodec`` without
    one, numcodecs' AUTOSHUFFLE): "bitshuffle" for one-byte items, else "shuffle"."""
    return "bitshuffle" if typesize == 1 else "shuffle"


def _blosc(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    """blosc's members; those left out get zarr-python's values (``BloscCodec``'s
    defaults, and what it derives from the data type): cname "zstd", clevel 5,
    typesize the item size, shuffle "bitshuffle" for one-byte items else "shuffle",
    blocksize 0."""
    _required(config, (), ("cname", "clevel", "shuffle", "typesize", "blocksize"))
    item_size = blosc_item_size(data_type)
    cname = config.get("cname", "zstd")
    if cname not in BLOSC_CNAMES:
        fail("cname", cname, f"must be one of {', '.join(BLOSC_CNAMES)}")
    clevel = _level("clevel", {"clevel": 5, **config}, 0, 9)
    shuffle = config.get("shuffle")           # (None too: zarr-python's "derive it")
    if shuffle is None:
        shuffle = blosc_default_shuffle(item_size)
    if shuffle not in BLOSC_SHUFFLES:
        fail("shuffle", shuffle, f"must be one of {', '.join(BLOSC_SHUFFLES)}")
    typesize: Any = config.get("typesize")
    if typesize is None:
        typesize = item_size
    if not is_int(typesize) or typesize < 1:
        fail("typesize", typesize, "must be a positive integer")
    blocksize = config.get("blocksize", 0)
    if not is_int(blocksize) or blocksize < 0:
        fail("blocksize", blocksize, "must be a non-negative integer")
    return {"typesize": typesize, "cname": cname, "clevel": clevel, "shuffle": shuffle,
            "blocksize": blocksize}


def _gzip(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    _required(config, (), ("level",))
    return {"level": _level("level", {"level": 5, **config}, 0, 9)}


def _zstd(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    _required(config, (), ("level", "checksum"))
    checksum = config.get("checksum", False)
    if not isinstance(checksum, bool):
        fail("checksum", checksum, "must be a boolean")
    return {"level": _level("level", {"level": 0, **config}, *ZSTD_LEVELS), "checksum": checksum}


def _crc32c(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    _required(config, ())
    return {}


def _vlen(codec: str) -> Any:
    def parse(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
        _required(config, ())
        if VLEN_CODECS.get(data_type.kind) != codec:
            wanted = "string" if codec == "vlen-utf8" else "variable_length_bytes"
            use = VLEN_CODECS.get(data_type.kind, "bytes")
            raise MetadataError(f'encodes only the data type {wanted}, not {data_type.name} (use "{use}")')
        return {}
    return parse


def _sharding(config: Mapping, shape: tuple[int, ...], data_type: DataType) -> dict:
    _required(config, ("chunk_shape",), ("codecs", "index_codecs", "index_location"))
    inner = check_int_list("chunk_shape", config["chunk_shape"], minimum=1)
    if len(inner) != len(shape):
        fail("chunk_shape", config["chunk_shape"],
             f"must have {len(shape)} dimensions like the shard shape {list(shape)}")
    if any(s % c for s, c in zip(shape, inner)):
        fail("chunk_shape", config["chunk_shape"], f"must evenly divide the shard shape {list(shape)}")
    location = config.get("index_location", "end")
    if location not in ("start", "end"):
        fail("index_location", location, 'must be "start" or "end"')
    with error_context('"codecs"'):
        codecs = parse_codecs(config.get("codecs", [default_serializer(data_type, complete=True)]),
                              inner, data_type)
    index_shape = tuple(s // c for s, c in zip(shape, inner)) + (2,)
    with error_context('"index_codecs"'):
        index_codecs = parse_codecs(config.get("index_codecs", DEFAULT_INDEX_CODECS), index_shape,
                                    CORE_TYPES["uint64"])
        for i, codec in enumerate(index_codecs):
            if codec.must_understand and codec.name not in FIXED_SIZE_CODECS:
                raise MetadataError(f'[{i}] "{codec.name}": index codecs must have a fixed-size output')
    return {"chunk_shape": inner, "codecs": codecs, "index_codecs": index_codecs, "index_location": location}


def numcodecs_id(name: str) -> str | None:
    """The numcodecs id of a v3 codec name ``numcodecs.<id>`` (or of imagecodecs' names
    ``imagecodecs_<codec>``, its numcodecs ids too), else None."""
    if name.startswith(NUMCODECS_PREFIX) and len(name) > len(NUMCODECS_PREFIX):
        return name[len(NUMCODECS_PREFIX):]
    if name.startswith(IMAGECODECS_PREFIX) and len(name) > len(IMAGECODECS_PREFIX):
        return name
    return None


def _numcodecs(codec_id: str, config: Mapping, data_type: DataType) -> dict:
    """A ``numcodecs.<id>`` configuration: its members are numcodecs' (checked when the
    codec is built); an "id" member must be the name's; the members zarr-python fills
    in from the array's data type are filled in."""
    out = {k: v for k, v in config.items() if k != "id"}
    if "id" in config and config["id"] != codec_id:
        fail("id", config["id"], f'must be "{codec_id}" (the codec\'s name) or left out')
    default = NUMCODECS_DEFAULTS.get(codec_id)
    if default is not None and out.get(default[0]) is None and data_type.kind not in VLEN_CODECS:
        out[default[0]] = data_type.itemsize if default[1] == "itemsize" else str(data_type.dtype)
    return out


CONFIG_PARSERS = {
    "bytes": _bytes, "transpose": _transpose, "blosc": _blosc, "gzip": _gzip,
    "zstd": _zstd, "crc32c": _crc32c, "sharding_indexed": _sharding,
    "vlen-utf8": _vlen("vlen-utf8"), "vlen-bytes": _vlen("vlen-bytes"),
}


def check_next(name: str, category: str, seen_array_to_bytes: str | None) -> None:
    """The order of a codec chain (array->array*, one array->bytes, bytes->bytes*),
    one codec at a time: MetadataError if codec ``name`` of ``category`` cannot come
    next, after the array -> bytes codec ``seen_array_to_bytes`` (None: none yet).
    Used for spec lists here and for codec objects by ``zarrc.codecs.chain``."""
    if category == ARRAY_TO_ARRAY and seen_array_to_bytes:
        raise MetadataError(f'array -> array codec "{name}" comes after the array -> bytes codec '
                            f'"{seen_array_to_bytes}"')
    if category == ARRAY_TO_BYTES and seen_array_to_bytes:
        raise MetadataError(
            f'"{name}" is a second array -> bytes codec (after "{seen_array_to_bytes}")')
    if category == BYTES_TO_BYTES and not seen_array_to_bytes:
        raise MetadataError(f'bytes -> bytes codec "{name}" comes before any array -> bytes codec')


def check_complete(names: list[str], seen_array_to_bytes: str | None) -> None:
    """MetadataError if the chain ``names`` has no array -> bytes codec."""
    if not seen_array_to_bytes:
        raise MetadataError(f'"codecs" {names} has no array -> bytes codec (e.g. "bytes")')


def parse_codecs(value: Any, chunk_shape: tuple[int, ...], data_type: DataType) -> tuple[CodecSpec, ...]:
    """Parse and validate a codec list for chunks of ``chunk_shape`` and ``data_type``.

    Each entry is a name or ``{"name", "configuration"?, "must_understand"?}``.
    Unknown codecs raise MetadataError unless marked ``"must_understand": false``
    (kept, and ignored when checking the chain order).  Raises MetadataError for a
    chain that is not array->array*, array->bytes, bytes->bytes*, and for bad
    configurations.  Returns the normalised specs.
    """
    if not isinstance(value, (list, tuple)):
        fail("codecs", value, "must be an array of codecs")
    specs: list[CodecSpec] = []
    shape = tuple(chunk_shape)
    seen_array_to_bytes: str | None = None
    for i, item in enumerate(value):
        with error_context(f"[{i}] "):
            name, config, must_understand = parse_extension("codec", item)
            category = CODEC_CATEGORIES.get(name)
            codec_id = numcodecs_id(name)
            if codec_id is not None:
                category = NUMCODECS_CATEGORIES.get(
                    codec_id, BYTES_TO_BYTES if seen_array_to_bytes else ARRAY_TO_ARRAY)
                check_next(name, category, seen_array_to_bytes)
                with error_context(f'"{name}": '):
                    specs.append(CodecSpec(name, freeze(_numcodecs(codec_id, config, data_type)),
                                           role=category))
                if category == ARRAY_TO_BYTES:
                    seen_array_to_bytes = name
                continue
            if category is None:
                if must_understand:
                    raise UnknownCodecError(f'"name" {describe(name)} is not a supported codec (and is not marked '
                                            '"must_understand": false)')
                specs.append(CodecSpec(name, freeze(config), must_understand=False))
                continue
            check_next(name, category, seen_array_to_bytes)
            with error_context(f'"{name}": '):
                normalised = CONFIG_PARSERS[name](config, shape, data_type)
            specs.append(CodecSpec(name, freeze(normalised)))
            if name == "transpose":
                shape = tuple(shape[k] for k in normalised["order"])
            if category == ARRAY_TO_BYTES:
                seen_array_to_bytes = name
    if not seen_array_to_bytes and specs and specs[-1].role == ARRAY_TO_ARRAY \
            and numcodecs_id(specs[-1].name) not in NUMCODECS_CATEGORIES:
        # (an id of numcodecs' registry zarr-python does not wrap, with nothing after it: it
        # turns the chunk into bytes, as imagecodecs' image codecs do)
        last = specs[-1]
        specs[-1] = CodecSpec(last.name, last.configuration, role=ARRAY_TO_BYTES)
        seen_array_to_bytes = last.name
    check_complete([s.name for s in specs], seen_array_to_bytes)
    return tuple(specs)
