"""The sharding codec (v3 ``sharding_indexed``): many inner chunks in one stored
object (a shard), located through an index of (offset, nbytes) pairs at the start
or end of the shard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from zarrc._kernels import crc32c as k
from zarrc._kernels import shard as shard_layout
from zarrc.codecs._base import Codec
from zarrc.codecs.bytes import Bytes
from zarrc.codecs.chain import CodecChain
from zarrc.codecs.enums import plain
from zarrc.codecs.registry import codec_from_spec, register
from zarrc.errors import ChecksumError, CodecError, MetadataError
from zarrc.metadata.codecs import ARRAY_TO_BYTES, KINDS, default_serializer, parse_codecs, required_members
from zarrc.metadata.common import check_int_list, error_context, fail
from zarrc.metadata.dtypes import CORE_TYPES, DataType

EMPTY = np.uint64(shard_layout.EMPTY)
# the index codecs when none are named (zarr-python's default)
DEFAULT_INDEX_CODECS = ({"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"})


@register
class ShardingIndexed(Codec):
    """array -> bytes: the chunk (shard) is cut into inner chunks of ``chunk_shape``,
    each encoded with ``codecs``; ``index_codecs`` (bytes, optionally crc32c)
    encode the index, which sits at ``index_location`` "start" or "end"."""

    name = "sharding_indexed"
    codec_id = "sharding_indexed"
    category = ARRAY_TO_BYTES

    def __init__(self, chunk_shape, codecs=({"name": "bytes"},), index_codecs=DEFAULT_INDEX_CODECS,
                 index_location: str = "end") -> None:
        index_location = plain(index_location)              # (a ShardingCodecIndexLocation member)
        try:
            chunk_shape = tuple(int(c) for c in chunk_shape)
        except (TypeError, ValueError):
            raise MetadataError(f"sharding_indexed: chunk_shape {chunk_shape!r} is not a list of integers") from None
        if any(c < 1 for c in chunk_shape):
            raise MetadataError(f"sharding_indexed: chunk_shape {list(chunk_shape)} must be positive")
        if index_location not in ("start", "end"):
            raise MetadataError(f"sharding_indexed: index_location must be 'start' or 'end', got {index_location!r}")
        self._set(chunk_shape, codecs, index_codecs, index_location)

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """chunk_shape (dividing the shard's), codecs (parsed for the inner chunks;
        default: the data type's serializer), index_codecs (fixed-size codecs only;
        default: bytes little-endian + crc32c), index_location ("end")."""
        required_members(config, ("chunk_shape",), ("codecs", "index_codecs", "index_location"))
        inner = check_int_list("chunk_shape", config["chunk_shape"], minimum=1)
        if len(inner) != len(shape):
            fail("chunk_shape", config["chunk_shape"],
                 f"must have {len(shape)} dimensions like the shard shape {list(shape)}")
        if any(s % c for s, c in zip(shape, inner)):
            fail("chunk_shape", config["chunk_shape"], f"must evenly divide the shard shape {list(shape)}")
        location = config.get("index_location", "end")
        if location not in ("start", "end"):
            fail("index_location", location, 'must be "start" or "end"')
        with error_context('"codecs"'):
            codecs = parse_codecs(config.get("codecs", [default_serializer(data_type, complete=True)]),
                                  inner, data_type)
        index_shape = tuple(s // c for s, c in zip(shape, inner)) + (2,)
        with error_context('"index_codecs"'):
            index_codecs = parse_codecs(config.get("index_codecs", DEFAULT_INDEX_CODECS), index_shape,
                                        CORE_TYPES["uint64"])
            for i, codec in enumerate(index_codecs):
                kind = KINDS.get(codec.name)
                if codec.must_understand and not (kind is not None and kind.fixed_size):
                    raise MetadataError(f'[{i}] "{codec.name}": index codecs must have a fixed-size output')
        return {"chunk_shape": inner, "codecs": codecs, "index_codecs": index_codecs,
                "index_location": location}

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> ShardingIndexed:
        """From a validated spec configuration (its inner codecs CodecSpecs, not checked
        again); only the index codecs zarrc supports are checked."""
        codec = cls.__new__(cls)
        codec._set(tuple(configuration["chunk_shape"]), configuration["codecs"],
                   configuration["index_codecs"], configuration.get("index_location", "end"))
        return codec

    def _set(self, chunk_shape: tuple[int, ...], codecs: Any, index_codecs: Any, index_location: str) -> None:
        self.chunk_shape = chunk_shape
        self.index_location = index_location
        self.inner = CodecChain(codecs)
        index = [codec_from_spec(c) for c in index_codecs]
        names = [c.name for c in index]
        if names not in (["bytes"], ["bytes", "crc32c"]):
            raise MetadataError(f"sharding_indexed: index_codecs {names} not supported "
                                "(expected bytes, optionally followed by crc32c)")
        self.index_codecs = tuple(index)
        # (index[0] is the codec registered as "bytes": a Bytes)
        self.index_big_endian = cast(Bytes, index[0]).endian == "big"
        self.index_crc = len(index) == 2

    # ------------------------------------------------------------ layout

    def chunks_per_shard(self, shard_shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shard_shape) != len(self.chunk_shape) or any(
                s % c for s, c in zip(shard_shape, self.chunk_shape)):
            raise MetadataError(f"sharding_indexed: inner chunk shape {list(self.chunk_shape)} does not "
                                f"divide the shard shape {list(shard_shape)}")
        return tuple(s // c for s, c in zip(shard_shape, self.chunk_shape))

    def index_nbytes(self, nchunks: int) -> int:
        return shard_layout.index_nbytes(nchunks, self.index_crc)

    def decode_index(self, raw: Any, nchunks: int, where: str) -> np.ndarray:
        """The (nchunks, 2) uint64 (offset, nbytes) table from the encoded index.
        Raises CodecError for a wrong size, ChecksumError for a crc32c mismatch."""
        expected = self.index_nbytes(nchunks)
        raw = memoryview(raw).cast("B")
        if raw.nbytes != expected:
            raise CodecError(f"{where}: shard index holds {raw.nbytes} bytes, {expected} expected "
                             f"for {nchunks} inner chunks")
        if self.index_crc:
            crc = shard_layout.CRC_BYTES
            stored = int.from_bytes(raw[-crc:], "little")
            computed = k.crc32c(raw[:-crc])
            if stored != computed:
                raise ChecksumError(f"{where}: shard index checksum mismatch: stored 0x{stored:08x}, "
                                    f"computed 0x{computed:08x}")
        table = np.frombuffer(raw, dtype=">u8" if self.index_big_endian else "<u8", count=2 * nchunks)
        return table.reshape(nchunks, 2).astype(np.uint64)

    def configuration(self) -> dict[str, Any]:
        return {"chunk_shape": list(self.chunk_shape), "codecs": self.inner.to_dicts(),
                "index_codecs": [c.to_dict() for c in self.index_codecs],
                "index_location": self.index_location}


def check_index(table: np.ndarray, data_start: int, data_end: int | None, where: str) -> None:
    """Check a decoded shard index: each entry empty (both 2^64-1) or a byte range
    inside [data_start, data_end) (data_end None: unknown), and no two ranges
    overlapping.  Raises CodecError naming the first bad entry."""
    offsets, nbytes = table[:, 0], table[:, 1]
    empty = (offsets == EMPTY) & (nbytes == EMPTY)
    half = (offsets == EMPTY) ^ (nbytes == EMPTY)
    if half.any():
        i = int(np.flatnonzero(half)[0])
        raise CodecError(f"{where}: shard index entry {i} is half empty "
                         f"(offset {int(offsets[i])}, nbytes {int(nbytes[i])})")
    used = np.flatnonzero(~empty)
    if not len(used):
        return
    off = offsets[used]
    end = off + nbytes[used]                     # wraps around for absurd values: end < off
    bad = (off < np.uint64(data_start)) | (end < off)
    if data_end is not None:
        bad |= end > np.uint64(data_end)
    bad = np.flatnonzero(bad)
    limit = data_end if data_end is not None else "end"
    if len(bad):
        i = int(used[bad[0]])
        raise CodecError(f"{where}: shard index entry {i} (offset {int(offsets[i])}, nbytes {int(nbytes[i])}) "
                         f"lies outside the shard's data [{data_start}, {limit})")
    order = np.argsort(offsets[used], kind="stable")
    starts, ends = offsets[used][order], (offsets[used] + nbytes[used])[order]
    overlap = np.flatnonzero(ends[:-1] > starts[1:])
    if len(overlap):
        a, b = used[order[overlap[0]]], used[order[overlap[0] + 1]]
        raise CodecError(f"{where}: shard index entries {int(a)} and {int(b)} overlap")
