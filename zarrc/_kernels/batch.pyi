"""What the read and write batches share (see batch.pyx).  run() releases the GIL."""


from zarrc._kernels.chain import Chain

CHECKSUM: int
IO: int

class TaskError(Exception):
    code: int
    expected: int
    actual: int
    def __init__(self, message: str, code: int, expected: int, actual: int) -> None: ...

class _Batch:
    chain: Chain
    ntasks: int
    def run(self) -> None: ...
    def first_error(self) -> tuple[int, TaskError | MemoryError] | None: ...
    def close_files(self) -> None: ...

def mark_pool_thread() -> None: ...
def count_calls(delta: int) -> int: ...
