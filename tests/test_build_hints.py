"""A build from source without a working C compiler stops at once with what to
install, not meson's bare "Unable to get gcc pre-processor defines".  Runs meson's
configure step only (about a second); skipped where the source tree or meson is not
at hand (tests run against an installed wheel)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def meson() -> str | None:
    beside = Path(sys.executable).parent / "meson"
    return str(beside) if beside.is_file() else shutil.which("meson")


@pytest.mark.skipif(not (ROOT / "meson.build").is_file() or meson() is None,
                    reason="needs zarrc's source tree and meson")
def test_missing_c_compiler_says_what_to_install(tmp_path):
    env = dict(os.environ, CC=str(tmp_path / "no-such-compiler"))
    proc = subprocess.run([meson(), "setup", str(tmp_path / "build"), str(ROOT)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "zarrc needs a C compiler (gcc or clang)" in proc.stdout + proc.stderr
    assert "apt install build-essential" in proc.stdout + proc.stderr
