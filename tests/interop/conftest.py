"""Fixtures of the interop tests: ``case`` runs a test over the matrix of
matrix.py, ``ix`` is the module support.py (data, bit-exact comparison, chunk
keys, creating a case's array with each library).

Test files import neither module (pytest runs with --import-mode=importlib, so
this directory is not on sys.path): this conftest loads both by file path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _load(name: str) -> ModuleType:
    qualified = f"_zarrc_interop_{name}"
    if qualified not in sys.modules:
        spec = importlib.util.spec_from_file_location(qualified, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[qualified]


matrix = _load("matrix")
support = _load("support")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        metafunc.parametrize("case", matrix.CASES, ids=[c.id for c in matrix.CASES])


@pytest.fixture(scope="session")
def ix() -> ModuleType:
    """support.py's helpers, for test files (which cannot import it)."""
    return support
