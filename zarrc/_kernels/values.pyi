"""Element-wise value kernels of cast_value and scale_offset (see values.pyx).  Release
the GIL while they run."""

from typing import Any

TYPE_CODES: dict[str, int]
ROUNDING: dict[str, int]
OUT_OF_RANGE: dict[str | None, int]
NOT_FINITE: int
OUT_OF_RANGE_VALUE: int
INEXACT: int

class Cast:
    def __init__(self, src: int, dst: int, rounding: int, out_of_range: int,
                 scalar_map: list[tuple[Any, Any]]) -> None: ...
    def run(self, src: Any, dst: Any, n: int) -> tuple[int, int, float] | None: ...

class ScaleOffset:
    def __init__(self, type: int, offset: Any, scale: Any) -> None: ...
    def run(self, decode: bool, src: Any, dst: Any, n: int) -> tuple[int, int] | None: ...

def bitround(data: Any, itemsize: int, mantissa: int, keepbits: int) -> None: ...
