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

    def parse(self, blob: bytes, nchunks: int, where: str) -> np.ndarray:
        """The checked index (see decode, check_index) of a whole shard held in
        memory, its offsets within ``blob``.  Raises CodecError, ChecksumError."""
        at, data_start, data_end = self.span(nchunks, len(blob), where)
        table = self.decode(blob[at:at + self.nbytes(nchunks)], nchunks, where)
        check_index(table, data_start, data_end, where)
        return table

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


def check_index(table: np.ndarray, data_start: int, data_end: int | None, where: str) -> None:
    """Check a decoded shard index: each entry empty (both 2^64-1) or a byte range
    inside [data_start, data_end) (data_end None: unknown), and no two ranges
    overlapping.  Returns None; raises CodecError naming the first bad entry.
    One native pass without temporaries (``kernel.check_index``: a fresh read of a
    shard of 65,536 inner chunks checks its index in well under a millisecond);
    numpy sorts the entries only when they are not in offset order."""
    table = np.ascontiguousarray(table, np.uint64)
    code, i, j = kernel.check_index(table, data_start, 0 if data_end is None else data_end,
                                    data_end is not None)
    if code == kernel.INDEX_OK:
        return
    offsets, nbytes = table[:, 0], table[:, 1]
    if code == kernel.INDEX_HALF_EMPTY:
        raise CodecError(f"{where}: shard index entry {i} is half empty "
                         f"(offset {int(offsets[i])}, nbytes {int(nbytes[i])})")
    if code == kernel.INDEX_OUTSIDE:
        limit = data_end if data_end is not None else "end"
        raise CodecError(f"{where}: shard index entry {i} (offset {int(offsets[i])}, nbytes {int(nbytes[i])}) "
                         f"lies outside the shard's data [{data_start}, {limit})")
    if code == kernel.INDEX_UNSORTED:
        used = np.flatnonzero(offsets != EMPTY)
        order = np.argsort(offsets[used], kind="stable")
        starts, ends = offsets[used][order], (offsets[used] + nbytes[used])[order]
        overlap = np.flatnonzero(ends[:-1] > starts[1:])
        if not len(overlap):
            return
        i, j = int(used[order[overlap[0]]]), int(used[order[overlap[0] + 1]])
    raise CodecError(f"{where}: shard index entries {i} and {j} overlap")


def offset_by(table: np.ndarray, start: int) -> np.ndarray:
    """A copy of the index ``table`` with ``start`` added to the offset of each
    non-empty entry (a sub-shard's index made relative to its container); ``table``
    itself when ``start`` is 0."""
    if start == 0:
        return table
    table = table.copy()
    used = table[:, 0] != EMPTY
    table[used, 0] += np.uint64(start)
    return table
