"""The engine: runs planned selections of arrays on the native kernels.

From the bottom up: ``state`` (the prepared array), ``batch`` (the shared batch
primitives: plan assembly, chunk sources, running a batch, its errors),
``strategy`` (the interface) and one module per strategy (``native``,
``basic``, ``python``, ``point``; sharded arrays: the ``sharding`` package, which
holds all of sharding: indexes, reads, writes, the whole-shard codec), ``prepare``
(metadata -> state + the strategy, chosen once), ``locked`` (the locks of partial
writes) and ``api`` (the public calls; ``api.write``: every write's one entry).
"""

from zarrc.engine.api import read_into, write, write_from
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy

# (zarrc.engine.prepare is the module; its function: zarrc.engine.prepare.prepare)
__all__ = ["ChunkedArray", "Strategy", "read_into", "write", "write_from"]
