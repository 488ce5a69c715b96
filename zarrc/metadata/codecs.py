"""The ``codecs`` member of zarr.json: the list parsed, its order checked.

A codec list is parsed into a tuple of :class:`CodecSpec` (name + normalised,
immutable configuration).  The chain must be array->array*, then exactly one
array->bytes, then bytes->bytes* (:func:`check_next`, :func:`check_complete`).

What each codec takes is not written here but beside its class (``zarrc.codecs.<codec>``:
its category, its configuration's checks and normalisation ``parse_spec``, the
members it fills in with zarr-python's values): the codec layer sits above this one,
so each codec class registers itself here (:func:`register_kind`, called by
``zarrc.codecs.registry.register``; name prefixes such as ``numcodecs.<id>`` by
:func:`register_prefix_kind`), and :func:`parse_codecs` asks the registered kind.
``import zarrc`` imports ``zarrc.codecs`` first, so every kind is registered before
any document is read.  What is a chain's and a data type's, not one codec's, stays
here: the order, and the array -> bytes codec of each variable-length data type
(``string``: ``vlen-utf8``, variable-length bytes: ``vlen-bytes``; :func:`default_serializer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from zarrc.errors import MetadataError, UnknownCodecError
from zarrc.metadata.common import (
    FrozenDict,
    check_members,
    describe,
    error_context,
    fail,
    freeze,
    parse_extension,
    thaw,
)
from zarrc.metadata.dtypes import DataType

ARRAY_TO_ARRAY = "array->array"
ARRAY_TO_BYTES = "array->bytes"
BYTES_TO_BYTES = "bytes->bytes"

# the array -> bytes codec of each variable-length data type kind
VLEN_CODECS = {"string": "vlen-utf8", "bytes": "vlen-bytes"}


class CodecKind(Protocol):
    """What this layer needs of a codec name (a codec class of ``zarrc.codecs``
    registered with :func:`register_kind`)."""

    name: str
    category: str
    fixed_size: bool            # output size independent of the data: may encode a shard index
    written_empty: bool         # written with ``"configuration": {}`` when it has none

    def parse_spec(self, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """The configuration checked (MetadataError) and normalised (zarr-python's values
        for members left out) for chunks of ``shape`` and ``data_type`` it receives."""
        ...

    def spec_shape(self, config: Mapping[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of what it hands the next codec (array -> array codecs)."""
        ...

    def spec_data_type(self, config: Mapping[str, Any], data_type: DataType) -> DataType:
        """The data type of what it hands the next codec (array -> array codecs that
        cast: ``cast_value``)."""
        ...


class PrefixKind(Protocol):
    """What this layer needs of the codecs named by a prefix (``numcodecs.<id>``)."""

    def known_category(self, name: str) -> str | None:
        """The category of codec ``name``, or None where the chain's place decides it
        (array -> array before the array -> bytes codec, bytes -> bytes after it; the
        last such codec in a chain without one is its array -> bytes codec)."""
        ...

    def parse_spec(self, name: str, config: Mapping[str, Any], data_type: DataType) -> dict[str, Any]:
        """The configuration checked and normalised (MetadataError)."""
        ...


KINDS: dict[str, CodecKind] = {}
PREFIX_KINDS: dict[str, PrefixKind] = {}


def register_kind(kind: CodecKind) -> None:
    """Make the v3 codec name ``kind.name`` known to :func:`parse_codecs`."""
    KINDS[kind.name] = kind


def register_prefix_kind(prefix: str, kind: PrefixKind) -> None:
    """Codec names starting with ``prefix`` (and longer) are parsed by ``kind``."""
    PREFIX_KINDS[prefix] = kind


def category_of(name: str) -> str | None:
    """The category of the registered v3 codec ``name`` (None: unknown, or a prefixed
    name whose category its place in a chain decides)."""
    kind = KINDS.get(name)
    return kind.category if kind is not None else None


def prefix_kind(name: str) -> PrefixKind | None:
    """The kind of a prefixed codec name (``numcodecs.zlib``), or None."""
    for prefix, kind in PREFIX_KINDS.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            return kind
    return None


@dataclass(frozen=True)
class CodecSpec:
    """One entry of a codec list.

    name : the codec's registered name ("bytes", "blosc", ...).
    configuration : read-only mapping; JSON arrays are tuples, and the sharding
        codec's "codecs" / "index_codecs" are tuples of CodecSpec.
    must_understand : False only for an unknown codec marked
        ``"must_understand": false``, which readers skip.
    role : the category of a prefixed codec (``numcodecs.<id>``: its kind's, or its place's
        in the chain), None for the others (their category is their name's).
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
        return self.role or category_of(self.name)

    def to_json(self) -> dict[str, Any]:
        """The codec object as zarr-python writes it (no "configuration" when empty,
        except for the vlen and numcodecs codecs)."""
        out: dict[str, Any] = {"name": self.name}
        kind = KINDS.get(self.name)
        written = (kind is not None and kind.written_empty) or self.role is not None
        if self.configuration or (self.must_understand and written):
            out["configuration"] = thaw(self.configuration)
        if not self.must_understand:
            out["must_understand"] = False
        return out


def required_members(config: Mapping, names: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """MetadataError unless ``config`` has every member of ``names`` and no member
    outside ``names`` and ``optional`` (for the codecs' ``parse_spec``)."""
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
    last_placed = False         # the last spec's category came from its place (a prefixed name)
    for i, item in enumerate(value):
        with error_context(f"[{i}] "):
            name, config, must_understand = parse_extension("codec", item)
            kind = KINDS.get(name)
            prefixed = prefix_kind(name) if kind is None else None
            if prefixed is not None:
                category = prefixed.known_category(name)
                last_placed = category is None
                if category is None:
                    category = BYTES_TO_BYTES if seen_array_to_bytes else ARRAY_TO_ARRAY
                check_next(name, category, seen_array_to_bytes)
                with error_context(f'"{name}": '):
                    specs.append(CodecSpec(name, freeze(prefixed.parse_spec(name, config, data_type)),
                                           role=category))
                if category == ARRAY_TO_BYTES:
                    seen_array_to_bytes = name
                continue
            last_placed = False
            if kind is None:
                if must_understand:
                    raise UnknownCodecError(f'"name" {describe(name)} is not a supported codec (and is not marked '
                                            '"must_understand": false)')
                specs.append(CodecSpec(name, freeze(config), must_understand=False))
                continue
            check_next(name, kind.category, seen_array_to_bytes)
            with error_context(f'"{name}": '):
                normalised = kind.parse_spec(config, shape, data_type)
            specs.append(CodecSpec(name, freeze(normalised)))
            shape = kind.spec_shape(normalised, shape)
            data_type = kind.spec_data_type(normalised, data_type)
            if kind.category == ARRAY_TO_BYTES:
                seen_array_to_bytes = name
    if not seen_array_to_bytes and last_placed and specs[-1].role == ARRAY_TO_ARRAY:
        # (a prefixed codec of unknown category with nothing after it: it turns the
        # chunk into bytes, as imagecodecs' image codecs do)
        last = specs[-1]
        specs[-1] = CodecSpec(last.name, last.configuration, role=ARRAY_TO_BYTES)
        seen_array_to_bytes = last.name
    check_complete([s.name for s in specs], seen_array_to_bytes)
    return tuple(specs)


# Parsed codec lists, by their JSON's text, chunk shape and data type: a hierarchy of
# thousands of arrays holds few distinct lists, and the specs are immutable.
_PARSED: dict[tuple[str, tuple[int, ...], DataType], tuple[CodecSpec, ...]] = {}
_PARSED_MAX = 256


def parse_codecs_once(value: Any, chunk_shape: tuple[int, ...], data_type: DataType) -> tuple[CodecSpec, ...]:
    """:func:`parse_codecs`, its result kept (for up to ``_PARSED_MAX`` distinct
    lists) and given again for the same JSON (``repr`` of the parsed value: 1,
    1.0 and true differ), chunk shape and data type."""
    key = (repr(value), tuple(chunk_shape), data_type)
    found = _PARSED.get(key)
    if found is None:
        found = parse_codecs(thaw(value), chunk_shape, data_type)     # (a copy: the specs own theirs)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = found
    return found
