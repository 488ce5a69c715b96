"""numcodecs' codecs in v3 arrays: ``numcodecs.<id>`` (as zarr-python names them, in
``zarr.codecs.numcodecs``; ``numcodecs.zarr3`` before it), for any id numcodecs'
registry can build (imagecodecs' too, when it is installed and registers them).

Where zarrc has a kernel for the same format (``zlib``, ``gzip``, ``zstd``,
``blosc``, and ``crc32c`` with its checksum at the end, numcodecs' default) the
codec's ``native_step`` is that kernel's, so the array runs on the native engine;
the others are run by the numcodecs object, whole chunks on the engine's Python
path (numcodecs' C codecs release the GIL while the workers run them).  The
categories are zarr-python's (:data:`NUMCODECS_CATEGORIES`); array -> array codecs
give the data type and shape they encode to (:meth:`NumcodecsCodec.encoded`).

The spec side of these names (their category, their configuration's normalisation)
is here too, registered with the spec parser as the kind of the ``numcodecs.`` and
``imagecodecs_`` prefixes (:class:`NumcodecsKind`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from zarrc.codecs._base import Codec, NativeStep
from zarrc.codecs.numcodecs_compat import call_codec, decoder_of, native_codec, numcodecs_codec
from zarrc.codecs.registry import register_prefix
from zarrc.errors import CodecError, MetadataError, UnknownCodecError
from zarrc.metadata.codecs import (
    ARRAY_TO_ARRAY,
    ARRAY_TO_BYTES,
    BYTES_TO_BYTES,
    VLEN_CODECS,
    register_prefix_kind,
)
from zarrc.metadata.common import fail, thaw
from zarrc.metadata.dtypes import DataType

NUMCODECS_PREFIX = "numcodecs."
IMAGECODECS_PREFIX = "imagecodecs_"      # imagecodecs' codecs: v3 names and numcodecs ids alike
# the categories of zarr-python's wrappers (zarr.codecs.numcodecs).  Any other id numcodecs'
# registry knows is array -> array before the array -> bytes codec and bytes -> bytes after
# it (the last such codec is the array -> bytes one in a chain without one)
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


def numcodecs_id(name: str) -> str | None:
    """The numcodecs id of a v3 codec name ``numcodecs.<id>`` (or of imagecodecs' names
    ``imagecodecs_<codec>``, its numcodecs ids too), else None."""
    if name.startswith(NUMCODECS_PREFIX) and len(name) > len(NUMCODECS_PREFIX):
        return name[len(NUMCODECS_PREFIX):]
    if name.startswith(IMAGECODECS_PREFIX) and len(name) > len(IMAGECODECS_PREFIX):
        return name
    return None


class NumcodecsKind:
    """The spec parser's kind of the ``numcodecs.<id>`` / ``imagecodecs_<codec>`` names
    (``zarrc.metadata.codecs.PrefixKind``)."""

    def known_category(self, name: str) -> str | None:
        """zarr-python's category of the id (None: not one it wraps)."""
        return NUMCODECS_CATEGORIES.get(numcodecs_id(name) or "")

    def parse_spec(self, name: str, config: Mapping[str, Any], data_type: DataType) -> dict[str, Any]:
        """Its members are numcodecs' (checked when the codec is built); an "id" member
        must be the name's; the members zarr-python fills in from the array's data type
        are filled in."""
        codec_id = numcodecs_id(name)
        out = {k: v for k, v in config.items() if k != "id"}
        if "id" in config and config["id"] != codec_id:
            fail("id", config["id"], f'must be "{codec_id}" (the codec\'s name) or left out')
        default = NUMCODECS_DEFAULTS.get(codec_id or "")
        if default is not None and out.get(default[0]) is None and data_type.kind not in VLEN_CODECS:
            out[default[0]] = data_type.itemsize if default[1] == "itemsize" else str(data_type.dtype)
        return out


class NumcodecsCodec(Codec):
    """A numcodecs codec under its v3 name ``numcodecs.<id>`` (one subclass per name
    and category: :func:`numcodecs_class`).  The configuration is numcodecs' without
    its "id"; a bad one raises MetadataError naming the codec."""

    name: ClassVar[str]
    codec_id: ClassVar[str]
    category: ClassVar[str]

    def __init__(self, **configuration: Any) -> None:
        self.config = {k: thaw(v) for k, v in configuration.items() if k != "id"}
        if configuration.get("id", self.codec_id) != self.codec_id:
            raise MetadataError(f"codec {self.name!r}: id {configuration['id']!r} is not {self.codec_id!r}")
        self.codec = numcodecs_codec({"id": self.codec_id, **self.config}, f"codec {self.name!r}:")
        self.decoder = decoder_of(self.codec)
        self.native: Codec | None = None
        if self.category == BYTES_TO_BYTES:
            try:
                self.native = _native_equivalent(self.codec)
            except MetadataError as exc:
                raise MetadataError(f"codec {self.name!r}: {exc}") from None

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Codec:
        return cls(**configuration)

    def native_step(self, itemsize: int) -> NativeStep | None:
        # (a bytes -> bytes codec sees bytes: numcodecs shuffles blosc's items of one byte)
        return None if self.native is None else self.native.native_step(1)

    def encode(self, buf: Any) -> Any:
        """bytes -> bytes codecs: bytes; array -> array: the encoded array; array ->
        bytes: bytes (numcodecs flattens in memory order: the chunk is made C-ordered)."""
        if self.category != BYTES_TO_BYTES:
            buf = np.ascontiguousarray(buf)
        out = call_codec(self.codec, "encode", buf, self.name)
        if self.category == ARRAY_TO_ARRAY:
            return np.asarray(out)
        if isinstance(out, np.ndarray):
            return out.tobytes()
        return bytes(out)

    def decode(self, buf: Any, out: Any = None) -> Any:
        data = call_codec(self.decoder, "decode", buf, self.name)
        if out is None:
            return data
        dest = memoryview(out).cast("B")
        src = np.ascontiguousarray(data).reshape(-1).view(np.uint8).data
        if dest.nbytes != src.nbytes:
            raise CodecError(f"{self.name}: data holds {src.nbytes} bytes, {dest.nbytes} expected")
        dest[:] = src
        return out

    def encoded(self, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[np.dtype, tuple[int, ...]]:
        """(data type, shape) an array -> array codec turns chunks of ``dtype`` and
        ``shape`` into (zarr-python's resolve_metadata): astype's ``encode_dtype``, the
        ``astype`` of delta, fixedscaleoffset and quantize, packbits' bytes; for an id
        zarr-python does not wrap, found by encoding a chunk of zeros."""
        if self.codec_id == "packbits":
            return np.dtype("u1"), (1 + math.ceil(math.prod(shape) / 8),)
        target = getattr(self.codec, "encode_dtype", None) if self.codec_id == "astype" \
            else getattr(self.codec, "astype", None)
        if self.codec_id in NUMCODECS_CATEGORIES:
            return (np.dtype(target).newbyteorder("=") if target is not None else dtype), shape
        probe = np.asarray(self.encode(np.zeros(shape, dtype)))
        return probe.dtype.newbyteorder("="), (shape if probe.size == math.prod(shape) else probe.shape)

    def configuration(self) -> dict[str, Any]:
        return dict(self.config)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": self.configuration()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NumcodecsCodec) and type(self) is type(other) and self.config == other.config

    def __hash__(self) -> int:
        return hash((self.name, repr(sorted(self.config.items()))))


def _native_equivalent(codec: Any) -> Codec | None:
    """zarrc's own codec writing the same format as numcodecs' ``codec`` (a bytes ->
    bytes codec), or None.  numcodecs' crc32c stores its checksum at the end, as the
    v3 crc32c codec does, unless told ``location="start"``.  MetadataError for options
    the kernel rejects (options it does not take: None, numcodecs runs them)."""
    config = codec.get_config()
    if config.get("id") == "crc32c":
        if config.get("location", "end") != "end":
            return None
        from zarrc.codecs.crc32c import Crc32c
        return Crc32c()
    return native_codec(config, config.get("typesize") or 1)


_CLASSES: dict[tuple[str, str], type[NumcodecsCodec]] = {}


def numcodecs_class(name: str, category: str | None = None) -> type[NumcodecsCodec]:
    """The codec class for the v3 name ``numcodecs.<id>`` (or ``imagecodecs_<codec>``) in
    ``category`` (None: the
    one zarr-python gives it, bytes -> bytes for an id it does not wrap).  MetadataError
    for another name."""
    codec_id = numcodecs_id(name)
    if codec_id is None:
        raise UnknownCodecError(f"unknown codec {name!r}")
    category = category or NUMCODECS_CATEGORIES.get(codec_id, BYTES_TO_BYTES)
    cls = _CLASSES.get((name, category))
    if cls is None:
        cls = type(f"Numcodecs_{codec_id}", (NumcodecsCodec,),
                   {"name": name, "codec_id": codec_id, "category": category,
                    "__doc__": f"numcodecs' {codec_id!r} codec in v3 arrays ({category})."})
        _CLASSES[(name, category)] = cls
    return cls


def numcodecs_v3(codec: Any) -> NumcodecsCodec:
    """A numcodecs codec object (``numcodecs.Zlib(level=3)``, ...) as a v3 codec
    ``numcodecs.<id>``, for ``create_array(filters=..., compressors=...)``."""
    config = dict(codec.get_config())
    return numcodecs_class(NUMCODECS_PREFIX + config.pop("id"))(**config)


register_prefix(NUMCODECS_PREFIX, numcodecs_class)
register_prefix(IMAGECODECS_PREFIX, numcodecs_class)
register_prefix_kind(NUMCODECS_PREFIX, NumcodecsKind())
register_prefix_kind(IMAGECODECS_PREFIX, NumcodecsKind())
