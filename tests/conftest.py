"""Fixtures shared by every test directory: a scratch directory for the session and
store makers of each kind.  The helpers they use live in helpers.py, a plain module
that tests import."""

from __future__ import annotations

import tempfile

import pytest
from helpers import STORE_KINDS, StoreMaker


@pytest.fixture(scope="session")
def scratch_root():
    """A directory for the whole session (hypothesis tests cannot use tmp_path)."""
    with tempfile.TemporaryDirectory(prefix="zarrc-tests-") as d:
        yield d


@pytest.fixture(params=STORE_KINDS)
def store_maker(request, scratch_root):
    """Makes stores of each kind in turn."""
    maker = StoreMaker(request.param, scratch_root)
    yield maker
    maker.close()


@pytest.fixture(params=["memory", "local"])
def rw_store_maker(request, scratch_root):
    """Makes stores that can rewrite and delete keys (zip cannot), each kind in turn."""
    maker = StoreMaker(request.param, scratch_root)
    yield maker
    maker.close()
