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

from zarrc.codecs._base import Codec
from zarrc.codecs.blosc import Blosc
from zarrc.codecs.gzip import Gzip
from zarrc.codecs.zlib import Zlib
from zarrc.codecs.zstd import Zstd
from zarrc.errors import CodecError, MetadataError, ZarrcError

AUTOSHUFFLE = -1
# configuration keys each native compressor takes (anything else: numcodecs decides)
NATIVE_KEYS = {
    "blosc": {"id", "cname", "clevel", "shuffle", "blocksize", "typesize"},
    "zstd": {"id", "level", "checksum"},
    "zlib": {"id", "level"},
    "gzip": {"id", "level"},
}


def _blosc_shuffle(shuffle: Any, itemsize: int) -> int:
    if shuffle == AUTOSHUFFLE:           # numcodecs: bit-shuffle single bytes, else byte-shuffle
        return 2 if itemsize == 1 else 1
    return shuffle


def native_codec(config: Mapping[str, Any], itemsize: int) -> Codec | None:
    """zarrc's own codec for a numcodecs compressor configuration, or None if it has
    no native kernel (or options zarrc does not implement).  Raises MetadataError for
    a native codec with invalid options."""
    codec_id = config.get("id")
    if codec_id not in NATIVE_KEYS or not set(config) <= NATIVE_KEYS[codec_id]:
        return None
    conf = {k: v for k, v in config.items() if k != "id"}
    try:
        if codec_id == "blosc":
            conf["shuffle"] = _blosc_shuffle(conf.get("shuffle", 1), itemsize)
            return Blosc(**conf)
        return {"zstd": Zstd, "zlib": Zlib, "gzip": Gzip}[codec_id](**conf)
    except (CodecError, TypeError) as exc:
        raise MetadataError(f'compressor {dict(config)!r} is not valid: {exc}') from None


def native_steps(compressor: Mapping[str, Any] | None, filters: Sequence[Mapping] | None,
                 dtype: np.dtype) -> list[tuple] | None:
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


def numcodecs_codec(config: Mapping[str, Any], what: str) -> Any:
    """The numcodecs codec object for a configuration; MetadataError naming ``what``
    ("compressor", "filters") if numcodecs does not know it."""
    import numcodecs  # here, not at module level: `import zarrc` does not import numcodecs

    try:
        return numcodecs.get_codec(dict(config))
    except Exception as exc:  # noqa: BLE001 (numcodecs raises ValueError, TypeError, KeyError ...)
        raise MetadataError(f'{what} {dict(config)!r} is not a codec numcodecs can build: {exc}') from None


def _codec_name(codec: Any) -> str:
    return getattr(codec, "codec_id", None) or type(codec).__name__


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
        self.filters = [numcodecs_codec(f, "filters") for f in filters or ()]

    def _run(self, codec: Any, method: str, data: Any) -> Any:
        try:
            return getattr(codec, method)(data)
        except ZarrcError:
            raise
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 (any codec's own errors: zlib.error, LZMAError ...)
            raise CodecError(f"{_codec_name(codec)} {method} failed: {exc}") from None

    def decode(self, raw: Any) -> np.ndarray:
        data = raw
        if self.compressor is not None:
            data = self._run(self.compressor, "decode", data)
        for f in reversed(self.filters):
            data = self._run(f, "decode", data)
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
