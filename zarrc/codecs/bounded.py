"""Decompression bounded by the size a chunk may decode to, for compressors that
numcodecs runs whole (bz2, lzma): a stream that claims, or turns out, to hold more
than ``limit`` bytes is refused once ``limit + 1`` bytes are out, so a
decompression bomb never allocates more than the chunk it should be.  (zarrc's
native codecs decode into a buffer of the chunk's size and refuse a header
claiming more before allocating: blosc, zstd, gzip, zlib.)"""

from __future__ import annotations

import bz2
import lzma
from collections.abc import Callable
from typing import Any

from zarrc.errors import CodecError


def decompressor_of(codec: Any) -> Callable[[], Any] | None:
    """A maker of streaming decompressors for ``codec`` (a numcodecs BZ2 or LZMA
    object), or None for the other codecs."""
    cid = getattr(codec, "codec_id", None)
    if cid == "bz2":
        return bz2.BZ2Decompressor
    if cid == "lzma":
        fmt = getattr(codec, "format", lzma.FORMAT_XZ)
        filters = getattr(codec, "filters", None) if fmt == lzma.FORMAT_RAW else None
        return lambda: lzma.LZMADecompressor(format=fmt, filters=filters)
    return None


def bounded_decode(codec: Any, data: Any, limit: int, what: str) -> bytes | None:
    """``codec``'s decoding of ``data`` (concatenated streams, as bz2.decompress and
    lzma.decompress read them), or None if ``codec`` is not one decoded here.
    Raises CodecError (naming ``what``) if it decodes to more than ``limit`` bytes,
    before more than ``limit + 1`` are held, or if the data are corrupt."""
    make = decompressor_of(codec)
    if make is None:
        return None
    rest = bytes(memoryview(data).cast("B"))
    parts: list[bytes] = []
    total = 0
    while rest:
        d = make()
        try:
            part = d.decompress(rest, max_length=limit - total + 1)
        except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
            if parts:       # (trailing data that is no stream: ignored, as lzma.decompress does)
                break
            raise CodecError(f"{what} decode failed: {exc}") from None
        total += len(part)
        if total > limit:
            raise CodecError(f"{what}: decodes to more than the {limit} bytes a chunk holds")
        parts.append(part)
        if not d.eof:
            raise CodecError(f"{what} decode failed: the data end before the end-of-stream marker")
        rest = d.unused_data
    return b"".join(parts)


# numcodecs' filters that code each item to one item: the stored type's attribute
# (astype, or AsType's encode_dtype), and the type they take (None: any, in place)
_ITEMWISE = {"delta": ("astype", "dtype"), "fixedscaleoffset": ("astype", "dtype"),
             "quantize": ("astype", "dtype"), "categorize": ("astype", "dtype"),
             "astype": ("encode_dtype", "decode_dtype"), "bitround": (None, None)}


def filter_sizes(filters: list[Any], count: int, dtype: Any) -> list[int | None]:
    """The bytes a chunk of ``count`` items of ``dtype`` is at each step of a v2
    chain's numcodecs ``filters`` (in encode order): ``[chunk, after filter 0, ...]``,
    None from the first filter whose output size is not set by its input (a vlen or
    compressing filter, an item type that does not match).  Item-wise filters
    (delta, fixedscaleoffset, quantize, categorize, astype, bitround) keep the count
    and change the item size; shuffle keeps the bytes."""
    import numpy as np
    dt = np.dtype(dtype)
    sizes: list[int | None] = [None if dt.kind == "O" else count * dt.itemsize]
    for f in filters:
        cid = getattr(f, "codec_id", None)
        known = sizes[-1] is not None or (cid == "categorize" and dt.kind == "O" and len(sizes) == 1)
        if not known:
            sizes.append(None)
        elif cid == "shuffle":
            sizes.append(sizes[-1])
        elif cid in _ITEMWISE:
            out_attr, in_attr = _ITEMWISE[cid]
            takes = getattr(f, in_attr, None) if in_attr else None
            if takes is not None and np.dtype(takes).itemsize != dt.itemsize and dt.kind != "O":
                sizes.append(None)
                continue
            dt = np.dtype(getattr(f, out_attr)) if out_attr else dt
            sizes.append(count * dt.itemsize)
        else:
            sizes.append(None)
    return sizes


def claimed_size(codec: Any, data: Any) -> int | None:
    """The decoded size the header of ``data`` claims for a numcodecs compressor that
    allocates it before decoding (LZ4: a little-endian int32 first), or None."""
    if getattr(codec, "codec_id", None) != "lz4":
        return None
    head = bytes(memoryview(data).cast("B")[:4])
    return int.from_bytes(head, "little", signed=True) if len(head) == 4 else None


def check_size(data: Any, expected: int | None, what: str) -> Any:
    """``data`` (bytes-like or array) if ``expected`` is None or its size; else
    CodecError naming ``what``."""
    if expected is None:
        return data
    n = data.nbytes if hasattr(data, "nbytes") else len(data)
    if n != expected:
        raise CodecError(f"{what} gives {n} bytes where the chunk's codecs expect {expected}")
    return data
