"""Zarr v2 compressors and filters (numcodecs configurations) on zarrc's engine.

A v2 array whose only codec is a ``blosc``, ``zstd``, ``zlib`` or ``gzip``
compressor (or none), holding fixed-size items, runs on the native pipeline:
:func:`native_steps` builds zarrc's codec object for the compressor and asks it
for its pipeline step (``Codec.native_step``).  Any
other combination (filters, compressors only numcodecs implements, object
arrays) is decoded and encoded by :class:`V2ChunkCodec`, chunk by chunk, on the
engine's Python path (zarrc.engine_python), with zarrc's own codecs for the four
native compressors and numcodecs for everything else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from zarrc.codecs._base import Codec, NativeStep
from zarrc.codecs.bounded import (
    COMPRESSORS,
    VLEN_NOTE,
    check_size,
    codec_id,
    decode_within,
    filter_steps,
    vlen_limit,
)
from zarrc.codecs.registry import CODECS
from zarrc.codecs.vlen import VLenBytes, VLenUTF8
from zarrc.errors import CodecError, MetadataError, ZarrcError
from zarrc.metadata.common import thaw

LZMA_FORMAT_RAW = 3     # lzma.FORMAT_RAW: the one format whose filters are not in the stream
# GDAL's Zarr driver (3.6) writes two of its creation options' spellings into .zarray:
# blosc's "shuffle" as "NONE" / "BYTE" / "BIT" (numcodecs' 0 / 1 / 2), and an lzma
# compressor's "delta" (its LZMA_DELTA: a delta filter the xz stream records, so the
# stream decodes without the key, as the filters of any xz stream do).
GDAL_SHUFFLES = {"NONE": 0, "BYTE": 1, "BIT": 2}


def from_gdal(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """``config`` with GDAL's spellings (``GDAL_SHUFFLES``, lzma's ``delta``) as
    numcodecs' configuration of the same codec; any other configuration as it is."""
    codec_id, shuffle = config.get("id"), config.get("shuffle")
    if codec_id == "blosc" and isinstance(shuffle, str) and shuffle.upper() in GDAL_SHUFFLES:
        return {**config, "shuffle": GDAL_SHUFFLES[shuffle.upper()]}
    if codec_id == "lzma" and "delta" in config and not config.get("filters") \
            and config.get("format", 1) != LZMA_FORMAT_RAW:
        return {k: v for k, v in config.items() if k != "delta"}
    return config


def native_codec(config: Mapping[str, Any], itemsize: int) -> Codec | None:
    """zarrc's own codec for a numcodecs compressor configuration (the registered
    class of its id, if it has ``numcodecs_keys``), or None if it has no native kernel
    (or options zarrc does not implement).  Raises MetadataError for a native codec
    with invalid options."""
    config = from_gdal(config)
    codec_id = config.get("id")
    cls = CODECS.get(codec_id) if isinstance(codec_id, str) else None
    conf = {k: v for k, v in config.items() if k != "id"}
    if cls is None or cls.numcodecs_keys is None or not set(conf) <= cls.numcodecs_keys:
        return None
    try:
        return cls.from_numcodecs(conf)
    except (CodecError, TypeError) as exc:
        raise MetadataError(f'compressor {dict(config)!r} is not valid: {exc}') from None


def native_steps(compressor: Mapping[str, Any] | None, filters: Sequence[Mapping] | None,
                 dtype: np.dtype) -> list[NativeStep] | None:
    """The native pipeline's bytes->bytes steps for a v2 array, or None when the
    array needs the Python path (filters, object items, a compressor without a
    native kernel)."""
    if filters or dtype.kind == "O":
        return None
    if compressor is None:
        return []
    codec = native_codec(compressor, dtype.itemsize)
    step = None if codec is None else codec.native_step(dtype.itemsize)
    return None if step is None else [step]


# v2 object codecs a categorize filter makes redundant (see V2ChunkCodec)
VLEN_IDS = ("vlen-utf8", "vlen-bytes")
VLEN_CODECS: dict[str, type] = {"vlen-utf8": VLenUTF8, "vlen-bytes": VLenBytes}


def numcodecs_codec(config: Mapping[str, Any], what: str) -> Any:
    """The numcodecs codec object for a configuration; MetadataError naming ``what``
    ("compressor", "filters", a v3 codec's name) if numcodecs' registry cannot build it."""
    import numcodecs  # here, not at module level: `import zarrc` does not import numcodecs

    try:
        codec = numcodecs.get_codec(thaw(from_gdal(config)))   # (frozen metadata: plain lists and dicts)
    except Exception as exc:  # noqa: BLE001 (numcodecs raises ValueError, TypeError, KeyError ...)
        raise MetadataError(f'{what} {dict(config)!r} is not a codec numcodecs can build: {exc}') from None
    if codec is None:
        raise MetadataError(f"{what}: numcodecs built no codec from {dict(config)!r}")
    return codec


def decoder_of(codec: Any) -> Any:
    """The object that decodes ``codec``'s output: itself, except for an LZMA codec with
    a filter chain in a format that records its filters in the stream (xz, alone),
    which numcodecs cannot decode when given them: the same codec without them."""
    if getattr(codec, "codec_id", None) == "lzma" and getattr(codec, "filters", None) \
            and getattr(codec, "format", LZMA_FORMAT_RAW) != LZMA_FORMAT_RAW:
        return type(codec)(format=codec.format, check=codec.check)
    return codec


def call_codec(codec: Any, method: str, data: Any, what: str | None = None) -> Any:
    """``codec.<method>(data)``, the codec's own errors (zlib.error, LZMAError,
    RuntimeError ...) raised as CodecError naming ``what`` (default: the codec's id)."""
    try:
        return getattr(codec, method)(data)
    except (ZarrcError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 (any codec's own error classes)
        raise CodecError(f"{what or _codec_name(codec)} {method} failed: {exc}") from None


def _codec_name(codec: Any) -> str:
    return getattr(codec, "codec_id", None) or type(codec).__name__


# codecs that may sit among a v2 array's filters and decode to more than they are
# given: decoded as the compressor is, bounded (codecs.bounded)
FILTER_COMPRESSORS = COMPRESSORS | {"pcodec", "zfpy"}

class V2ChunkCodec:
    """Decodes and encodes whole chunks of a v2 array in Python: the compressor, then
    the filters in reverse (decode), as the v2 spec orders them.

    chunks, dtype, order : the array's chunk shape, (stored) dtype and "C"/"F".
    ``decode(raw) -> ndarray`` of shape ``chunks`` and ``dtype``; ``encode(chunk)
    -> bytes``.  Both raise CodecError naming the codec for data it rejects."""

    def __init__(self, compressor: Mapping | None, filters: Sequence[Mapping] | None,
                 chunks: tuple[int, ...], dtype: np.dtype, order: str) -> None:
        self.chunks = tuple(chunks)
        self.dtype = np.dtype(dtype)
        # (a validated "C" or "F"; spelled out for numpy's Literal parameter)
        self.order: Literal["C", "F"] = "F" if order == "F" else "C"
        self.compressor = None
        if compressor is not None:
            self.compressor = (native_codec(compressor, self.dtype.itemsize)
                               or numcodecs_codec(compressor, "compressor"))
        self.decompressor = decoder_of(self.compressor)
        filters = list(filters or ())
        if self.dtype.kind == "O" and any(f.get("id") == "categorize" for f in filters):
            # categorize turns the objects into integer codes itself; a vlen codec beside it
            # (zarrc's v2 writer adds one to every object array) would hand it bytes instead
            # of labels, and read nothing back: it is left out
            filters = [f for f in filters if f.get("id") not in VLEN_IDS]
        # (the vlen filters are zarrc's, which store items as the v3 codecs of the same
        # names do: v2 and v3 arrays take the same items)
        self.filters = [VLEN_CODECS[f["id"]]() if f.get("id") in VLEN_CODECS and len(f) == 1
                        else numcodecs_codec(f, "filters") for f in filters]
        self.defilters = [decoder_of(f) for f in self.filters]
        # the bytes at each step of the filters (None: not set by the step before), so
        # that a decode making more than its step holds is refused (codecs.bounded),
        # and the item type the compressor was given (pcodec's output), if known
        steps = filter_steps(self.defilters, math.prod(self.chunks), self.dtype)
        self.sizes = [size for size, _ in steps]
        self.compressed_type = steps[-1][1]

    def _run(self, codec: Any, method: str, data: Any) -> Any:
        return call_codec(codec, method, data)

    def _loose_bound(self, codec: Any) -> tuple[int | None, bool, str]:
        """(the most bytes ``codec`` (the compressor, or a compressor among the
        filters) may decode to, False, what sets it, for the errors) where the filters
        leave its output's size unknown: a chunk of variable-length items (object
        codecs) ``zarrc.config.vlen_chunk_bytes``; pcodec, or a compressor among the
        filters, 4 times the chunk plus 1 MiB (as a v3 chain bounds its compressing
        array -> bytes codecs); else None."""
        if self.dtype.kind == "O":
            return vlen_limit(), False, VLEN_NOTE
        if codec_id(codec) == "pcodec" or codec is not self.decompressor:
            return 4 * math.prod(self.chunks) * self.dtype.itemsize + (1 << 20), False, ""
        return None, False, ""

    def _decompressed(self, codec: Any, data: Any, size: int | None, dtype: Any = None) -> Any:
        """``codec``'s decoding of ``data``, bounded (``decode_within``): to ``size``
        bytes exactly if known, else to its ``_loose_bound`` if any."""
        limit, exact, note = size, True, ""
        if limit is None:
            limit, exact, note = self._loose_bound(codec)
        if limit is None:
            return self._run(codec, "decode", data)
        return decode_within(codec, data, limit, exact, _codec_name(codec), dtype=dtype, note=note)

    def decode(self, raw: Any) -> np.ndarray:
        data = raw
        if self.decompressor is not None:
            # the compressor's output is what the filters take (the chunk without them):
            # a stream decoding to more is refused before it is all held (bounded), a
            # header claiming more before the codec allocates it
            data = self._decompressed(self.decompressor, data, self.sizes[-1], self.compressed_type)
        elif self.defilters:
            data = check_size(data, self.sizes[-1], "the stored chunk (no compressor)")
        for i in reversed(range(len(self.defilters))):
            f = self.defilters[i]
            if codec_id(f) in FILTER_COMPRESSORS:     # (a compressor among the filters: bounded alike)
                data = check_size(self._decompressed(f, data, self.sizes[i]), self.sizes[i], _codec_name(f))
            else:
                data = check_size(self._run(f, "decode", data), self.sizes[i], _codec_name(f))
        n = math.prod(self.chunks)
        if self.dtype.kind == "O":
            arr = np.asarray(data, dtype=object).reshape(-1)
        else:
            try:
                arr = _items(data, self.dtype)
            except (ValueError, TypeError) as exc:
                raise CodecError(f"decoded chunk is not a whole number of {self.dtype.str} "
                                 f"items ({exc})") from None
        if arr.size != n:
            raise CodecError(f"chunk decodes to {arr.size} items, expected {n} "
                             f"(chunk shape {list(self.chunks)})")
        return arr.reshape(self.chunks, order=self.order)

    def encode(self, chunk: np.ndarray) -> bytes:
        data: Any = np.ravel(chunk, order=self.order)
        if not self.filters and self.order == "C" and getattr(self.compressor, "codec_id", None) == "zfpy":
            # (zfpy codes as many dimensions as it is given: the chunk's, as zarr-python
            # hands it over, so that the chunks are the same bytes; F order, which
            # zarr-python's zfpy refuses, stays flat)
            data = np.ascontiguousarray(chunk)
        for f in self.filters:
            data = self._run(f, "encode", data)
        if self.compressor is not None:
            data = self._run(self.compressor, "encode", data)
        elif isinstance(data, np.ndarray) and data.dtype.kind == "O":
            raise CodecError("object items need an object codec filter (vlen-utf8, vlen-bytes, ...)")
        if isinstance(data, np.ndarray):
            return np.ascontiguousarray(data).tobytes()
        return bytes(data)


def _items(data: Any, dtype: np.dtype) -> np.ndarray:
    """A decoded buffer (bytes-like or array) as a flat array of ``dtype`` items."""
    if isinstance(data, np.ndarray):
        flat = np.ascontiguousarray(data).reshape(-1)
        return flat if flat.dtype == dtype else flat.view(np.uint8).view(dtype)
    return np.frombuffer(data, dtype=dtype)
