"""The compiled kernels export nothing but their module init function: the vendored
C libraries (c-blosc, lz4, zstd, zlib) and our C helpers are linked in with hidden
visibility, so they cannot clash with other copies loaded into the same process
(numcodecs, h5py, a system libz)."""

import importlib
import shutil
import subprocess
import sys

import pytest

MODULES = ["zarrc._kernels.codecs"]

pytestmark = [
    pytest.mark.skipif(shutil.which("nm") is None, reason="nm is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks ELF dynamic symbols"),
]


def exported_symbols(path):
    cmd = ["nm", "-D", "--defined-only", path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("name", MODULES)
def test_exports_only_module_init(name):
    module = importlib.import_module(name)
    symbols = exported_symbols(module.__file__)
    assert f"PyInit_{name.rsplit('.', 1)[-1]}" in symbols
    assert [s for s in symbols if not s.startswith("PyInit_")] == []

