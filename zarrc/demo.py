"""zarrc demo: write and read a chunked dataset with zarrc's native codecs.

Run ``python -m zarrc.demo [--size-mib N] [--dir PATH] [--threads N]``.

It builds a simulation-like float32 field (smooth waves plus noisy low bits),
cuts it into 1 MiB chunks, and for each codec compresses every chunk on a thread
pool (the kernels release the GIL), writes the chunks as files, reads them back,
decodes them in parallel straight into the output array, checks the result is
bit-exact, and prints sizes, compression ratios and throughputs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from zarrc import codecs, config
from zarrc._kernels.codecs import crc32c_hardware, library_versions


def make_field(nbytes: int, seed: int = 0) -> np.ndarray:
    """A (n, 256, 256) float32 field: smooth waves plus small noise in the low bits."""
    n = max(1, nbytes // (256 * 256 * 4))
    z, y, x = np.meshgrid(np.linspace(0, 4, n, dtype=np.float32),
                          np.linspace(0, 6, 256, dtype=np.float32),
                          np.linspace(0, 6, 256, dtype=np.float32), indexing="ij")
    field = np.sin(x + 0.3 * z) * np.cos(y - 0.2 * z) * 100 + 20 * np.sin(0.5 * x * y)
    noise = np.random.default_rng(seed).normal(0, 0.01, field.shape).astype(np.float32)
    return (field + noise).astype(np.float32)


def run(size_mib: int, directory: str, threads: int) -> bool:
    data = make_field(size_mib << 20)
    chunks = data.reshape(-1, 1 << 18)  # 1 MiB chunks of float32
    print(f"zarrc demo: {data.shape} float32 field, {data.nbytes / 2**20:.0f} MiB in "
          f"{len(chunks)} chunks of 1 MiB, {threads} threads")
    print(f"libraries: {library_versions()}, crc32c hardware: {crc32c_hardware()}")
    print(f"chunk files under {directory}\n")
    table = [
        ("blosc lz4 shuffle", codecs.Blosc(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)),
        ("blosc zstd bitshuffle", codecs.Blosc(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=4)),
        ("zstd level 3", codecs.Zstd(level=3)),
        ("gzip level 1", codecs.Gzip(level=1)),
        ("crc32c", codecs.Crc32c()),
    ]
    print(f"{'codec':<24}{'stored MiB':>11}{'ratio':>7}{'encode GB/s':>13}{'decode GB/s':>13}  check")
    ok = True
    with ThreadPoolExecutor(threads) as pool:
        for label, codec in table:
            folder = os.path.join(directory, label.replace(" ", "_"))
            os.makedirs(folder, exist_ok=True)
            paths = [os.path.join(folder, str(i)) for i in range(len(chunks))]

            def write(i: int) -> int:
                encoded = codec.encode(chunks[i])
                with open(paths[i], "wb") as f:
                    f.write(encoded)
                return len(encoded)

            start = time.perf_counter()
            stored = sum(pool.map(write, range(len(chunks))))
            t_encode = time.perf_counter() - start

            out = np.empty_like(chunks)

            def read(i: int) -> None:
                with open(paths[i], "rb") as f:
                    codec.decode(f.read(), out=out[i])

            start = time.perf_counter()
            list(pool.map(read, range(len(chunks))))
            t_decode = time.perf_counter() - start
            same = bool(np.array_equal(out.view(np.uint32), chunks.view(np.uint32)))
            ok &= same
            print(f"{label:<24}{stored / 2**20:>11.1f}{data.nbytes / stored:>7.2f}"
                  f"{data.nbytes / t_encode / 1e9:>13.2f}{data.nbytes / t_decode / 1e9:>13.2f}"
                  f"  {'bit-exact' if same else 'MISMATCH'}")
    print("\nall codecs round-tripped bit-exactly" if ok else "\nERROR: a codec did not round-trip")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=64, help="dataset size (default 64)")
    parser.add_argument("--dir", help="where to write the chunks (default: a temporary dir)")
    parser.add_argument("--threads", type=int, default=config.threads)
    args = parser.parse_args(argv)
    if args.dir:
        return 0 if run(args.size_mib, args.dir, args.threads) else 1
    directory = tempfile.mkdtemp(prefix="zarrc-demo-")
    try:
        return 0 if run(args.size_mib, directory, args.threads) else 1
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    raise SystemExit(main())
