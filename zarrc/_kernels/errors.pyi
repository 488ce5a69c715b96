"""The kernels' error codes and KernelError (see errors.pyx)."""

class KernelError(Exception):
    codec: str
    code: int
    expected: int
    actual: int
    def __init__(self, message: str, codec: str, code: int, expected: int, actual: int) -> None: ...

CORRUPT: int
TRUNCATED: int
SIZE: int
TOO_LARGE: int
PARAM: int
UNSUPPORTED: int
CHECKSUM: int
IO: int
VALUE: int
