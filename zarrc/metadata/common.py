"""Helpers shared by the metadata modules: immutable JSON values, error messages,
extension objects ({"name", "configuration", "must_understand"}).  No I/O."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NoReturn

import numpy as np

from zarrc.errors import ArgumentTypeError, MetadataError


class FrozenDict(Mapping):
    """A read-only, hashable mapping (values must be hashable to hash it)."""

    __slots__ = ("_data", "_hash")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._data = dict(*args, **kwargs)
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def freeze(value: Any) -> Any:
    """A deep immutable copy of a JSON value: objects -> FrozenDict, arrays -> tuple."""
    if isinstance(value, Mapping):
        return FrozenDict((k, freeze(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


# The types of JSON leaves: a list holding only these is copied whole (no walk).
JSON_LEAVES = frozenset((str, int, float, bool, type(None)))


def thaw(value: Any) -> Any:
    """The plain JSON form of a (possibly frozen) value, a copy: mappings -> dict,
    tuples -> list, objects with ``to_json()`` (CodecSpec, DataType, ...) -> their
    JSON form.  A list of plain numbers or strings is copied in one step."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if JSON_LEAVES.issuperset(map(type, value)):
            return list(value)
        return [thaw(v) for v in value]
    return value


def attributes_mapping(value: Mapping) -> FrozenDict:
    """User attributes as metadata holds them: a read-only mapping over a shallow
    copy of ``value`` (O(number of keys)); the values are kept as they are (plain
    JSON lists and dicts once read from a document), as zarr-python keeps them, so
    reading an attribute never copies the document."""
    return value if isinstance(value, FrozenDict) else FrozenDict(value)


def json_default(value: Any) -> Any:
    """``json.dumps(default=...)`` hook: numpy scalars and arrays become Python values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    raise ArgumentTypeError(f"{type(value).__name__} is not JSON serializable")


def describe(value: Any, limit: int = 80) -> str:
    """A short JSON-like rendering of ``value`` for error messages."""
    try:
        text = json.dumps(thaw(value), default=json_default)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def fail(key: str, value: Any, problem: str) -> NoReturn:
    """Raise MetadataError('"key" <value> <problem>')."""
    raise MetadataError(f'"{key}" {describe(value)} {problem}')


@contextmanager
def error_context(prefix: str) -> Iterator[None]:
    """Prefix the message of any MetadataError raised inside the block."""
    try:
        yield
    except MetadataError as exc:
        raise type(exc)(f"{prefix}{exc}") from None     # (the subclass kept: UnknownCodecError...)


def is_int(value: Any) -> bool:
    """True for a JSON integer (a Python int that is not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_object(key: str, value: Any) -> Mapping:
    """``value`` must be a JSON object; raises MetadataError naming ``key``."""
    if not isinstance(value, Mapping):
        fail(key, value, "must be an object")
    return value


def check_int_list(key: str, value: Any, minimum: int = 0) -> tuple[int, ...]:
    """``value`` must be a JSON array of integers >= ``minimum`` (and < 2**63)."""
    if not isinstance(value, (list, tuple)):
        fail(key, value, "must be an array of integers")
    for item in value:
        if not is_int(item) or not minimum <= item < 2**63:
            fail(key, value, f"must be an array of integers >= {minimum}")
    return tuple(value)


# The most dimensions an array may have: numpy's own limit (NPY_MAXDIMS, 64 since
# numpy 2), which bounds zarr-python too: an array of more could not be read into
# a numpy array, and its metadata is refused when opened rather than at the first read.
MAX_DIMS = 64

# The most bytes one chunk may hold decoded: 2**39, 512 GiB.  A chunk (an
# unsharded one, or a shard's innermost chunk) is decoded into one buffer, so one
# larger than any machine's memory could never be read; the bound is far above
# real chunks (KiBs to a few GiBs) and far below int64 overflow, so hostile
# metadata (a chunk_shape of [2**40, 1] bytes, or [2**40, 2**40]) is a
# MetadataError when it is opened, not a MemoryError or an OverflowError at the
# first read.
MAX_CHUNK_BYTES = 1 << 39
# The most bytes one shard may hold decoded: 2**50, 1 PiB.  A shard is read an
# inner chunk at a time (built whole in memory only with nested sharding or codecs
# around sharding_indexed), so it may be far larger than a chunk; the bound keeps
# its offsets and sizes (int64 in the kernels) far from overflowing.
MAX_SHARD_BYTES = 1 << 50


def check_dims(key: str, value: tuple[int, ...]) -> None:
    """Raise MetadataError if ``value`` (a shape) has more than MAX_DIMS dimensions."""
    if len(value) > MAX_DIMS:
        raise MetadataError(f'"{key}" has {len(value)} dimensions, more than the {MAX_DIMS} '
                            f"an array may have (numpy's limit)")


def check_chunk_bytes(key: str, chunk_shape: tuple[int, ...], itemsize: int, shard: bool = False) -> None:
    """Raise MetadataError if a chunk (``shard``: a shard) of ``chunk_shape`` items
    of ``itemsize`` bytes (variable-length items: counted as pointers) holds more
    than MAX_CHUNK_BYTES (MAX_SHARD_BYTES)."""
    nbytes = max(1, itemsize)
    for n in chunk_shape:
        nbytes *= n
    limit, what = (MAX_SHARD_BYTES, "1 PiB) a shard") if shard else (MAX_CHUNK_BYTES, "512 GiB) a chunk")
    if nbytes > limit:
        shape = "[" + ", ".join(map(str, chunk_shape)) + "]"
        raise MetadataError(f'"{key}" {shape} makes {"shards" if shard else "chunks"} of {nbytes} bytes '
                            f"({itemsize}-byte items), more than the {limit} ({what} may hold")


def check_members(key: str, obj: Mapping, allowed: tuple[str, ...]) -> None:
    """Raise MetadataError if ``obj`` has a member not in ``allowed``."""
    for name in obj:
        if name not in allowed:
            fail(key, obj, f'has an unknown member "{name}" (expected {", ".join(allowed)})')


def parse_extension(key: str, value: Any) -> tuple[str, dict, bool]:
    """Split an extension definition (a short-hand name or an object with "name",
    optional "configuration" object and optional "must_understand" boolean) into
    ``(name, configuration, must_understand)``.  Raises MetadataError naming ``key``."""
    if isinstance(value, str):
        return value, {}, True
    if not isinstance(value, Mapping):
        fail(key, value, 'must be a name or an object with a "name"')
    check_members(key, value, ("name", "configuration", "must_understand"))
    name = value.get("name")
    if not isinstance(name, str) or not name:
        fail(key, value, 'must have a string "name"')
    configuration = value.get("configuration", {})
    if not isinstance(configuration, Mapping):
        fail(key, value, '"configuration" must be an object')
    must_understand = value.get("must_understand", True)
    if not isinstance(must_understand, bool):
        fail(key, value, '"must_understand" must be a boolean')
    return name, dict(configuration), must_understand


def is_ignorable(value: Any) -> bool:
    """True for an unknown field the spec lets us ignore: an object with
    ``"must_understand": false``."""
    return isinstance(value, Mapping) and value.get("must_understand") is False
