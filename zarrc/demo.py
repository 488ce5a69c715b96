"""zarrc demo: write a simulation-like dataset as Zarr v3, read it back, report.

Run ``python -m zarrc.demo [--size N] [--dir PATH] [--threads N]``.

It builds an N^3 float32 temperature field and a uint16 density field (smooth
waves plus noisy low bits), writes them into a Zarr v3 hierarchy (a chunked
blosc-lz4 array and a sharded zstd array, with attributes and dimension names),
then reads the whole arrays, slabs, single chunks and single elements back,
checks every read bit for bit against the source, and prints sizes, compression
ratios, timings and throughput.  It also writes a Zarr v2 copy of the density
field (Fortran order) with a variable-length string array, and consolidates the
metadata of both hierarchies.  The dataset is readable by zarr-python and
tensorstore (the directory is kept when --dir is given).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np

import zarrc
from zarrc._kernels import library_versions
from zarrc._kernels.crc32c import crc32c_hardware


def make_field(n: int, dtype: str, seed: int = 0) -> np.ndarray:
    """An (n, n, n) field: smooth waves plus small noise in the low bits."""
    z, y, x = np.ogrid[:n, :n, :n]
    scale = np.float32(6.0 / n)
    field = (np.sin(x * scale + np.float32(0.3) * z * scale) * np.cos(y * scale) * np.float32(40)
             + np.float32(280)).astype(np.float32)
    noise = np.random.default_rng(seed).normal(0, 0.01, field.shape).astype(np.float32)
    if dtype == "uint16":
        return ((field - 240) * 50 + noise * 100).astype(np.uint16)
    return field + noise


def stored_bytes(directory: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(directory) for f in files)


def stored_objects(directory: str) -> int:
    """The chunk or shard files under ``directory`` (its metadata documents not counted):
    what the store holds, one file per shard however many chunks each shard holds."""
    metadata = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}
    return sum(f not in metadata for _, _, files in os.walk(directory) for f in files)


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def run(n: int, directory: str) -> bool:
    print(f"zarrc {zarrc.__version__}: {n}^3 dataset in {directory}, {zarrc.config.threads} threads")
    print(f"native libraries {library_versions()}, crc32c in hardware: {crc32c_hardware()}\n")
    fields = {"temperature": make_field(n, "float32"), "density": make_field(n, "uint16", seed=1)}
    root = zarrc.open_group(directory, mode="w", attributes={"title": "zarrc demo", "grid": [n, n, n]})
    chunk = max(1, n // 4)
    arrays = {
        "temperature": root.create_array(
            "temperature", shape=(n, n, n), dtype="float32", chunks=(chunk,) * 3,
            compressors=zarrc.codecs.Blosc(cname="lz4", clevel=5, shuffle="shuffle"),
            dimension_names=["z", "y", "x"], attributes={"units": "K"}),
        "density": root.create_array(
            "density", shape=(n, n, n), dtype="uint16", chunks=(max(1, chunk // 2),) * 3,
            shards=(max(1, chunk // 2) * 2,) * 3, compressors=zarrc.codecs.Zstd(level=3),
            dimension_names=["z", "y", "x"], attributes={"units": "kg m-3 (scaled)"}),
    }
    ok = True
    for name, array in arrays.items():
        data = fields[name]
        _, t_write = timed(array.__setitem__, Ellipsis, data)
        size = stored_bytes(os.path.join(directory, name))
        back, t_read = timed(array.__getitem__, Ellipsis)
        same = np.array_equal(back.view(np.uint8), data.view(np.uint8))
        slab_sel = (slice(n // 3, n // 3 + max(1, n // 8)), slice(None), slice(None))
        slab, t_slab = timed(array.__getitem__, slab_sel)
        same &= np.array_equal(slab, data[slab_sel])
        element, t_one = timed(array.__getitem__, (n // 2, n // 3, n // 5))
        same &= element == data[n // 2, n // 3, n // 5]
        ok &= bool(same)
        layout = f"shards {array.shards} of chunks {array.chunks}" if array.shards else f"chunks {array.chunks}"
        print(f"/{name}: {array.shape} {array.dtype}, {layout}, {array.compressors[0]}")
        print(f"  stored {size / 2**20:.1f} MiB of {data.nbytes / 2**20:.1f} MiB "
              f"(ratio {data.nbytes / size:.2f}) in {stored_objects(os.path.join(directory, name))} "
              f"{'shard' if array.shards else 'chunk'} files ({array.nchunks_initialized} chunks)")
        print(f"  write {t_write:.3f} s ({data.nbytes / t_write / 1e9:.2f} GB/s), "
              f"full read {t_read:.3f} s ({data.nbytes / t_read / 1e9:.2f} GB/s), "
              f"slab {slab.shape} {t_slab * 1e3:.1f} ms, one element {t_one * 1e6:.0f} us")
        print(f"  {'bit-exact' if same else 'MISMATCH'}\n")
    ok &= v2_copy(os.path.join(directory + ".v2"), fields["density"])
    zarrc.consolidate_metadata(directory)
    opened = zarrc.open_group(directory, mode="r")
    print(f"consolidated metadata: the hierarchy opens from one document "
          f"(consolidated={opened.consolidated}); hierarchy:")
    print(opened.tree())
    print("\nall reads matched the written data bit for bit" if ok else "\nERROR: a read did not match")
    return ok


def v2_copy(directory: str, density: np.ndarray) -> bool:
    """Write density as Zarr v2 (blosc-lz4, Fortran order, "/" keys) next to a
    variable-length string array, consolidate, read both back."""
    n = density.shape[0]
    root = zarrc.group(directory, zarr_format=2, overwrite=True, attributes={"copy of": "density"})
    v2 = root.create_array("density", shape=density.shape, dtype="<u2", chunks=(max(1, n // 4),) * 3,
                           order="F", dimension_separator="/",
                           compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})
    _, t_write = timed(lambda: v2.__setitem__(Ellipsis, density))
    names = root.create_array("stations", shape=(4,), dtype=str, chunks=(2,))
    names[:] = ["Zürich", "Tromsø", "São Paulo", "東京"]
    zarrc.consolidate_metadata(directory)
    reopened = zarrc.open_group(directory, mode="r")

    def read_back(name: str) -> np.ndarray:
        """The whole of array ``name`` of the reopened group."""
        node = reopened[name]
        assert isinstance(node, zarrc.Array)       # (written above as an array)
        return node[...]

    back, t_read = timed(read_back, "density")
    same = np.array_equal(back, density) and read_back("stations").tolist() == names[...].tolist()
    print(f"Zarr v2 copy of /density (blosc-lz4, order F, consolidated .zmetadata): write {t_write:.3f} s, "
          f"read {t_read:.3f} s, stations {read_back('stations').tolist()}: "
          f"{'bit-exact' if same else 'MISMATCH'}\n")
    shutil.rmtree(directory)
    return bool(same)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="edge of the cubic arrays (default 256)")
    parser.add_argument("--dir", help="where to write the dataset (default: a temporary directory)")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        zarrc.config.set(threads=args.threads)
    if args.dir:
        return 0 if run(args.size, args.dir) else 1
    directory = tempfile.mkdtemp(prefix="zarrc-demo-")
    try:
        return 0 if run(args.size, os.path.join(directory, "demo.zarr")) else 1
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    raise SystemExit(main())
