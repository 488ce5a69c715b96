"""Compiled kernels (Cython and C).  Nothing in here imports zarrc's Python modules.

One extension module per C library (blosc, zstd, deflate, crc32c), the library-free
errors and buffers they share, and the engine's kernels (plan, copy, shard, slabs,
chain, batch, read, write, chunk_files): see docs/architecture.md, "Kernels".
"""


def library_versions() -> dict[str, str]:
    """Versions of the C libraries the codec modules are linked with."""
    from zarrc._kernels import blosc, deflate, zstd

    return {"blosc": blosc.library_version(), "zstd": zstd.library_version(),
            "zlib": deflate.library_version()}
