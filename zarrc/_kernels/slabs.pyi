"""Read outputs of 256 KiB to 2 MiB carved from huge-page slabs (tests use these)."""

from typing import Any

import numpy as np

SLAB_BYTES: int
SLAB_MIN_BYTES: int

def empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray: ...
def in_use() -> tuple[tuple[int, int], bool]: ...
