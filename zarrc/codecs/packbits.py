"""The packbits codec (v3 ``packbits``, zarr-extensions): an array -> bytes codec
that stores only bits ``first_bit`` .. ``last_bit`` of each element's components,
packed one after the other (least significant bit first), with optionally one
byte before (``"first_byte"``) or after (``"last_byte"``) giving the number of
padding bits.

Data types: bool (1 bit), int2 / uint2 (2), int4 / uint4 / float4_e2m1fn (4),
float6_e2m3fn / float6_e3m2fn (6), and the integer, float and complex types,
bfloat16 and the float8 types at their full width (little-endian, as the bytes
codec).  The packing itself is the kernels' (``zarrc._kernels.bits``, without
the GIL); chains with packbits run chunk by chunk through ``ChainChunkCodec``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc._kernels import bits as k
from zarrc.codecs._base import Codec, Fail, NativeStep, codec_fail
from zarrc.codecs.registry import register
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import ARRAY_TO_BYTES, required_members
from zarrc.metadata.common import describe, fail, is_int
from zarrc.metadata.dtypes import DataType
from zarrc.metadata.dtypes_ml import SUB_BYTE_BITS, ml_name

PADDINGS = ("none", "first_byte", "last_byte")     # (the kernel's 0, 1, 2)
MEMBERS = ("padding_encoding", "first_bit", "last_bit")


def layout(dtype: np.dtype) -> tuple[int, int, int, bool]:
    """(components per item, bytes per component, significant bits per component,
    signed) of items of ``dtype``; CodecError for types packbits does not take."""
    dtype = np.dtype(dtype)
    name = ml_name(dtype)
    if name is not None:
        bits = SUB_BYTE_BITS.get(name, 8 * dtype.itemsize)
        return 1, dtype.itemsize, bits, name in ("int2", "int4")
    if dtype.kind == "b":
        return 1, 1, 1, False
    if dtype.kind in "iuf" and dtype.itemsize in (1, 2, 4, 8):
        return 1, dtype.itemsize, 8 * dtype.itemsize, dtype.kind == "i"
    if dtype.kind == "c":
        return 2, dtype.itemsize // 2, 4 * dtype.itemsize, False
    raise CodecError(f"packbits: data type {dtype} is not supported")


def check_options(padding_encoding: Any, first_bit: Any, last_bit: Any, complain: Fail) -> None:
    """The spec's checks on the members (the data type's width is checked when
    the codec is prepared for it)."""
    if padding_encoding not in PADDINGS:
        complain("padding_encoding", padding_encoding, f"must be one of {', '.join(PADDINGS)}")
    for key, value in (("first_bit", first_bit), ("last_bit", last_bit)):
        if value is not None and not (is_int(value) and value >= 0):
            complain(key, value, "must be null or a non-negative integer")
    if first_bit is not None and last_bit is not None and last_bit < first_bit:
        complain("last_bit", last_bit, f"must not be less than first_bit {first_bit}")


@dataclass(frozen=True)
class PackBitsStep(NativeStep):
    """The kernels' packbits step (first in the prepared Chain's encode order)."""

    kind = "packbits"
    component_size: int
    first_bit: int
    last_bit: int
    nbits: int
    signed: bool
    padding: int


@register
class PackBits(Codec):
    """array -> bytes: each element's bits ``first_bit`` .. ``last_bit`` packed;
    ``padding_encoding`` "none" (default), "first_byte" or "last_byte"."""

    name = "packbits"
    codec_id = "packbits"
    category = ARRAY_TO_BYTES
    # (not fixed_size: zarrc's shard indexes are bytes [+ crc32c] only)

    def __init__(self, padding_encoding: str = "none", first_bit: int | None = None,
                 last_bit: int | None = None) -> None:
        check_options(padding_encoding, first_bit, last_bit, codec_fail(self.name))
        self.padding_encoding = padding_encoding
        self.first_bit = first_bit
        self.last_bit = last_bit

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """padding_encoding, first_bit, last_bit as given (null bits dropped); the
        bit range checked against the data type."""
        required_members(config, (), MEMBERS)
        padding = config.get("padding_encoding", "none")
        first, last = config.get("first_bit"), config.get("last_bit")
        check_options(padding, first, last, fail)
        try:
            _, _, nbits, _ = layout(data_type.dtype)
        except CodecError:
            raise MetadataError(f"packbits cannot encode data type {data_type.name}") from None
        if (last if last is not None else nbits - 1) >= nbits or (first or 0) >= nbits:
            raise MetadataError(f"packbits: bits {describe(first)}..{describe(last)} are not within the "
                                f"{nbits} bits of data type {data_type.name}")
        out: dict[str, Any] = {}
        if "padding_encoding" in config:
            out["padding_encoding"] = padding
        if first is not None:
            out["first_bit"] = first
        if last is not None:
            out["last_bit"] = last
        return out

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> PackBits:
        codec = cls.__new__(cls)
        codec.padding_encoding = configuration.get("padding_encoding", "none")
        codec.first_bit = configuration.get("first_bit")
        codec.last_bit = configuration.get("last_bit")
        return codec

    def _bits(self, nbits: int) -> tuple[int, int]:
        first = self.first_bit or 0
        last = nbits - 1 if self.last_bit is None else self.last_bit
        if last >= nbits:
            raise CodecError(f"packbits: last_bit {last} is beyond the {nbits} bits of the data type")
        return first, last

    def array_step(self, dtype: np.dtype) -> PackBitsStep | None:
        """The kernel step packing items of ``dtype`` (None for a type it does not take)."""
        try:
            _, size, nbits, signed = layout(dtype)
            first, last = self._bits(nbits)
        except CodecError:
            return None
        return PackBitsStep(size, first, last, nbits, signed, PADDINGS.index(self.padding_encoding))

    def swaps(self, itemsize: int) -> bool:
        """True on a big-endian machine for items of more than a byte: the packing
        reads little-endian components (the kernels swap them first)."""
        return itemsize > 1 and sys.byteorder == "big"

    def pack(self, arr: np.ndarray) -> bytes:
        """The chunk ``arr`` (C order) packed, with its padding byte if any."""
        ncomp, size, nbits, _ = layout(arr.dtype)
        first, last = self._bits(nbits)
        src = np.ascontiguousarray(arr)
        if size > 1 and (src.dtype.byteorder == ">" or (sys.byteorder == "big" and src.dtype.isnative)):
            src = src.byteswap()            # the bits are those of the little-endian value
        raw = src.reshape(-1).view(np.uint8)
        count = src.size * ncomp
        body = k.packed_size(count, first, last)
        pad = (-count * (last - first + 1)) % 8
        out = np.zeros(body + (self.padding_encoding != "none"), dtype=np.uint8)
        if self.padding_encoding == "first_byte":
            out[0] = pad
            k.pack(raw, size, first, last, nbits, out[1:])
        else:
            k.pack(raw, size, first, last, nbits, out[:body])
            if self.padding_encoding == "last_byte":
                out[body] = pad
        return out.tobytes()

    def unpack(self, data: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The chunk of ``shape`` and native-order ``dtype`` from its packed bytes;
        CodecError if the size or the padding byte is not what it must be."""
        ncomp, size, nbits, signed = layout(dtype)
        first, last = self._bits(nbits)
        src = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        count = math.prod(shape) * ncomp
        body = k.packed_size(count, first, last)
        extra = int(self.padding_encoding != "none")
        if src.size != body + extra:
            raise CodecError(f"packbits: chunk holds {src.size} bytes, {body + extra} expected "
                             f"(chunk shape {list(shape)}, {dtype})")
        if extra:
            pad = (-count * (last - first + 1)) % 8
            stored = int(src[0] if self.padding_encoding == "first_byte" else src[body])
            if stored != pad:
                raise CodecError(f"packbits: the padding byte says {stored} bits, {pad} expected")
            src = src[1:] if self.padding_encoding == "first_byte" else src[:body]
        out = np.empty(math.prod(shape), dtype=dtype)
        k.unpack(np.ascontiguousarray(src), size, first, last, nbits, signed, out.view(np.uint8))
        if size > 1 and sys.byteorder == "big":
            out = out.byteswap()
        return out.reshape(shape)

    def configuration(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"padding_encoding": self.padding_encoding}
        if self.first_bit is not None:
            conf["first_bit"] = self.first_bit
        if self.last_bit is not None:
            conf["last_bit"] = self.last_bit
        return conf
