"""One adapter per library: open an array for reading or writing, create one in a
given layout, and read or write a selection.  Libraries are imported on first use.

Library names: "zarrc", "zarr-python" (default config: async, its own thread pool),
"zarrs" (zarr-python with the zarrs codec pipeline) and "tensorstore" (driver
"zarr3" for v3, "zarr" for v2; default context, no cache pool).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

from bench._suite_cases import Dataset, Layout

LIBRARIES = ("zarrc", "zarr-python", "zarrs", "tensorstore")
_MODULES = {"zarrc": "zarrc", "zarr-python": "zarr", "zarrs": "zarrs", "tensorstore": "tensorstore"}


def available(names=LIBRARIES) -> list[str]:
    """The libraries in ``names`` that are installed (zarrs also needs zarr)."""
    found = [n for n in names if importlib.util.find_spec(_MODULES[n]) is not None]
    return [n for n in found if n != "zarrs" or importlib.util.find_spec("zarr") is not None]


def _zarr_config(lib: str):
    """zarr-python's config for ``lib``, used while an array is opened or created:
    the codec pipeline (and zarrs' settings) are bound to the array then."""
    import zarr

    if lib == "zarrs":  # strict: fail rather than fall back to zarr-python's pipeline
        return zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline",
                                "codec_pipeline.strict": True})
    return contextlib.nullcontext()


# -- codecs, in each library's terms ------------------------------------------------

def _v3_compressors(layout: Layout, ds: Dataset) -> list[dict]:
    itemsize = np.dtype(ds.dtype).itemsize
    return {
        None: [],
        "blosc": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                      "typesize": itemsize, "blocksize": 0}}],
        "zstd": [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
        "gzip": [{"name": "gzip", "configuration": {"level": 1}}],
    }[layout.compressor]


V2_BLOSC = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}


def _zarr_python_compressors(layout: Layout, ds: Dataset):
    import zarr.codecs

    if layout.zarr_format == 2:
        import numcodecs

        return numcodecs.get_codec(dict(V2_BLOSC))
    return {None: None,
            "blosc": zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),
            "zstd": zarr.codecs.ZstdCodec(level=3, checksum=False),
            "gzip": zarr.codecs.GzipCodec(level=1)}[layout.compressor]


def _ts_spec(path: str, layout: Layout, ds: Dataset | None = None) -> dict:
    """A tensorstore spec opening ``path``; with ``ds``, one creating it."""
    kvstore = {"driver": "file", "path": path}
    if ds is None:
        return {"driver": "zarr3" if layout.zarr_format == 3 else "zarr", "kvstore": kvstore}
    if layout.zarr_format == 2:
        metadata = {"shape": list(ds.shape), "chunks": list(ds.chunks), "dtype": np.dtype(ds.dtype).str,
                    "compressor": dict(V2_BLOSC), "filters": None, "order": "C", "fill_value": 0,
                    "dimension_separator": "."}
        return {"driver": "zarr", "kvstore": kvstore, "metadata": metadata}
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}] + _v3_compressors(layout, ds)
    grid = ds.chunks
    if layout.sharded:
        grid = ds.shards
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(ds.inner), "codecs": codecs, "index_location": "end",
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}]}}]
    metadata = {"shape": list(ds.shape), "data_type": np.dtype(ds.dtype).name, "fill_value": 0,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "codecs": codecs}
    return {"driver": "zarr3", "kvstore": kvstore, "metadata": metadata}


# -- adapters -----------------------------------------------------------------------

def create(lib: str, path: str, ds: Dataset, layout: Layout) -> Any:
    """A new, empty array at ``path`` (replacing anything there), opened for writing."""
    chunks = layout.chunks(ds)
    shards = ds.shards if layout.sharded else None
    if lib == "zarrc":
        import zarrc

        if layout.zarr_format == 2:
            return zarrc.create_array(path, shape=ds.shape, dtype=ds.dtype, chunks=chunks, zarr_format=2,
                                      compressors=dict(V2_BLOSC), fill_value=0, overwrite=True)
        return zarrc.create_array(path, shape=ds.shape, dtype=ds.dtype, chunks=chunks, shards=shards,
                                  compressors=_v3_compressors(layout, ds) or None, fill_value=0,
                                  overwrite=True)
    if lib in ("zarr-python", "zarrs"):
        import zarr

        with _zarr_config(lib):
            return zarr.create_array(path, shape=ds.shape, dtype=ds.dtype, chunks=chunks, shards=shards,
                                     compressors=_zarr_python_compressors(layout, ds), filters=None,
                                     fill_value=0, zarr_format=layout.zarr_format, overwrite=True)
    import tensorstore as ts

    return ts.open(_ts_spec(path, layout, ds), create=True, delete_existing=True).result()


def open_array(lib: str, path: str, layout: Layout, write: bool = False) -> Any:
    """The existing array at ``path``."""
    if lib == "zarrc":
        import zarrc

        return zarrc.open_array(path, mode="r+" if write else "r")
    if lib in ("zarr-python", "zarrs"):
        import zarr

        with _zarr_config(lib):
            return zarr.open_array(path, mode="r+" if write else "r")
    import tensorstore as ts

    return ts.open(_ts_spec(path, layout), open=True, read=True, write=write).result()


def reader(lib: str, handle: Any) -> Callable[[Any], Any]:
    """``read(selection)`` -> the selected values as a NumPy array (or scalar)."""
    if lib == "tensorstore":
        return lambda sel: handle[sel].read().result()
    return handle.__getitem__


def writer(lib: str, handle: Any) -> Callable[[Any, np.ndarray], None]:
    """``write(selection, values)``, returning once the data is stored."""
    if lib == "tensorstore":
        return lambda sel, values: handle[sel].write(values).result()
    return handle.__setitem__
