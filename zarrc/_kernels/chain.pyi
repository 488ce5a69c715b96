"""The prepared codec chain (see chain.pyx)."""

from typing import Any

class Chain:
    chunk_nbytes: int
    itemsize: int
    nitems: int
    swap_unit: int
    c_layout: bool
    ncodecs: int
    nvalue_codecs: int
    stored_itemsize: int
    def __init__(self, steps: list[tuple[Any, ...]], chunk_shape: tuple[int, ...], itemsize: int,
                 swap_unit: int = 0, order: Any = None, values: list[tuple[Any, ...]] | None = None,
                 stored_swap: int = 0) -> None: ...
