"""zarrc's fuzz targets: one function per target, taking the fuzzer's bytes.

Each target feeds the bytes to one of zarrc's decoders or parsers and checks the
contract every decoder and parser keeps on hostile input:

- it returns a correct result or raises one of zarrc's errors: a ``ZarrcError``
  subclass (``zarrc.errors``), or, called directly, a kernel's documented
  ``KernelError`` (``zarrc._kernels.errors``); never another exception, never a
  crash (a signal: the fuzzer reports it with the input);
- it never writes more than the expected size, nor outside the buffer it is given
  (the targets decode into a region of a larger buffer and check its guard bytes);
- where two paths decode the same bytes (a whole frame and a range of it, c-blosc
  and zarrc's row-wise blosc decoder, into new bytes and into a given buffer, a
  whole array and a selection of it) they agree.

A violation raises ``ContractError`` (an AssertionError): atheris reports it as a
crash, with the input.  The first byte(s) of an input choose the target's options
(codec settings, shapes, offsets: see each target); the rest is the data.  Inputs
need no atheris: ``python fuzz/run.py --replay`` and tests/kernels/test_fuzz_corpus.py
run the seed corpus (``fuzz/corpus/<target>/``, made by ``fuzz/make_corpus.py``)
and the regressions (``fuzz/regressions/<target>/``) through the same functions.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable

import numpy as np

from zarrc._kernels import blosc as kblosc
from zarrc._kernels import crc32c as kcrc
from zarrc._kernels import deflate as kdeflate
from zarrc._kernels import zstd as kzstd
from zarrc._kernels.errors import TOO_LARGE, KernelError
from zarrc.errors import ZarrcError

TARGETS: dict[str, Callable[[bytes], None]] = {}
GUARD = 0xA5          # the byte around every output region
PAD = 64              # guard bytes on each side of an output region
LIMIT = 1 << 22       # largest output a target decodes into (4 MiB)


class ContractError(AssertionError):
    """A target found a broken contract (wrong result, write outside the output,
    an exception that is not zarrc's)."""


def target(fn: Callable[[bytes], None]) -> Callable[[bytes], None]:
    TARGETS[fn.__name__] = fn
    return fn


class Input:
    """The fuzzer's bytes read as options, then data (no atheris needed)."""

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def u16(self) -> int:
        return self.byte() | self.byte() << 8

    def u32(self) -> int:
        return self.u16() | self.u16() << 16

    def rest(self) -> bytes:
        return self.data[self.pos:]


class Guarded:
    """An output of ``n`` bytes inside a larger buffer of guard bytes."""

    def __init__(self, n: int) -> None:
        self.buf = np.full(n + 2 * PAD, GUARD, np.uint8)
        self.out = self.buf[PAD:PAD + n]

    def check(self, what: str) -> None:
        if (self.buf[:PAD] != GUARD).any() or (self.buf[PAD + len(self.out):] != GUARD).any():
            raise ContractError(f"{what}: wrote outside its {len(self.out)}-byte output")


@contextlib.contextmanager
def allowed(*extra: type[BaseException]):
    """Run a decode: zarrc's errors (and ``extra``) end it quietly, any other
    exception is a broken contract."""
    try:
        yield
    except (ZarrcError, *extra) as exc:
        outcome("", exc)
        raise _Refused from None
    except _Refused:
        raise
    except Exception as exc:
        raise ContractError(f"raised {type(exc).__name__}, not a zarrc error: {exc}") from exc


class _Refused(Exception):
    """The input was refused with an allowed error (ends the target's run)."""


def _make_mark(depth: int = 9) -> Callable[[int], None]:
    """A function of ``1 << depth`` distinct leaves, one per value of its argument's
    low ``depth`` bits: instrumented by atheris (fuzz/run.py), each leaf is new
    coverage, so a new kind of outcome of the (uninstrumented) C kernels, told by
    :func:`outcome`, counts as new behaviour to the fuzzer."""
    lines = ["def mark(h):", "    x = 0"]

    def tree(level: int, indent: str) -> None:
        if level == depth:
            lines.append(f"{indent}x += 1")
            return
        lines.append(f"{indent}if h & {1 << level}:")
        tree(level + 1, indent + "    ")
        lines.append(f"{indent}else:")
        tree(level + 1, indent + "    ")

    tree(0, "    ")
    lines.append("    return None")
    scope: dict = {}
    exec(compile("\n".join(lines), "<fuzz-mark>", "exec"), scope)
    return scope["mark"]


mark = _make_mark()


def outcome(what: str, result: object) -> None:
    """Tell the fuzzer the kind of ``result`` (an exception: its class, code and
    message with the numbers taken out; else the class and the size's bit length)
    of the call ``what``."""
    import re
    import zlib
    if isinstance(result, BaseException):
        kind = f"{what}:{type(result).__name__}:{getattr(result, 'code', '')}:" \
               + re.sub(r"[0-9]+", "", str(result))
    else:
        size = len(result) if hasattr(result, "__len__") else result
        kind = f"{what}:{type(result).__name__}:{int(size).bit_length() if isinstance(size, int) else ''}"
    mark(zlib.crc32(kind.encode()))


def run(name: str, data: bytes) -> None:
    """Run target ``name`` on ``data``: returns when the contract held."""
    with contextlib.suppress(_Refused), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TARGETS[name](data)


def _agree(a: bytes | np.ndarray, b: bytes | np.ndarray, what: str) -> None:
    if bytes(a) != bytes(b):
        raise ContractError(f"{what}: results differ")


def _decodes_into(whole: bytes, size: int, into: Callable, what: str, twin: str) -> bool:
    """``into(out)`` (``what``) decodes the bytes ``twin`` decoded to ``whole`` into a
    guarded output of ``size`` bytes: it may refuse (KernelError) only when ``size``
    is not ``len(whole)``, never writes outside the output, and otherwise returns
    ``len(whole)`` with the same bytes.  False if it refused."""
    g = Guarded(size)
    try:
        n = into(g.out)
    except KernelError as exc:
        outcome("into", exc)
        g.check(what)
        if size == len(whole):
            raise ContractError(f"{what} refused what {twin} decoded") from None
        return False
    except Exception as exc:
        raise ContractError(f"{what} raised {type(exc).__name__}: {exc}") from exc
    g.check(what)
    if n != len(whole) or size != len(whole):
        raise ContractError(f"{what} returned {n} into {size} bytes, {twin} {len(whole)}")
    _agree(whole, g.out, f"{twin} vs {what}")
    return True


# ---------------------------------------------------------------------- blosc

def _blosc_size(frame: bytes) -> int | None:
    """The decoded size the frame's header claims, if valid and small enough."""
    try:
        n = kblosc.blosc_decoded_size(frame)
    except KernelError as exc:
        outcome("size", exc)
        return None
    return n if 0 <= n <= LIMIT else None


@target
def blosc(data: bytes) -> None:
    """A blosc frame (after one option byte: the decoded size asked for is the
    header's (bit 0 clear) or the header's plus (option >> 1) - 64; bit 7 set: with
    2 threads): blosc_decode_into, checked against blosc_decode and the Blosc codec."""
    inp = Input(data)
    opt = inp.byte()
    frame = inp.rest()
    claimed = _blosc_size(frame)
    if claimed is None:
        with allowed(KernelError, MemoryError):
            kblosc.blosc_decode(frame)
        return
    size = claimed if not opt & 1 else max(0, claimed + ((opt >> 1) & 0x3F) - 32)
    g = Guarded(size)
    threads = 2 if opt & 0x80 else 1
    try:
        n = kblosc.blosc_decode_into(frame, g.out, threads)
    except KernelError as exc:
        outcome("into", exc)
        g.check("blosc_decode_into")
        if size != claimed and not (g.out == GUARD).all():
            raise ContractError("blosc_decode_into wrote into an output of the wrong size") from None
        return
    except Exception as exc:
        raise ContractError(f"blosc_decode_into raised {type(exc).__name__}: {exc}") from exc
    g.check("blosc_decode_into")
    if n != size or size != claimed:
        raise ContractError(f"blosc_decode_into returned {n} for {size} bytes asked, {claimed} claimed")
    with allowed(KernelError):
        whole = kblosc.blosc_decode(frame)
    _agree(whole, g.out, "blosc_decode vs blosc_decode_into")
    from zarrc.codecs import Blosc
    with allowed():
        dec = Blosc().decode(frame)
    _agree(dec, whole, "Blosc().decode vs blosc_decode")


@target
def blosc_partial(data: bytes) -> None:
    """A blosc frame (after 6 option bytes: a start and a length in items of the
    frame's typesize, u32 and u16): blosc_decode_range (src/blosc_partial.c), and
    where the whole frame decodes, the same bytes as the whole."""
    inp = Input(data)
    start_item, count = inp.u32(), inp.u16()
    frame = inp.rest()
    try:
        nbytes, _, _, typesize, _ = kblosc.blosc_header(frame)
    except KernelError:
        nbytes, typesize = 1 << 16, 1
    typesize = max(typesize, 1)
    start = (start_item % max(1, nbytes // typesize + 2)) * typesize
    length = (count % 4096 + 1) * typesize
    g = Guarded(length)
    try:
        kblosc.blosc_decode_range(frame, start, g.out)
    except KernelError as exc:
        outcome("range", exc)
        g.check("blosc_decode_range")
        return
    except Exception as exc:
        raise ContractError(f"blosc_decode_range raised {type(exc).__name__}: {exc}") from exc
    g.check("blosc_decode_range")
    outcome("range", length)
    if start + length > nbytes:
        raise ContractError(f"blosc_decode_range decoded [{start}, {start + length}) of a "
                            f"{nbytes}-byte frame")
    if nbytes <= LIMIT:
        try:
            whole = kblosc.blosc_decode(frame)
        except KernelError:
            return                  # (only the blocks holding the range were decoded)
        _agree(whole[start:start + length], g.out, "blosc_decode_range vs blosc_decode")


@target
def blosc_rows(data: bytes) -> None:
    """A blosc frame (after 4 option bytes: the item size 1, 2, 4 or 8 (bits 0-1),
    rank 1-3 (bits 2-3), stream (bit 4), split (bits 5-7: none or a block); then the
    first and last dimension; then how many leading rows and items to keep):
    blosc_decode_rows (src/blosc_rows.c) into a region of a larger array, which it
    must not write outside of; where it takes the frame, c-blosc's decode agrees."""
    inp = Input(data)
    opt, d0, d1, keep = inp.byte(), inp.byte(), inp.byte(), inp.byte()
    frame = inp.rest()
    claimed = _blosc_size(frame)
    if not claimed:
        return
    itemsize = 1 << (opt & 3)
    nitems = claimed // itemsize
    if nitems * itemsize != claimed or nitems == 0:
        return
    nd = 1 + (opt >> 2 & 3) % 3
    shape = [nitems]
    if nd >= 2:
        a = d0 % 16 + 1
        if nitems % a == 0:
            shape = [a, nitems // a]
    if nd == 3 and len(shape) == 2:
        b = d1 % 16 + 1
        if shape[1] % b == 0:
            shape = [shape[0], b, shape[1] // b]
    count = [max(1, s - (keep >> (2 * i) & 3)) for i, s in enumerate(shape)]
    dtype = np.dtype(f"u{itemsize}")
    big = np.full(tuple(s + 3 for s in shape[:-1]) + ((shape[-1] + 3) * itemsize,), GUARD,
                  np.uint8).view(dtype)
    region = big[tuple(slice(1, 1 + s) for s in shape)]
    split = -1 if not opt >> 5 else (opt >> 5) - 1
    try:
        ok = kblosc.blosc_decode_rows(frame, region, count, bool(opt & 16), split)
    except Exception as exc:
        raise ContractError(f"blosc_decode_rows raised {type(exc).__name__}: {exc}") from exc
    outcome(f"rows{len(shape)}", ok)
    mask = np.ones(big.shape, bool)
    mask[tuple(slice(1, 1 + c) for c in count)] = False
    if ok:
        if (big.view(np.uint8).reshape(big.shape + (itemsize,))[mask] != GUARD).any():
            raise ContractError(f"blosc_decode_rows wrote outside the rows it keeps "
                                f"(shape {shape}, count {count})")
        try:
            whole = kblosc.blosc_decode(frame)
        except KernelError as exc:
            raise ContractError(f"blosc_decode_rows took a frame c-blosc refuses: {exc}") from None
        ref = np.frombuffer(whole, dtype).reshape(shape)[tuple(slice(0, c) for c in count)]
        _agree(ref.tobytes(), region[tuple(slice(0, c) for c in count)].tobytes(),
               "blosc_decode_rows vs blosc_decode")
    else:
        # declined or corrupt: it may have written its rows, nothing else
        if (big.view(np.uint8).reshape(big.shape + (itemsize,))[mask] != GUARD).any():
            raise ContractError(f"blosc_decode_rows wrote outside the rows it keeps "
                                f"(shape {shape}, count {count}), refusing the frame")


# ---------------------------------------------------------------------- zstd, deflate, crc32c

@target
def zstd(data: bytes) -> None:
    """zstd frames (after one option byte: bit 0 set asks for the decoded size plus
    (option >> 1) - 64): zstd_decode, and zstd_decode_into the same bytes; the Zstd
    codec into an output of the decoded size."""
    inp = Input(data)
    opt = inp.byte()
    src = inp.rest()
    with allowed(KernelError, MemoryError):
        whole = kzstd.zstd_decode(src)
    size = len(whole) if not opt & 1 else max(0, len(whole) + (opt >> 1) - 64)
    # with a limit (the size asked for): the same bytes within it, refused beyond it
    try:
        limited = kzstd.zstd_decode(src, size)
    except KernelError as exc:
        if size >= len(whole) or exc.code != TOO_LARGE:
            raise ContractError(f"zstd_decode with limit {size} of {len(whole)} bytes: {exc}") from None
    else:
        if size < len(whole):
            raise ContractError(f"zstd_decode with limit {size} gave {len(limited)} bytes")
        _agree(limited, whole, "zstd_decode with a limit vs without")
    if not _decodes_into(whole, size, lambda out: kzstd.zstd_decode_into(src, out),
                         "zstd_decode_into", "zstd_decode"):
        return
    from zarrc.codecs import Zstd
    out = np.empty(len(whole), np.uint8)
    with allowed():
        Zstd().decode(src, out=out)
    _agree(out, whole, "Zstd().decode vs zstd_decode")


@target
def deflate(data: bytes) -> None:
    """A deflate stream (after one option byte: its format, zlib / gzip / raw
    (option % 3); bit 2 set asks for the inflated size plus (option >> 3) - 16):
    inflate, and inflate_into the same bytes; the Gzip / Zlib codecs."""
    inp = Input(data)
    opt = inp.byte()
    fmt = (kdeflate.ZLIB, kdeflate.GZIP, kdeflate.RAW)[opt % 3]
    src = inp.rest()
    with allowed(KernelError, MemoryError):
        whole = kdeflate.inflate(src, fmt)
    if len(whole) > LIMIT:
        return
    size = len(whole) if not opt & 4 else max(0, len(whole) + (opt >> 3) - 16)
    if not _decodes_into(whole, size, lambda out: kdeflate.inflate_into(src, out, fmt),
                         "inflate_into", "inflate"):
        return
    from zarrc.codecs import Gzip, Zlib
    codec = {kdeflate.ZLIB: Zlib(), kdeflate.GZIP: Gzip()}.get(fmt)
    if codec is not None:
        out = np.empty(len(whole), np.uint8)
        with allowed():
            codec.decode(src, out=out)
        _agree(out, whole, f"{codec!r}.decode vs inflate")


@target
def crc32c(data: bytes) -> None:
    """Bytes (after 4 option bytes: the running crc): the hardware and software
    CRC-32C agree, at every alignment; the Crc32c codec checks the trailing checksum."""
    inp = Input(data)
    crc = inp.u32()
    src = inp.rest()
    want = kcrc.crc32c_software(src, crc)
    for shift in range(min(8, len(src) + 1)):
        buf = np.frombuffer(b"\0" * shift + src, np.uint8)[shift:]
        if kcrc.crc32c(buf, crc) != want:
            raise ContractError(f"crc32c and crc32c_software differ (offset {shift})")
    from zarrc.codecs import Crc32c
    with allowed():
        body = Crc32c().decode(src)
    if len(src) < 4 or bytes(body) != src[:-4] or \
            kcrc.crc32c(src[:-4]) != int.from_bytes(src[-4:], "little"):
        raise ContractError("Crc32c().decode took bytes whose checksum does not match")


# ---------------------------------------------------------------------- shard index

@target
def shard_index(data: bytes) -> None:
    """A shard held in memory (after 2 option bytes: the index at the start (bit 0),
    big-endian (bit 1), with a crc32c (bit 2); the number of inner chunks 1-256):
    IndexFormat.parse gives a table whose entries are empty, marked DAMAGED (each
    with its problem named, and only those), or inside the shard's data and
    disjoint; or raises CodecError for the whole shard."""
    from zarrc.codecs.shard_index import DAMAGED, EMPTY, IndexFormat
    inp = Input(data)
    opt, n = inp.byte(), inp.byte() + 1
    blob = inp.rest()
    fmt = IndexFormat(bool(opt & 1), bool(opt & 2), bool(opt & 4))
    with allowed():
        table, damaged = fmt.parse(blob, n, "fuzz")
    if table.shape != (n, 2) or table.dtype != np.uint64:
        raise ContractError(f"shard index table of shape {table.shape}, dtype {table.dtype}")
    _, lo, hi = fmt.span(n, len(blob), "fuzz")
    spans = []
    for i, (off, nb) in enumerate(table.tolist()):
        if off == int(DAMAGED) and nb == int(DAMAGED):
            if not isinstance(damaged.get(i), str):
                raise ContractError(f"shard index entry {i} marked damaged without a reason")
            continue
        if i in damaged:
            raise ContractError(f"shard index entry {i} reported damaged but not marked")
        if off == int(EMPTY) and nb == int(EMPTY):
            continue
        if not lo <= off <= off + nb <= hi:
            raise ContractError(f"shard index entry ({off}, {nb}) outside [{lo}, {hi})")
        spans.append((off, off + nb))
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        raise ContractError("shard index entries overlap")


# ---------------------------------------------------------------------- a chunk through the Chain

_ARRAYS: dict[str, list] = {}


def _root() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    root = tempfile.mkdtemp(prefix="zarrc-fuzz-", dir=base)
    import atexit
    atexit.register(shutil.rmtree, root, True)
    return root


def _chunk_arrays(sharded: bool) -> list:
    """The arrays whose first chunk (or shard) file a chunk target replaces: one per
    codec chain the engine decodes natively, each (array, path of its chunk file)."""
    key = "shard" if sharded else "chunk"
    if key in _ARRAYS:
        return _ARRAYS[key]
    import numcodecs

    import zarrc
    from zarrc.codecs import Blosc, Bytes, Crc32c, Gzip, ShardingIndexed, Transpose, Zstd
    root = _root()
    made = []

    def add(name, **kw):
        a = zarrc.create_array(os.path.join(root, key), name=name, overwrite=True, **kw)
        a[...] = np.arange(a.size, dtype="int64").reshape(a.shape).astype(a.dtype)
        sep = "." if kw.get("zarr_format") == 2 else "/"
        first = f"0{sep}0" if kw.get("zarr_format") == 2 else "c/0/0"
        made.append((a, os.path.join(root, key, name, first)))

    if not sharded:
        chains = [
            dict(compressors=Blosc("lz4", 5, "shuffle")),
            dict(compressors=Blosc("zstd", 3, "bitshuffle", blocksize=256)),
            dict(compressors=Blosc("blosclz", 5, "noshuffle", blocksize=128)),
            dict(compressors=Zstd(3)),
            dict(compressors=Zstd(1, checksum=True)),
            dict(compressors=Gzip(5)),
            dict(compressors=[Blosc("zstd", 1, "shuffle"), Crc32c()]),
            dict(compressors=None),
            dict(compressors=[Zstd(1), Crc32c()]),
            dict(compressors=Blosc("lz4", 5), filters=[Transpose((1, 0))]),
            dict(compressors=Blosc("lz4", 5), serializer=Bytes("big")),
            dict(zarr_format=2, compressor=numcodecs.Blosc("lz4", 5, 1)),
            dict(zarr_format=2, compressor=numcodecs.Zlib(1), order="F"),
            dict(zarr_format=2, compressor=None),
        ]
        for i, kw in enumerate(chains):
            add(f"a{i}", shape=(24, 16), chunks=(12, 16), dtype="<i4" if i % 2 else "<f8",
                **kw)
    else:
        chains = [
            dict(compressors=Blosc("lz4", 5, "shuffle")),
            dict(compressors=Zstd(3)),
            dict(compressors=None),
            dict(compressors=Gzip(1)),
            dict(serializer=ShardingIndexed(chunk_shape=(5, 5), codecs=[Bytes(), Zstd(1)],
                                            index_location="start"), compressors=None),
            dict(serializer=ShardingIndexed(chunk_shape=(5, 10), codecs=[Bytes(), Blosc("lz4")],
                                            index_codecs=[Bytes("big")]), compressors=None),
        ]
        for i, kw in enumerate(chains):
            if "serializer" in kw:
                add(f"s{i}", shape=(40, 40), chunks=(20, 20), dtype="<u2", **kw)
            else:
                add(f"s{i}", shape=(40, 40), chunks=(20, 20), shards=(20, 40), dtype="<u2",
                    **kw)
    _ARRAYS[key] = made
    return made


def _replace(path: str, blob: bytes) -> None:
    tmp = path + ".fuzz-tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)      # a new file (inode): no cached index of the old one applies


def _read_chunk(sharded: bool, data: bytes) -> None:
    arrays = _chunk_arrays(sharded)
    inp = Input(data)
    opt = inp.byte()
    arr, path = arrays[opt % len(arrays)]
    blob = inp.rest()
    _replace(path, blob)
    try:
        whole = arr[...]
    except ZarrcError as exc:
        outcome(f"{opt}", exc)
        whole = None
    except Exception as exc:
        raise ContractError(f"reading {arr.path} raised {type(exc).__name__}: {exc}") from exc
    if whole is not None and (whole.shape != arr.shape or whole.dtype != arr.dtype):
        raise ContractError(f"read {whole.shape} {whole.dtype} of a {arr.shape} {arr.dtype} array")
    # a selection of the damaged chunk: partial decodes, row-wise blosc, one inner chunk
    for sel in [(slice(2, 9), slice(3, 7)), (4, slice(None)), (slice(None, 20, 3), 1)]:
        try:
            part = arr[sel]
        except ZarrcError as exc:
            outcome(f"{opt}{sel}", exc)
            continue
        except Exception as exc:
            raise ContractError(f"reading {arr.path}[{sel}] raised {type(exc).__name__}: {exc}") \
                from exc
        if whole is not None:
            _agree(np.ascontiguousarray(part), np.ascontiguousarray(whole[sel]),
                   f"{arr.path}[{sel}] vs the whole array")
    out = np.full(arr.shape, 7, arr.dtype)
    try:
        arr.get_basic_selection(..., out=out)
    except ZarrcError:
        return
    except Exception as exc:
        raise ContractError(f"reading {arr.path} into out= raised {type(exc).__name__}: {exc}") \
            from exc
    if whole is not None:
        _agree(out, whole, f"{arr.path} read into out= vs a new array")


@target
def chunk(data: bytes) -> None:
    """A chunk file (after one option byte: which of 14 arrays, v2 and v3, each
    with its own codec chain: blosc, zstd, gzip, zlib (v2), crc32c, transpose, big-endian
    bytes, none) read through the engine's native path (the Chain): the whole
    array, selections of the chunk and a read into ``out=`` all give the array's
    shape and agree, or raise zarrc errors."""
    _read_chunk(False, data)


@target
def shard(data: bytes) -> None:
    """A shard file (after one option byte: which of 6 sharded arrays: inner codecs
    blosc, zstd, gzip, none, the index at the start or big-endian) read as the
    ``chunk`` target reads a chunk: index parsing, then one inner chunk or all."""
    _read_chunk(True, data)


# ---------------------------------------------------------------------- metadata

@target
def metadata_v2(data: bytes) -> None:
    """A .zarray (option byte 0-84), .zgroup (85-169) or .zattrs (170-255)
    document: ArrayMetadataV2 / GroupMetadataV2 / attributes_from_json give a
    node whose to_json() parses again to the same node, or raise MetadataError."""
    from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2, attributes_from_json
    inp = Input(data)
    opt = inp.byte()
    doc = inp.rest()
    if opt < 85:
        with allowed():
            node = ArrayMetadataV2.from_json(doc, path="fuzz")
        _roundtrip(lambda d: ArrayMetadataV2.from_json(d, path="fuzz"), node)
    elif opt < 170:
        with allowed():
            node = GroupMetadataV2.from_json(doc, path="fuzz")
        _roundtrip(lambda d: GroupMetadataV2.from_json(d, path="fuzz"), node)
    else:
        with allowed():
            attributes_from_json(doc, "fuzz")


@target
def metadata_v3(data: bytes) -> None:
    """A zarr.json document (array or group): metadata_from_json gives a node whose
    to_json() parses again to the same node, or raises MetadataError."""
    from zarrc.metadata.v3 import metadata_from_json
    with allowed():
        node = metadata_from_json(data, path="fuzz")
    _roundtrip(lambda d: metadata_from_json(d, path="fuzz"), node)


@target
def consolidated(data: bytes) -> None:
    """Consolidated metadata: a .zmetadata document (option byte even) through
    consolidated.parse_v2, or a group's zarr.json with a consolidated_metadata
    member (odd) through GroupMetadataV3.from_json and consolidated.parse_v3;
    MetadataError or nodes, each entry (parsed when looked up) a node or a
    MetadataError."""
    from zarrc.metadata import consolidated as cons
    from zarrc.metadata.v3 import GroupMetadataV3
    inp = Input(data)
    opt = inp.byte()
    doc = inp.rest()
    from collections.abc import Mapping
    if opt & 1:
        with allowed():
            group = GroupMetadataV3.from_json(doc, path="fuzz")
            nodes = cons.parse_v3(group.consolidated_metadata, path="fuzz") or {}
    else:
        with allowed():
            nodes = cons.parse_v2(doc, path="fuzz")
    if not isinstance(nodes, Mapping):
        raise ContractError(f"consolidated metadata gave a {type(nodes).__name__}")
    for key in list(nodes):          # (entries are parsed when looked up: each one, once)
        with allowed():
            nodes[key]


def _roundtrip(parse: Callable, node) -> None:
    import json

    from zarrc.metadata.common import json_default
    try:
        doc = json.dumps(node.to_json(), allow_nan=True, default=json_default)
        again = parse(doc)
    except Exception as exc:
        raise ContractError(f"{type(node).__name__} parsed, but its to_json() does not parse "
                            f"again: {type(exc).__name__}: {exc}") from exc
    if again != node and repr(again) != repr(node):
        raise ContractError(f"{type(node).__name__}: to_json() parses to another node")
