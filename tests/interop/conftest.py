"""The ``case`` parameter of the interop tests: a test that takes it runs over the
matrix of matrix.py.  The helpers (data, bit-exact comparison, chunk keys, creating
a case's array with each library) are support.py, which tests import
(``from interop import support``; pyproject.toml puts tests/ on sys.path)."""

from __future__ import annotations

import pytest

from interop import matrix


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" in metafunc.fixturenames:
        metafunc.parametrize("case", matrix.CASES, ids=[c.id for c in matrix.CASES])
