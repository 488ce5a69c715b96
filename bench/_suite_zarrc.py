"""Measures of zarrc alone: the codec floor of a stored array and the peak memory of
a full read."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench._common import proc_status, reset_peak_rss
from bench._suite_cases import Dataset, Layout

METADATA_FILES = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}
EMPTY = (1 << 64) - 1  # shard index entry of a missing inner chunk


def stored_chunks(path: str, ds: Dataset, layout: Layout) -> list:
    """The encoded bytes of every stored chunk (every inner chunk of every shard)."""
    blobs: list = []
    for f in sorted(Path(path).rglob("*")):
        if not f.is_file() or f.name in METADATA_FILES:
            continue
        raw = f.read_bytes()
        if not layout.sharded:
            blobs.append(raw)
            continue
        n = math.prod(s // i for s, i in zip(ds.shards, ds.inner))
        index = np.frombuffer(raw, "<u8", count=2 * n, offset=len(raw) - 16 * n - 4).reshape(n, 2)
        blobs += [memoryview(raw)[o:o + nb] for o, nb in index.tolist() if o != EMPTY]
    return blobs


def _decoder(layout: Layout):
    """``decode(src, out) -> bytes written``: zarrc's kernel for the layout's compressor
    (one thread per call); the bytes codec alone is a copy."""
    try:
        from zarrc._kernels import blosc as kblosc
        from zarrc._kernels import deflate as kdeflate
        from zarrc._kernels import zstd as kzstd
    except ImportError:     # an install from before the kernels' split (bench_ab.py baselines)
        from zarrc._kernels import codecs as kblosc
        kdeflate = kzstd = kblosc

    if layout.compressor == "blosc":
        return lambda src, out: kblosc.blosc_decode_into(src, out, 1)
    if layout.compressor == "zstd":
        return kzstd.zstd_decode_into
    if layout.compressor == "gzip":
        return lambda src, out: kdeflate.inflate_into(src, out, 1)  # 1: gzip member

    def copy(src, out):
        np.copyto(out, np.frombuffer(src, np.uint8))
        return len(src)
    return copy


def codec_floor(path: str, ds: Dataset, layout: Layout, repeat: int, fresh: bool = False) -> list[float]:
    """Seconds to decode every stored chunk of the array at ``path`` with zarrc's
    kernels on all cores (``zarrc.runtime.threads.run_parallel``; the kernels release the
    GIL), compressed bytes already in memory, into preallocated, pre-touched buffers;
    with ``fresh``, into a new (untouched) buffer each time, its page faults timed."""
    from zarrc.runtime.threads import run_parallel

    blobs = stored_chunks(path, ds, layout)
    decode = _decoder(layout)
    chunk_nbytes = math.prod(layout.chunks(ds)) * np.dtype(ds.dtype).itemsize
    sizes = [0] * len(blobs)

    def buffers(alloc) -> list[np.ndarray]:
        buf = alloc(len(blobs) * chunk_nbytes, np.uint8)
        return [buf[i * chunk_nbytes:(i + 1) * chunk_nbytes] for i in range(len(blobs))]

    touched = None if fresh else buffers(np.zeros)

    def once() -> float:
        todo = iter(range(len(blobs)))  # shared: next() on it is atomic under the GIL
        t0 = time.perf_counter()
        outs = buffers(np.empty) if fresh else touched

        def work() -> None:
            for i in todo:
                sizes[i] = decode(blobs[i], outs[i])

        run_parallel(work, os.cpu_count() or 1)
        return time.perf_counter() - t0

    once()
    if set(sizes) != {chunk_nbytes} or len(blobs) * chunk_nbytes != ds.nbytes:
        raise RuntimeError(f"codec floor: {len(blobs)} chunks decoded to sizes {set(sizes)}, "
                           f"expected {chunk_nbytes} each, {ds.nbytes} in all")
    return [once() for _ in range(repeat)]


def peak_child(path: str) -> None:
    """In a fresh process: open ``path`` with zarrc, warm up (a one-element read: the
    first-call imports, the thread pool), reset VmHWM, read it all; print RSS before,
    VmHWM before and after, and the output's size (bytes) as JSON."""
    import zarrc

    a = zarrc.open_array(path, mode="r")
    a[tuple(slice(0, 1) for _ in a.shape)]
    reset = reset_peak_rss()
    before, hwm_before = proc_status("VmRSS"), proc_status("VmHWM")
    out = a[...]
    print(json.dumps({"rss_before": before, "hwm_before": hwm_before, "hwm_after": proc_status("VmHWM"),
                      "nbytes": out.nbytes, "hwm_reset": reset}))


def peak_memory(path: str) -> dict:
    """Peak RSS of a zarrc full read of ``path`` in a fresh process, minus the RSS just
    before the read (after import, open and a one-element read), as a multiple of the
    output's size.  Without a VmHWM reset the peak may include earlier use (an overestimate)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # holds `bench`, as imported here
    code = (f"import sys; sys.path.insert(0, {root!r}); "
            "from bench._suite_zarrc import peak_child; peak_child(sys.argv[1])")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    m = json.loads(out.stdout.strip().splitlines()[-1])
    m["multiple"] = (m["hwm_after"] - m["rss_before"]) / m["nbytes"]
    return m
