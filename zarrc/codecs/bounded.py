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
