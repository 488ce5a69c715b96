"""Free-threading: every extension module declares that it does not need the GIL,
importing zarrc leaves a free-threaded interpreter's GIL off, and many Python
threads reading and writing arrays at once get the right results (with the GIL
here; without it on a free-threaded interpreter, where nothing orders them).
See docs/architecture.md, "Threads and free-threading"."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import zarrc

from helpers import CHAINS, random_data, run_threads

KERNELS = Path(__file__).resolve().parent.parent / "zarrc" / "_kernels"
PYX = sorted(KERNELS.glob("*.pyx"))
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
DIRECTIVE = re.compile(r"^#\s*cython:.*\bfreethreading_compatible\s*=\s*True\b")
# (scripts/wheel-test runs a copy of tests/ against an installed wheel: no sources there)
needs_sources = pytest.mark.skipif(not KERNELS.is_dir(), reason="the kernel sources are not beside the tests")


@needs_sources
def test_every_module_declares_freethreading_compatible():
    # the directive must be in the header line (a new module cannot forget it)
    assert len(PYX) >= 15, f"kernel sources not found in {KERNELS}"
    missing = [p.name for p in PYX if not DIRECTIVE.match(p.read_text().splitlines()[0])]
    assert not missing, f"no '# cython: freethreading_compatible=True' header: {missing}"


@needs_sources
def test_every_module_is_listed_with_a_source():
    # every extension the build makes is one of those .pyx files
    listed = re.findall(r"^\s*'(\w+)': \[", (KERNELS / "meson.build").read_text(), re.MULTILINE)
    assert sorted(listed) == sorted(p.stem for p in PYX)


@needs_sources
def test_generated_c_declares_gil_not_used():
    # where the meson build of this interpreter is at hand (editable installs), the
    # C that Cython generated makes Py_MOD_GIL_NOT_USED the module's default
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}{'t' if FREE_THREADED else ''}"
    built = {}
    for c in (KERNELS.parent.parent / "build" / tag / "zarrc" / "_kernels").glob("*.so.p/*.pyx.c"):
        built[c.name.removesuffix(".pyx.c")] = c
    if not built:
        pytest.skip("no meson build directory of this interpreter here (an installed wheel)")
    assert sorted(built) == sorted(p.stem for p in PYX)
    for name, c in built.items():
        defines = re.findall(r"#define __Pyx_FREETHREADING_COMPATIBLE (\w+)", c.read_text())
        assert defines and defines[-1] == "Py_MOD_GIL_NOT_USED", (name, defines)


@pytest.mark.skipif(not FREE_THREADED, reason="no free-threaded interpreter here")
def test_import_keeps_the_gil_off():
    import zarrc._kernels
    # the modules: the sources', and the installed ones (a wheel's, with no sources)
    kernels = Path(zarrc._kernels.__file__).parent
    names = {p.name.split(".")[0] for p in kernels.iterdir() if p.suffix in (".so", ".pyd")}
    names = sorted(names | {p.stem for p in PYX})
    assert len(names) >= 15, names
    modules = ["zarrc", "zarrc.codecs", *(f"zarrc._kernels.{n}" for n in names)]
    code = (
        "import importlib, sys, warnings\n"
        "warnings.simplefilter('error', RuntimeWarning)\n"   # 'the GIL has been enabled'
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "    assert not sys._is_gil_enabled(), f'importing {m} enabled the GIL'\n"
        # no GIL: the slab pool, which relies on one, is off (numpy allocates)
        "from zarrc._kernels import slabs\n"
        "x = slabs.empty((1 << 20,), 'u1')\n"
        "assert slabs.in_use() == (0, 0), slabs.in_use()\n"
        "print('ok')\n"
    )
    # without PYTHON_GIL: PYTHON_GIL=0 (which the wheel tests set for the rest of the
    # suite) keeps the GIL off whatever a module declares, and this checks the declarations
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_GIL"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ---------------------------------------------------------------- many threads at once

NTHREADS = 8

ARRAYS = {     # name -> create_array keywords (chunks of 8 rows, shards of 16)
    "blosc": dict(chunks=(8, 32), **CHAINS["blosc"](2)),
    "zstd+crc32c": dict(chunks=(8, 32), **CHAINS["zstd+crc32c"](2)),
    "gzip, big-endian": dict(chunks=(8, 32), **CHAINS["big-endian"](2)),
    "raw": dict(chunks=(8, 32), **CHAINS["bytes"](2)),
    "sharded zstd": dict(chunks=(8, 32), shards=(16, 64), **CHAINS["zstd+crc32c"](2)),
}


@pytest.mark.parametrize("where", ["local", "memory"])
def test_threads_read_and_write_arrays(tmp_path, where):
    """Each thread writes and reads its own arrays, writes its own band of rows of
    shared arrays (chunk and shard aligned, in aligned and unaligned pieces), and
    reads random selections of the shared arrays' rows that nobody writes, large
    reads (pool threads, reused output memory) included."""
    rng = np.random.default_rng(21)
    rows = 16 * NTHREADS
    fixed = random_data(rng, (64, 128), "int32")        # rows nobody writes
    bands = random_data(rng, (rows, 128), "int32")      # thread i writes rows 16i..16i+15
    own = random_data(rng, (NTHREADS, 40, 100), "int32")
    root = str(tmp_path / "data.zarr") if where == "local" else {}
    group = zarrc.group(root)
    shared = {}
    for name, kw in ARRAYS.items():
        a = group.create_array(name, shape=(64 + rows, 128), dtype="int32", **kw)
        a[:64] = fixed
        shared[name] = a

    def work(i):
        r = np.random.default_rng(100 + i)
        mine = {name: group.create_array(f"own-{i}-{k}", shape=(40, 100), dtype="int32",
                                         **ARRAYS[name])
                for k, name in enumerate(ARRAYS)}
        lo = 64 + 16 * i
        for rep in range(4):
            for name, a in shared.items():
                if rep % 2 == 0:                # whole band, then a ragged piece of it
                    a[lo:lo + 16] = bands[16 * i:16 * i + 16]
                    a[lo + 3:lo + 11, 5:77] = bands[16 * i + 3:16 * i + 11, 5:77]
                else:
                    a[lo:lo + 16, ::2] = bands[16 * i:16 * i + 16, ::2]
                    a[lo:lo + 16, 1::2] = bands[16 * i:16 * i + 16, 1::2]
                b = mine[name]
                b[...] = own[i] + rep
                b[7:29, 3:90] = own[i, 7:29, 3:90] + rep
                np.testing.assert_array_equal(b[...], own[i] + rep, err_msg=name)
                np.testing.assert_array_equal(b[5, 3:60:7], own[i, 5, 3:60:7] + rep)
                for _ in range(3):
                    y0, x0 = int(r.integers(0, 64)), int(r.integers(0, 128))
                    y1, x1 = int(r.integers(y0, 65)), int(r.integers(x0, 129))
                    sel = (slice(y0, y1, int(r.integers(1, 3))), slice(x0, x1))
                    np.testing.assert_array_equal(a[sel], fixed[sel], err_msg=name)
                np.testing.assert_array_equal(a[lo:lo + 16], bands[16 * i:16 * i + 16],
                                              err_msg=name)
                np.testing.assert_array_equal(a[:64], fixed, err_msg=name)

    with zarrc.config.set(threads=4):
        run_threads(NTHREADS, work)
        for name, a in shared.items():
            np.testing.assert_array_equal(a[:64], fixed, err_msg=name)
            np.testing.assert_array_equal(a[64:], bands, err_msg=name)


def test_threads_share_large_reads(tmp_path):
    """Large reads (outputs past the slab and streaming thresholds, split over pool
    threads) from many threads at once, while the outputs die and are reused."""
    rng = np.random.default_rng(22)
    data = random_data(rng, (512, 1024), "float64")     # 4 MiB
    a = zarrc.create_array(str(tmp_path / "big.zarr"), shape=data.shape, dtype="float64",
                           chunks=(64, 256), **CHAINS["blosc"](2))
    a[...] = data

    def work(i):
        for k in range(6):
            y = (37 * (i + k)) % 256
            part = a[y:y + 256]                 # 2 MiB: a slab of its own, or pooled
            np.testing.assert_array_equal(part, data[y:y + 256])
            if k % 3 == 0:
                np.testing.assert_array_equal(a[...], data)
            np.testing.assert_array_equal(a[y:y + 40, 100:400], data[y:y + 40, 100:400])
            del part

    with zarrc.config.set(threads=4):
        run_threads(6, work)
