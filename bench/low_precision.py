"""Low-precision data types (ml_dtypes): full reads and writes of a bfloat16 array
laid out as orbax checkpoints are (sharding_indexed, bytes + zstd inside) and of an
int4 array (bytes, one value per byte, and packbits), zarrc against tensorstore on
the same data in the same run.

    python bench/low_precision.py [--quick] [--repeat N]

bfloat16: 4096 x 4096 (--quick: 1024 x 1024) in shards of 1024 x 4096 with inner
chunks 256 x 4096, zstd level 1 (tensorstore writes it).  int4: 4096 x 4096 in
chunks of 512 x 512, zstd level 1, as ``bytes`` (tensorstore writes it; it has no
packbits) and as ``packbits`` (zarrc only).  Each read is checked bit for bit;
times are medians of interleaved runs; the ratio is tensorstore's time over zarrc's
(above 1: zarrc is faster).  Needs ml_dtypes and tensorstore.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import interleaved_times, print_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    import ml_dtypes
    import tensorstore as ts

    import zarrc

    n = 1024 if args.quick else 4096
    root = Path(tempfile.mkdtemp(prefix="zarrc-lowp-"))
    rng = np.random.default_rng(0)
    rows = []
    try:
        bf16 = rng.standard_normal((n, n)).astype(np.float32).astype(ml_dtypes.bfloat16)
        int4 = rng.integers(-8, 8, (n, n)).astype(ml_dtypes.int4)
        zstd = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
        cases = {
            "bfloat16 sharded (orbax)": (bf16, {
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n // 4, n]}},
                "codecs": [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [n // 16, n],
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, zstd],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "crc32c"}]}}]}),
            "int4 bytes": (int4, {
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n // 8, n // 8]}},
                "codecs": [{"name": "bytes"}, zstd]}),
        }
        for label, (data, meta) in cases.items():
            path = str(root / label.split()[0] / label.split()[1])
            spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
            t = ts.open({**spec, "metadata": {"shape": list(data.shape), "data_type": data.dtype.name, **meta}},
                        create=True).result()
            t.write(data).result()
            reader = ts.open({**spec, "context": {"cache_pool": {"total_bytes_limit": 0}}}).result()
            a = zarrc.open_array(path, mode="r")
            assert (a[...].view(np.uint8) == data.view(np.uint8)).all()
            times = interleaved_times({"zarrc": lambda a=a: a[...], "tensorstore": lambda r=reader: r.read().result()},
                                      args.repeat)
            z, tt = statistics.median(times["zarrc"]), statistics.median(times["tensorstore"])
            rows.append([label, "read", round(z * 1e3, 1), round(tt * 1e3, 1), round(tt / z, 2)])
        path = str(root / "int4" / "packbits")
        p = zarrc.create_array(path, shape=int4.shape, chunks=(n // 8, n // 8), dtype="int4",
                               serializer=zarrc.codecs.PackBits(), compressors=[zarrc.codecs.Zstd(level=1)])
        p[...] = int4
        assert (p[...].view(np.uint8) == int4.view(np.uint8)).all()
        times = interleaved_times({"read": lambda: p[...], "write": lambda: p.__setitem__(Ellipsis, int4)},
                                  args.repeat)
        for what in ("read", "write"):
            rows.append(["int4 packbits", what, round(statistics.median(times[what]) * 1e3, 1), None, None])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(rows, ["array", "op", "zarrc ms", "tensorstore ms", "ts / zarrc"])


if __name__ == "__main__":
    main()
