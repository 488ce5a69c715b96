"""The compiled kernels export nothing but their module init function: the vendored
C libraries (c-blosc, lz4, zstd, zlib, libdeflate) and our C helpers are linked in
with hidden visibility, so they cannot clash with other copies loaded into the same
process (numcodecs, h5py, a system libz).  And libzstd is linked into one module
only, zarrc._kernels.zstd: the others use its contexts through it."""

import importlib
import importlib.util
import importlib.machinery
import pkgutil
import shutil
import subprocess
import sys

import pytest

import zarrc._kernels

# every extension module of the package, found (not listed), so a new one is checked too
MODULES = sorted(
    f"zarrc._kernels.{info.name}"
    for info in pkgutil.iter_modules(zarrc._kernels.__path__)
    if any(str(getattr(importlib.util.find_spec(f"zarrc._kernels.{info.name}"), "origin", "")).endswith(s)
           for s in importlib.machinery.EXTENSION_SUFFIXES)
)
# libzstd's functions that only a module linking the library holds
ZSTD_FUNCTIONS = ("ZSTD_compress2", "ZSTD_decompressDCtx", "ZSTD_createCCtx")

pytestmark = [
    pytest.mark.skipif(shutil.which("nm") is None, reason="nm is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks ELF symbols"),
]


def symbols(path, *flags):
    out = subprocess.run(["nm", *flags, path], check=True, capture_output=True, text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip() and not line.endswith(":")]


def test_every_extension_module_is_found():
    names = {m.rsplit(".", 1)[-1] for m in MODULES}
    assert {"blosc", "zstd", "deflate", "crc32c", "errors", "buffers", "plan", "copy", "shard",
            "slabs"} <= names


@pytest.mark.parametrize("name", MODULES)
def test_exports_only_module_init(name):
    module = importlib.import_module(name)
    exported = symbols(module.__file__, "-D", "--defined-only")
    assert f"PyInit_{name.rsplit('.', 1)[-1]}" in exported
    assert [s for s in exported if not s.startswith("PyInit_")] == []


@pytest.mark.parametrize("name", MODULES)
def test_zstd_is_linked_into_the_zstd_module_only(name):
    module = importlib.import_module(name)
    defined = set(symbols(module.__file__, "--defined-only"))
    if not defined:
        pytest.skip(f"{module.__file__} is stripped (as in the wheels): no symbol table to look in")
    holds = [f for f in ZSTD_FUNCTIONS if f in defined]
    if name == "zarrc._kernels.zstd":
        assert holds == list(ZSTD_FUNCTIONS)
    else:
        assert holds == []
