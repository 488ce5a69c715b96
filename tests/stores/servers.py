"""Fixtures of real servers on 127.0.0.1 for the remote store tests: an HTTP file
server of the tests' own (ranges, ETags, conditional reads, and switches for
failures) and moto's S3 server.  The servers themselves are in ``serving.py``
(also used by bench/remote.py).  Nothing here talks to any other host."""

from __future__ import annotations

import pytest
from stores.serving import S3, S3_CREDENTIALS, FileServer, Handler, Switches, closed_port, etag_of

__all__ = ["S3", "S3_CREDENTIALS", "FileServer", "Handler", "Switches", "closed_port", "etag_of",
           "http_server", "s3_server", "s3_url"]


@pytest.fixture
def http_server(tmp_path):
    """A FileServer on a new directory."""
    root = tmp_path / "served"
    root.mkdir()
    server = FileServer(str(root))
    yield server
    server.close()


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server for the whole session (tests use new buckets or prefixes)."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    pytest.importorskip("boto3", reason="boto3 (with moto) is not installed")
    server = S3()
    yield server
    server.stop()


@pytest.fixture
def s3_url(s3_server):
    """A new, empty s3:// location on the moto server: (url, storage options)."""
    return f"s3://{s3_server.bucket()}/data", s3_server.options()
