"""Orthogonal, coordinate and mask reads and an orthogonal write on a rectilinear grid
of many distinct chunk shapes (edges 20..59 on both dimensions of 4000^2 uint16,
about 1300 shapes in 9800 chunks) against a regular grid of 40^2 chunks (zarrc both),
interleaved, medians.  ``CPU=1``: one thread, process CPU time (less blurred by other
work on the machine).

    .venv/bin/python bench/rectilinear_shapes.py [repeats]
"""
import os
import sys
import tempfile
import time

import numpy as np

import zarrc

rng = np.random.default_rng(0)
N = 4000
# 1-d edges: many distinct lengths (20..59), per dimension
def edges(n):
    out, tot = [], 0
    while tot < n:
        e = min(int(rng.integers(20, 60)), n - tot); out.append(e); tot += e
    return out
ex, ey = edges(N), edges(N)
data = (np.arange(N * N, dtype=np.uint16).reshape(N, N) * 7) % 1000
root = tempfile.mkdtemp()
arrs = {}
for kind, chunks in (("rect", [ex, ey]), ("regular", (40, 40))):
    a = zarrc.create_array(os.path.join(root, kind), shape=data.shape, dtype=data.dtype, chunks=chunks,
                           compressors={"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}})
    a[...] = data
    arrs[kind] = a
nshapes = len(set(ex)) * len(set(ey))
ix = np.sort(rng.choice(N, 1500, replace=False)); iy = np.sort(rng.choice(N, 1500, replace=False))
px = rng.integers(0, N, 200000); py = rng.integers(0, N, 200000)
mask = np.zeros((N, N), bool); mask[px, py] = True
ops = {
    "orthogonal 1500x1500": lambda a: a.oindex[ix, iy],
    "coordinate 200k": lambda a: a.vindex[px, py],
    "mask 200k": lambda a: a.vindex[mask],
    "orth write 150x150": lambda a: a.oindex.__setitem__((ix[::10], iy[::10]), data[np.ix_(ix[::10], iy[::10])]),
}
res = {}
clock = time.process_time if os.environ.get("CPU") else time.perf_counter
if os.environ.get("CPU"):
    zarrc.config.set(threads=1)
print("clock", clock.__name__, "threads", zarrc.config.threads if hasattr(zarrc.config, "threads") else "?")
for name, fn in ops.items():
    for kind, a in arrs.items():
        fn(a)
    tsd = {k: [] for k in arrs}
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 7):
        for kind, a in arrs.items():        # (interleaved: load drifts hit both)
            t = clock(); fn(a); tsd[kind].append(clock() - t)
    for kind in arrs:
        res[(name, kind)] = float(np.median(tsd[kind])) * 1e3
    print(f"{name:24s} rect {res[(name,'rect')]:8.1f} ms  regular {res[(name,'regular')]:8.1f} ms  ratio {res[(name,'rect')]/res[(name,'regular')]:.2f}  load {os.getloadavg()[0]:.1f}", flush=True)
assert (arrs["rect"].oindex[ix, iy] == data[np.ix_(ix, iy)]).all()
print("distinct shapes", nshapes, "chunks", len(ex) * len(ey), "load", os.getloadavg())
