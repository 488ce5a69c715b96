"""The shard index of ``sharding_indexed`` (specs/v3-codecs-sharding-indexed.rst,
"Binary shard format"): its one Python home.

A shard holds its inner chunks and an index at its start or end: per inner chunk
(C order of the inner chunk grid) two uint64, the chunk's offset and nbytes in
the shard, both 2^64-1 for an empty chunk, big- or little-endian as the index
codecs say, then the 4-byte little-endian crc32c of those pairs if the index
codecs end in ``crc32c``.  The layout's numbers are the kernels'
(``_kernels/shard.pxd``, read here through ``shard.pyx``: ``ENTRY_BYTES``,
``CRC_BYTES``, ``EMPTY``); the kernels assemble shards natively
(``assemble_shard``, ``WriteBatch.shard`` / ``write_shard``), given
``IndexFormat.kernel_args()``.

No I/O here: engine.sharding.index reads indexes from store snapshots and
caches them, through :meth:`IndexFormat.span`, :meth:`IndexFormat.decode`,
:func:`check_index` and :func:`offset_by`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc._kernels import shard as kernel
from zarrc._kernels.crc32c import crc32c
from zarrc.errors import ChecksumError, CodecError

ENTRY_BYTES: int = kernel.ENTRY_BYTES    # an inner chunk's entry: offset, nbytes (uint64 each)
CRC_BYTES: int = kernel.CRC_BYTES        # the crc32c after the entries
EMPTY = np.uint64(kernel.EMPTY)          # an empty inner chunk's offset and nbytes
DAMAGED = np.uint64(kernel.DAMAGED)      # a damaged entry's offset and nbytes (see check_index)


@dataclass(frozen=True)
class IndexFormat:
    """How one ``sharding_indexed`` codec stores its index: at the shard's start
    (``at_start``) or end, its uint64 big-endian (``big_endian``) or little-endian,
    followed by a crc32c (``crc``) or not."""

    at_start: bool
    big_endian: bool
    crc: bool

    def kernel_args(self) -> tuple[bool, bool, bool]:
        """(index_at_start, index_big_endian, index_crc): the arguments the kernels'
        shard assembly takes (``assemble_shard``, ``WriteBatch.shard`` /
        ``write_shard``)."""
        return self.at_start, self.big_endian, self.crc

    def nbytes(self, nchunks: int) -> int:
        """Bytes of the index of ``nchunks`` inner chunks."""
        return kernel.index_nbytes(nchunks, self.crc)

    def span(self, nchunks: int, size: int | None, where: str) -> tuple[int, int, int | None]:
        """Where the index of ``nchunks`` inner chunks lies in a shard of ``size``
        bytes (None: unknown): (its first byte, counted from the shard's end when
        negative, which only an unknown size gives; the start and end of the bytes
        the entries may point into, the end None when unknown).  Raises CodecError
        for a shard smaller than its index (``where`` names it)."""
        n = self.nbytes(nchunks)
        if size is not None and size < n:
            raise CodecError(f"{where}: shard holds {size} bytes, less than its {n}-byte index")
        if self.at_start:
            return 0, n, size
        if size is None:
            return -n, 0, None
        return size - n, 0, size - n

    def decode(self, raw: Any, nchunks: int, where: str) -> np.ndarray:
        """The (nchunks, 2) uint64 (offset, nbytes) table of an encoded index (a new
        array, native byte order).  Raises CodecError for a wrong size,
        ChecksumError for a crc32c mismatch (``where`` names the shard)."""
        expected = self.nbytes(nchunks)
        raw = memoryview(raw).cast("B")
        if raw.nbytes != expected:
            raise CodecError(f"{where}: shard index holds {raw.nbytes} bytes, {expected} expected "
                             f"for {nchunks} inner chunks")
        if self.crc:
            stored = int.from_bytes(raw[-CRC_BYTES:], "little")
            computed = crc32c(raw[:-CRC_BYTES])
            if stored != computed:
                raise ChecksumError(f"{where}: shard index checksum mismatch: stored 0x{stored:08x}, "
                                    f"computed 0x{computed:08x}")
        table = np.frombuffer(raw, dtype=self._dtype(), count=2 * nchunks)
        return table.reshape(nchunks, 2).astype(np.uint64)

    def parse(self, blob: bytes, nchunks: int, where: str) -> tuple[np.ndarray, dict[int, str]]:
        """The checked index (see decode, check_index) of a whole shard held in
        memory, its offsets within ``blob``, and its damaged entries (entry -> what
        is wrong).  Raises CodecError, ChecksumError for the whole shard."""
        at, data_start, data_end = self.span(nchunks, len(blob), where)
        table = self.decode(blob[at:at + self.nbytes(nchunks)], nchunks, where)
        return table, check_index(table, data_start, data_end)

    def encode(self, table: np.ndarray) -> bytes:
        """The stored bytes of the index ``table`` ((n, 2) (offset, nbytes) pairs)."""
        pairs = np.ascontiguousarray(table, self._dtype()).tobytes()
        return pairs + (crc32c(pairs).to_bytes(CRC_BYTES, "little") if self.crc else b"")

    def empty(self, nchunks: int) -> bytes:
        """The stored bytes of a shard of ``nchunks`` inner chunks, all empty: its index only."""
        return self.encode(np.full((nchunks, 2), EMPTY, np.uint64))

    def assemble(self, parts: list[Any]) -> bytes | None:
        """A shard built natively from its inner chunks in C order (see
        ``_kernels.shard.assemble_shard``: each None, bytes or (bytes, offset,
        length)) and its index; None if every inner chunk is empty."""
        return kernel.assemble_shard(parts, self.at_start, self.big_endian, self.crc)

    def _dtype(self) -> str:
        return ">u8" if self.big_endian else "<u8"


def check_index(table: np.ndarray, data_start: int, data_end: int | None) -> dict[int, str]:
    """Check a decoded shard index ((n, 2) uint64 (offset, nbytes), C-contiguous,
    modified in place): each entry empty (both 2^64-1) or a byte range inside
    [data_start, data_end) (data_end None: unknown), no two ranges overlapping.  A
    damaged entry (half empty, outside the data, its end past 2^64, overlapping
    another: both of an overlapping pair, for which one is right cannot be told) is
    marked DAMAGED (offset and nbytes), so that it fails the reads of its inner chunk
    only (``damaged_error``) and the shard's other inner chunks still read.  Returns
    what is wrong with each damaged entry, by entry number (empty: none).
    A sound index in offset order is checked in one native pass without temporaries
    (``kernel.check_index``: a shard of 65,536 inner chunks in well under a
    millisecond); the entries are sorted and each problem worded only otherwise."""
    if table.dtype == np.uint64 and table.flags.c_contiguous:
        code, _, _ = kernel.check_index(table, data_start, 0 if data_end is None else data_end,
                                        data_end is not None)
        if code == kernel.INDEX_OK:
            return {}
    return _damaged_entries(table, data_start, data_end)


def _damaged_entries(table: np.ndarray, data_start: int, data_end: int | None) -> dict[int, str]:
    """check_index's numpy pass: the problems of an index the native pass did not
    find sound (out of offset order, or damaged), its damaged entries marked."""
    offsets, nbytes = table[:, 0].copy(), table[:, 1].copy()
    empty = (offsets == EMPTY) & (nbytes == EMPTY)
    half = (offsets == EMPTY) ^ (nbytes == EMPTY)
    problems: dict[int, str] = {}
    for i in np.flatnonzero(half).tolist():
        problems[i] = f"half empty (offset {int(offsets[i])}, nbytes {int(nbytes[i])})"
    used = np.flatnonzero(~empty & ~half)
    off = offsets[used]
    end = off + nbytes[used]                     # wraps around for absurd values: end < off
    wraps = end < off
    outside = off < np.uint64(data_start)
    if data_end is not None:
        outside |= end > np.uint64(data_end)
    limit = data_end if data_end is not None else "its end"
    for k in np.flatnonzero(wraps | outside).tolist():
        i = int(used[k])
        o, n = int(offsets[i]), int(nbytes[i])
        problems[i] = (f"offset {o} + nbytes {n} is past 2^64" if wraps[k] else
                       f"bytes [{o}, {o + n}) lie outside the shard's data [{data_start}, {limit})")
    good = used[~(wraps | outside)]
    if len(good) > 1:
        order = good[np.argsort(offsets[good], kind="stable")]
        starts, ends = offsets[order], offsets[order] + nbytes[order]
        # an entry overlaps a later one iff it ends after the next one starts; an
        # earlier one iff it starts before the furthest end of those before it
        later = np.flatnonzero(ends[:-1] > starts[1:])
        reach = np.maximum.accumulate(ends)
        holder = _running_argmax(ends)
        earlier = np.flatnonzero(starts[1:] < reach[:-1]) + 1
        for k in later.tolist():
            problems.setdefault(int(order[k]), _overlap(order, starts, ends, k, k + 1))
        for k in earlier.tolist():
            problems.setdefault(int(order[k]), _overlap(order, starts, ends, k, int(holder[k - 1])))
    if problems:
        table[list(problems)] = DAMAGED
    return problems


def _running_argmax(values: np.ndarray) -> np.ndarray:
    """Per position, where the largest of ``values`` up to it first is."""
    reach = np.maximum.accumulate(values)
    new = np.r_[True, reach[1:] > reach[:-1]]
    return np.maximum.accumulate(np.where(new, np.arange(len(values)), 0))


def _overlap(order: np.ndarray, starts: np.ndarray, ends: np.ndarray, k: int, other: int) -> str:
    return (f"bytes [{int(starts[k])}, {int(ends[k])}) overlap those of entry {int(order[other])} "
            f"[{int(starts[other])}, {int(ends[other])})")


class DamagedShardError(CodecError):
    """The error of a whole shard decoded (engine.sharding.codec.ShardCodec) whose
    index has damaged entries (check_index), naming the first.  ``partial``: the
    shard's contents with those inner chunks at the fill value; ``damaged``: a bool
    array of the shard's shape, True where they lie; ``codec``: the codec that
    decoded it.  A read (or a write) that does not need those elements may use
    ``partial`` (engine.python)."""

    partial: Any = None
    damaged: Any = None
    codec: Any = None


def damaged_error(where: str, entry: int, cps: tuple[int, ...], problem: str,
                  chunk: tuple[int, ...] | None = None) -> CodecError:
    """The error of a read of an inner chunk whose index entry is damaged (see
    check_index): ``where`` names the shard, ``entry`` is the inner chunk's number
    in it (C order of its ``cps`` inner chunks per dimension), ``problem`` what is
    wrong, ``chunk`` the chunk's coordinates in the array (if known)."""
    corner = tuple(int(c) for c in np.unravel_index(entry, cps)) if cps else ()
    in_array = f", chunk {chunk} of the array" if chunk is not None else ""
    return CodecError(f"{where}: inner chunk {corner} (shard index entry {entry}{in_array}) cannot be read: "
                      f"its index entry is damaged: {problem} (the shard's other inner chunks read)")


def offset_by(table: np.ndarray, start: int) -> np.ndarray:
    """A copy of the index ``table`` with ``start`` added to the offset of each
    non-empty entry (a sub-shard's index made relative to its container); ``table``
    itself when ``start`` is 0."""
    if start == 0:
        return table
    table = table.copy()
    used = table[:, 0] < DAMAGED            # (not empty, not damaged)
    table[used, 0] += np.uint64(start)
    return table
