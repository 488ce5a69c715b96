"""The transpose codec (v3 ``transpose``): the chunk is stored as
``chunk.transpose(order)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrc.codecs._base import Codec
from zarrc.codecs.registry import register
from zarrc.errors import CodecError
from zarrc.metadata.codecs import ARRAY_TO_ARRAY, required_members
from zarrc.metadata.common import fail, is_int
from zarrc.metadata.dtypes import DataType


@register
class Transpose(Codec):
    """array -> array: permute the chunk's dimensions by ``order`` (a permutation of
    0..ndim-1) before the array -> bytes codec."""

    name = "transpose"
    codec_id = "transpose"
    category = ARRAY_TO_ARRAY
    fixed_size = True

    def __init__(self, order) -> None:
        try:
            perm = tuple(int(o) for o in order)
        except (TypeError, ValueError):
            raise CodecError(f"transpose: order must be a sequence of integers, got {order!r}") from None
        if sorted(perm) != list(range(len(perm))):
            raise CodecError(f"transpose: order {list(perm)} is not a permutation of 0..{len(perm) - 1}")
        self.order = perm

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """order: a permutation of the dimensions of the chunk it receives."""
        required_members(config, ("order",))
        order = config["order"]
        if (not isinstance(order, (list, tuple)) or not all(is_int(i) for i in order)
                or sorted(order) != list(range(len(shape)))):
            fail("order", order,
                 f"must be a permutation of 0..{len(shape) - 1} (the chunk has {len(shape)} dimensions)")
        return {"order": tuple(order)}

    @classmethod
    def spec_shape(cls, config: Mapping[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
        """The chunk's shape in the stored order."""
        return tuple(shape[k] for k in config["order"])

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Transpose:
        codec = cls.__new__(cls)
        codec.order = tuple(configuration["order"])
        return codec

    def configuration(self) -> dict[str, Any]:
        return {"order": list(self.order)}
