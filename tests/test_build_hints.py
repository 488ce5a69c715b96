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


FAILING_CC = """#!/bin/sh
# a C compiler that works for meson's checks and fails on every vendored source
for arg in "$@"; do
  case $arg in */vendor/src/*.c) echo "$arg: error: simulated compiler failure" >&2; exit 1 ;; esac
done
exec {cc} "$@"
"""


@pytest.mark.skipif(not (ROOT / "backend" / "zarrc_backend.py").is_file() or meson() is None
                    or shutil.which("cc") is None or not (ROOT / "vendor" / "src").is_dir(),
                    reason="needs zarrc's source tree with its fetched C sources, meson and cc")
def test_failed_build_of_the_vendored_libraries_says_what_to_do(tmp_path):
    cc = tmp_path / "cc"
    cc.write_text(FAILING_CC.format(cc=shutil.which("cc")))
    cc.chmod(0o755)
    hook = ("import sys; sys.path.insert(0, 'backend'); import zarrc_backend; "
            f"zarrc_backend.build_wheel({str(tmp_path / 'out')!r}, {{'build-dir': {str(tmp_path / 'build')!r}}})")
    env = dict(os.environ, CC=str(cc), ZARRC_OFFLINE="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, "-c", hook], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "simulated compiler failure" in out               # the compiler's own message first,
    last = out.strip().splitlines()[-1]                        # then the hint, on the last line
    assert last.startswith("zarrc: building the C extensions failed")
    assert "pip install --only-binary zarrc zarrc" in last


def test_vendor_fetch_runs_pip_without_the_hook_variables_of_the_build(monkeypatch):
    """While pip builds zarrc, PEP517_BUILD_BACKEND / PEP517_BACKEND_PATH name zarrc's
    in-tree backend; the `pip download` that fetches a vendored sdist must not pass
    them on, or pip's hook for that sdist refuses to load its backend."""
    fetch_py = ROOT / "vendor" / "fetch.py"
    if not fetch_py.is_file():
        pytest.skip("needs zarrc's source tree")
    import importlib.util
    spec = importlib.util.spec_from_file_location("zarrc_vendor_fetch", fetch_py)
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    monkeypatch.setenv("PEP517_BUILD_BACKEND", "zarrc_backend")
    monkeypatch.setenv("PEP517_BACKEND_PATH", "backend")
    monkeypatch.setenv("_PYPROJECT_HOOKS_BACKEND_PATH", "backend")
    monkeypatch.setenv("ZARRC_SOMETHING_ELSE", "kept")
    env = fetch.pip_environment()
    assert not [k for k in env if k.startswith(("PEP517_", "_PYPROJECT_HOOKS_"))]
    assert env["ZARRC_SOMETHING_ELSE"] == "kept"
