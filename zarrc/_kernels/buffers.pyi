"""Buffers for the codec modules (see buffers.pyx)."""

from typing import Any

from typing_extensions import Self

# (the arguments go to the classes' __cinit__, which Cython runs from tp_new: hence
# __new__ in these stubs)

class View:
    def __new__(cls, obj: Any, writable: bool = False) -> Self: ...

class NewBytes:
    def __new__(cls, n: int) -> Self: ...
    def __buffer__(self, flags: int) -> memoryview: ...
    def take(self) -> bytes: ...
