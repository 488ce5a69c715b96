"""Memory for read outputs of 256 KiB and more: huge-page slabs and mappings, kept
in a pool for the next reads when the outputs die (tests use these)."""

from typing import Any, final

import numpy as np

SLAB_BYTES: int
SLAB_MIN_BYTES: int
HELD_MAX_BYTES: int

def empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray: ...
def in_use() -> tuple[int, int]: ...
def held_bytes() -> int: ...
def pooled_mappings() -> list[int]: ...
def pool_limit() -> int: ...
def set_pool_limit(nbytes: int) -> None: ...

# (cdef classes declared @cython.final: not subclassable at runtime)

@final
class Slab:
    """A huge-page slab (made natively only)."""

@final
class Piece:
    """Bytes of a slab, a numpy array's base (made natively only)."""
    def __buffer__(self, flags: int) -> memoryview: ...

@final
class Block:
    """A mapping of its own for one output, a numpy array's base (made natively only)."""
    def __buffer__(self, flags: int) -> memoryview: ...
