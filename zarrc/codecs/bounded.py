"""Decompression bounded by the size a chunk may decode to, for codecs run in
Python (v2 compressors before numcodecs filters, the bytes -> bytes codecs of a v3
chain run by ``ChainChunkCodec``): a stream that claims, or turns out, to hold more
than ``limit`` bytes is refused once ``limit + 1`` bytes are out (bz2, lzma, and
zlib / gzip where numcodecs would run them), a header claiming more is refused
before anything is allocated (numcodecs' lz4, blosc, zstd's content size, zfpy's
dimensions; a zfp stream is also followed by zeros its decoder may read), and
zarrc's kernels decode into a buffer of the exact size when it is known (blosc,
zstd, gzip, zlib), so a decompression bomb never allocates more than the chunk it
should be; pcodec decodes into a buffer of the chunk's items (or of the bound),
its stream refused where it holds more, and zstd frames that record no size into a
buffer grown up to the bound (the kernel's ``zstd_decode`` with a limit).  :func:`decode_within` is the one entry;
:func:`encoded_bound` the size a codec's output may reach, for the stages before it."""

from __future__ import annotations

import bz2
import lzma
import math
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zarrc._kernels import errors as kernel_errors
from zarrc._kernels import zstd as zstd_kernel
from zarrc.errors import CodecError, ZarrcError, from_kernel
from zarrc.runtime.config import config


def decompressor_of(codec: Any) -> Callable[[], Any] | None:
    """A maker of streaming decompressors for ``codec`` (a numcodecs BZ2 or LZMA
    object), or None for the other codecs."""
    cid = getattr(codec, "codec_id", None)
    if cid in ("zlib", "gzip"):
        wbits = 15 if cid == "zlib" else 31
        return lambda: zlib.decompressobj(wbits)
    if cid == "bz2":
        return bz2.BZ2Decompressor
    if cid == "lzma":
        fmt = getattr(codec, "format", lzma.FORMAT_XZ)
        filters = getattr(codec, "filters", None) if fmt == lzma.FORMAT_RAW else None
        return lambda: lzma.LZMADecompressor(format=fmt, filters=filters)
    return None


def bounded_decode(codec: Any, data: Any, limit: int, what: str, note: str = "") -> bytes | None:
    """``codec``'s decoding of ``data`` (concatenated streams, as bz2.decompress and
    lzma.decompress read them), or None if ``codec`` is not one decoded here.
    Raises CodecError (naming ``what``, ``note`` after the bound) if it decodes to
    more than ``limit`` bytes, before more than ``limit + 1`` are held, or if the
    data are corrupt."""
    make = decompressor_of(codec)
    if make is None:
        return None
    rest = bytes(memoryview(data).cast("B"))
    parts: list[bytes] = []
    total = 0
    one_stream = getattr(codec, "codec_id", None) == "zlib"    # (zlib.decompress ignores what follows)
    while rest:
        d = make()
        try:
            part = d.decompress(rest, max_length=limit - total + 1)
        except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as exc:
            if parts:       # (trailing data that is no stream: ignored, as lzma.decompress does)
                break
            raise CodecError(f"{what} decode failed: {exc}") from None
        total += len(part)
        if total > limit:
            raise CodecError(f"{what}: decodes to more than the {limit} bytes a chunk holds{note}")
        parts.append(part)
        if not d.eof:
            raise CodecError(f"{what} decode failed: the data end before the end-of-stream marker")
        rest = b"" if one_stream else d.unused_data
    return b"".join(parts)


# numcodecs' filters that code each item to one item: the stored type's attribute
# (astype, or AsType's encode_dtype), and the type they take (None: any, in place)
_ITEMWISE = {"delta": ("astype", "dtype"), "fixedscaleoffset": ("astype", "dtype"),
             "quantize": ("astype", "dtype"), "categorize": ("astype", "dtype"),
             "astype": ("encode_dtype", "decode_dtype"), "bitround": (None, None)}


def filter_steps(filters: list[Any], count: int, dtype: Any) -> list[tuple[int | None, Any]]:
    """(the bytes, the item type) a chunk of ``count`` items of ``dtype`` is at each
    step of a v2 chain's numcodecs ``filters`` (in encode order): ``[chunk, after
    filter 0, ...]``; the bytes None from the first filter whose output size is not
    set by its input (a vlen or compressing filter, an item type that does not
    match), the type None from there or after shuffle (bytes).  Item-wise filters
    (delta, fixedscaleoffset, quantize, categorize, astype, bitround) keep the count
    and change the item type; shuffle keeps the bytes."""
    dt = np.dtype(dtype)
    steps: list[tuple[int | None, Any]] = [(None, None) if dt.kind == "O" else (count * dt.itemsize, dt)]
    for f in filters:
        cid = getattr(f, "codec_id", None)
        size = steps[-1][0]
        known = size is not None or (cid == "categorize" and dt.kind == "O" and len(steps) == 1)
        if not known:
            steps.append((None, None))
        elif cid == "shuffle":
            steps.append((size, None))
        elif cid in _ITEMWISE:
            out_attr, in_attr = _ITEMWISE[cid]
            takes = getattr(f, in_attr, None) if in_attr else None
            if takes is not None and np.dtype(takes).itemsize != dt.itemsize and dt.kind != "O":
                steps.append((None, None))
                continue
            dt = np.dtype(getattr(f, out_attr)) if out_attr else dt
            steps.append((count * dt.itemsize, dt if out_attr or steps[-1][1] is not None else None))
        else:
            steps.append((None, None))
    return steps


COMPRESSORS = frozenset({"zstd", "zlib", "gzip", "bz2", "lzma", "lz4", "blosc"})
CHECKSUMS = frozenset({"crc32", "crc32c", "adler32", "fletcher32", "jenkins_lookup3"})  # 4 bytes each
SLACK = 1 << 16


def codec_id(codec: Any) -> str | None:
    """The id of a numcodecs codec, of a v3 ``numcodecs.<id>`` codec, or the name of
    one of zarrc's codecs."""
    cid = getattr(codec, "codec_id", None)
    return cid if isinstance(cid, str) else getattr(codec, "name", None)


def encoded_bound(codec: Any, size: int | None, exact: bool) -> tuple[int | None, bool]:
    """(the most bytes ``codec``, a bytes -> bytes codec, encodes ``size`` bytes to,
    whether that is exactly its size): a checksum adds 4 bytes, shuffle none, a
    compressor at most an eighth plus 64 KiB (above the worst case of each: zstd's
    and LZ4's compress bounds, deflate's, bz2's 1% + 600, blosc's 16 or 32 bytes);
    (None, False) for other codecs or an unknown ``size``."""
    cid = codec_id(codec)
    if size is None:
        return None, False
    if cid == "shuffle":
        return size, exact
    if cid in CHECKSUMS:
        return size + 4, exact
    if cid in COMPRESSORS:
        return size + size // 8 + SLACK, False
    return None, False


def _native(codec: Any) -> Any:
    """zarrc's own codec decoding ``codec``'s format with a kernel, or None."""
    if hasattr(codec, "native"):            # (a v3 numcodecs.<id> codec: its kernel's codec, or None)
        return codec.native
    step = getattr(codec, "native_step", None)
    return codec if step is not None and step(1) is not None else None


def _zstd_content_size(head: bytes) -> int | None:
    """The content size a zstd frame header records, or None (none, or not a frame)."""
    if len(head) < 5 or head[:4] != b"\x28\xb5\x2f\xfd":
        return None
    fhd = head[4]
    single = (fhd >> 5) & 1
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3]
    width = (single, 2, 4, 8)[fhd >> 6]
    if width == 0 or len(head) < pos + width:
        return None
    value = int.from_bytes(head[pos:pos + width], "little")
    return value + 256 if width == 2 else value


ZFP_ITEM_BYTES = (4, 8, 4, 8)                # (int32, int64, float, double)
ZFP_DIM_BITS = ((48,), (24, 24), (16, 16, 16), (12, 12, 12, 12))


def zfp_header(head: bytes) -> tuple[int, list[int], int] | None:
    """(item size, sizes x first, the fewest bits a block takes) that a zfp stream's
    full header (zfpy's) records, read least significant bit first from little-endian
    words: the magic ("zfp" and the codec version, 32 bits); 52 bits of metadata (the
    scalar type, 2 bits; the dimension count less one, 2 bits; each size less one in
    48 bits); the mode, 12 bits (below 2048: fixed rate, that many bits less one a
    block; 4095: 52 bits more, the block's fewest bits less one first, 15 bits; else
    no fewest); None where ``head`` is not such a header."""
    if len(head) < 12 or head[:3] != b"zfp":
        return None
    word = int.from_bytes(head[:24], "little")
    meta = (word >> 32) & ((1 << 52) - 1)
    sizes, rest = [], meta >> 4
    for width in ZFP_DIM_BITS[(meta >> 2) & 3]:
        sizes.append((rest & ((1 << width) - 1)) + 1)
        rest >>= width
    mode = (word >> 84) & 0xFFF
    minbits = mode + 1 if mode < 2048 else ((word >> 96) & 0x7FFF) + 1 if mode == 0xFFF else 0
    return ZFP_ITEM_BYTES[meta & 3], sizes, minbits


def zfp_claim(head: bytes) -> int | None:
    """The decoded size a zfp stream's full header records (:func:`zfp_header`)."""
    found = zfp_header(head)
    return None if found is None else found[0] * math.prod(found[1])


def zfp_padded(data: Any, shape: Sequence[int] | None = None, itemsize: int = 0,
               minbits: int = 0) -> Any:
    """``data``, a zfp stream of values of ``shape`` and ``itemsize`` whose blocks
    take at least ``minbits`` bits (fixed rate: that many; ``shape`` None: as its full
    header says), followed by as many zero bytes as its blocks could take more: zfp
    reads its stream without checking where it ends, so a truncated one would read
    past the buffer.  A block of 4**d values takes its ``minbits``, or at most (8 x
    itemsize + 1) bits a value and its header; the zeros are untouched pages.
    CodecError if the stream is shorter than its blocks' ``minbits`` (truncated)."""
    view = memoryview(data).cast("B")
    if shape is None:
        found = zfp_header(bytes(view[:24]))
        if found is None:
            return data
        itemsize, shape, minbits = found
    blocks = math.prod(-(-max(int(n), 1) // 4) for n in shape)
    if view.nbytes * 8 < blocks * minbits:
        raise CodecError(f"zfp: the stream holds {view.nbytes} bytes, its {blocks} blocks of at "
                         f"least {minbits} bits need more (truncated)")
    block = max(4 ** max(len(shape), 1) * (8 * itemsize + 1), minbits) + 64
    need = 24 + (blocks * block + 63) // 8
    if view.nbytes >= need:
        return data
    out = np.zeros(need, np.uint8)
    out[:view.nbytes] = np.frombuffer(view, np.uint8)
    return out


def header_claim(codec: Any, data: Any) -> int | None:
    """The decoded size the header of ``data`` claims, for a compressor that allocates
    it before decoding (numcodecs' LZ4, blosc, zstd with a content size, zfpy), or None."""
    cid = codec_id(codec)
    head = bytes(memoryview(data).cast("B")[:18])
    if cid == "lz4":            # (a little-endian int32 first)
        return int.from_bytes(head[:4], "little", signed=True) if len(head) >= 4 else None
    if cid == "zfpy":
        return zfp_claim(head)
    if cid == "blosc" and len(head) >= 16:
        return int.from_bytes(head[4:8], "little")
    if cid == "zstd":
        return _zstd_content_size(head)
    return None


def _zstd_at_most(data: Any, limit: int, what: str, note: str) -> Any:
    """zstd frames decoded by zarrc's kernel to at most ``limit`` bytes: frames whose
    sizes are all recorded into a buffer of their total, refused before it is
    allocated if that is more; others (streamed frames; a sizeless frame after a sized
    one) into a buffer grown up to ``limit`` + 1 bytes, refused there.  CodecError
    naming ``what`` (``note`` after the bound)."""
    try:
        return zstd_kernel.zstd_decode(data, limit)
    except kernel_errors.KernelError as exc:
        if exc.code == kernel_errors.TOO_LARGE:
            raise CodecError(f"{what}: decodes to more than the {limit} bytes a chunk holds{note}") from None
        raise from_kernel(exc, f"{what}: ") from None


# what a refusal by zarrc.config.vlen_chunk_bytes adds to its message
VLEN_NOTE = (" (zarrc.config.vlen_chunk_bytes, the most a chunk of variable-length items may "
             "decode to: raise it, zarrc.config.set(vlen_chunk_bytes=...), to read this chunk)")


def vlen_limit() -> int:
    """The most bytes a chunk of variable-length items may decompress to, now
    (``zarrc.config.vlen_chunk_bytes``)."""
    return int(config.vlen_chunk_bytes)


# the number types a pcodec stream may hold (pcodec checks a stream's type against
# the output's before it decodes anything)
PCODEC_TYPES = ("u2", "i2", "f2", "u4", "i4", "f4", "u8", "i8", "f8")


def pcodec_within(data: Any, limit: int, exact: bool, dtype: Any, what: str, note: str = "") -> np.ndarray:
    """A pcodec standalone stream ``data`` decoded into a buffer of ``limit`` bytes
    (pcodec's ``simple_decompress_into``, which writes what fits and tells whether
    the stream ended): ``limit // itemsize`` items of ``dtype`` (the chunk's, or
    after item-wise filters), or, ``dtype`` None, of the type the stream holds (each
    of pcodec's types tried; a wrong one is refused before any value is decoded).
    So a stream claiming more values than the chunk allocates nothing beyond it.
    CodecError naming ``what`` for a stream holding more values than fit (``note``
    after the bound) or, ``exact``, fewer; for a corrupt or truncated stream."""
    try:
        from pcodec import standalone
    except ImportError:
        raise CodecError(f"{what}: decoding pcodec needs the pcodec package (pip install pcodec)") from None
    if not hasattr(standalone, "simple_decompress_into"):       # (a bounded decode needs it)
        raise CodecError(f"{what}: decoding pcodec within the chunk's size needs a pcodec with "
                         f"standalone.simple_decompress_into (pip install -U pcodec)")
    src = data if isinstance(data, bytes) else bytes(memoryview(data).cast("B"))
    types = [np.dtype(dtype).newbyteorder("=")] if dtype is not None else [np.dtype(t) for t in PCODEC_TYPES]
    buf = np.empty(limit, np.uint8)         # (pages untouched until written)
    failures = []
    for dt in types:
        out = buf[:limit - limit % dt.itemsize].view(dt)
        try:
            progress = standalone.simple_decompress_into(src, out)
        except (RuntimeError, TypeError, ValueError) as exc:
            failures.append(str(exc))
            continue
        if not progress.finished and progress.n_processed < out.size:
            raise CodecError(f"{what} decode failed: the stream ends after {progress.n_processed} "
                             f"values, before its end marker (truncated)")
        if not progress.finished:
            raise CodecError(f"{what}: the stream holds more than the {out.size} {dt} values "
                             f"({limit} bytes) the chunk's codecs expect{note}")
        got = progress.n_processed
        if exact and got * dt.itemsize != limit:
            raise CodecError(f"{what}: the stream holds {got} {dt} values, the chunk's codecs "
                             f"expect {limit // dt.itemsize} ({limit} bytes)")
        return out[:got]
    real = [f for f in failures if "number type" not in f] or failures
    raise CodecError(f"{what} decode failed: {real[0]}")


def decode_within(codec: Any, data: Any, limit: int, exact: bool, what: str, dtype: Any = None,
                  note: str = "") -> Any:
    """``codec``'s decoding of ``data`` (a bytes -> bytes codec: numcodecs', a v3
    ``numcodecs.<id>`` one or zarrc's; or pcodec, whose output holds items of
    ``dtype`` if given) where the result is ``limit`` bytes (``exact``) or at most
    ``limit``: decoded by zarrc's kernel into a buffer of that size, as a stream
    stopped at ``limit + 1`` bytes, into a buffer of ``limit`` bytes (pcodec), or
    after a header check.  CodecError naming ``what`` (``note`` after the bound:
    what sets it) for data decoding to more (before it is held, except for codecs
    none of these apply to, whose output is checked after they ran) or, ``exact``,
    to less."""
    cid = codec_id(codec)
    if cid == "pcodec":
        return pcodec_within(data, limit, exact, dtype, what, note)
    native = _native(codec) if cid in COMPRESSORS else None
    if native is not None and exact:
        out = bytearray(limit)
        native.decode(data, out)
        return out
    decoder = getattr(codec, "decoder", codec)
    found = bounded_decode(decoder, data, limit, what, note)
    if found is None:
        claim = header_claim(codec, data)
        if claim is not None and (claim > limit or (exact and claim != limit)):
            raise CodecError(f"{what}: header claims {claim} bytes, the chunk's codecs "
                             f"expect {'' if exact else 'at most '}{limit}{note}")
        if cid == "zfpy":
            data = zfp_padded(data)
        try:
            found = (_zstd_at_most(data, limit, what, note) if cid == "zstd" and native
                     else (native or codec).decode(data))
        except (ZarrcError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 (any codec's own error classes)
            raise CodecError(f"{what} decode failed: {exc}") from None
    n = found.nbytes if hasattr(found, "nbytes") else len(found)
    if n > limit or (exact and n != limit):
        raise CodecError(f"{what} gives {n} bytes where the chunk's codecs expect "
                         f"{'' if exact else 'at most '}{limit}{note if n > limit else ''}")
    return found


def check_size(data: Any, expected: int | None, what: str) -> Any:
    """``data`` (bytes-like or array) if ``expected`` is None or its size; else
    CodecError naming ``what``."""
    if expected is None:
        return data
    n = data.nbytes if hasattr(data, "nbytes") else len(data)
    if n != expected:
        raise CodecError(f"{what} gives {n} bytes where the chunk's codecs expect {expected}")
    return data
