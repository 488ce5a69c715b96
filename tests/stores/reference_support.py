"""Helpers of test_reference.py: a real HTTP server honouring byte ranges, and an
HDF5 file with known contents for kerchunk to translate."""

from __future__ import annotations

import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

import numpy as np

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class RangeRequestHandler(BaseHTTPRequestHandler):
    """GET and HEAD of the files under the server's ``root``, with ``Range: bytes=a-b``
    answered 206 (416 past the end), as object stores and web servers do."""

    server: RangeHTTPServer

    def log_message(self, format, *args):  # (quiet)
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _serve(self, body: bool) -> None:
        self.server.requests.append((self.command, self.path, self.headers.get("Range")))
        rel = unquote(urlsplit(self.path).path).lstrip("/")
        path = os.path.join(self.server.root, rel)
        if ".." in rel.split("/") or not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        start, end, status = 0, size, 200
        header = self.headers.get("Range")
        if header:
            m = _RANGE.fullmatch(header.strip())
            if m is None or m.group(1) == m.group(2) == "":
                self.send_error(400)
                return
            if m.group(1) == "":  # a suffix: the last n bytes
                start = max(0, size - int(m.group(2)))
            else:
                start = int(m.group(1))
                end = size if m.group(2) == "" else min(size, int(m.group(2)) + 1)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.end_headers()
        if body:
            with open(path, "rb") as f:
                f.seek(start)
                self.wfile.write(f.read(end - start))


class RangeHTTPServer(ThreadingHTTPServer):
    """Serves the directory ``root`` on 127.0.0.1 (a free port) from a thread;
    ``url`` is its base URL; ``requests`` records (method, path, Range header)."""

    daemon_threads = True

    def __init__(self, root: str) -> None:
        super().__init__(("127.0.0.1", 0), RangeRequestHandler)
        self.root = root
        self.requests: list = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join()


def write_hdf5(path: str) -> dict[str, np.ndarray]:
    """An HDF5 file (as netCDF4 writes them: chunked and gzip-compressed, contiguous,
    tiny, attributes) at ``path``; returns {dataset name: its data}."""
    import h5py

    rng = np.random.default_rng(42)
    data = {
        "temperature": (rng.standard_normal((120, 90)) * 10 + 280).astype("<f4"),
        "counts": np.arange(1000, dtype="<i8"),
        "flags": np.arange(6, dtype="<i2"),
        "grid/elevation": rng.integers(-500, 4000, (40, 30, 7)).astype("<i4"),
    }
    with h5py.File(path, "w") as f:
        f.attrs["title"] = "zarrc reference test"
        t = f.create_dataset("temperature", data=data["temperature"], chunks=(32, 40),
                             compression="gzip", compression_opts=4)
        t.attrs["units"] = "K"
        f.create_dataset("counts", data=data["counts"])  # contiguous
        f.create_dataset("flags", data=data["flags"])    # small: inlined by kerchunk
        g = f.create_group("grid")
        g.attrs["kind"] = "regular"
        g.create_dataset("elevation", data=data["grid/elevation"], chunks=(16, 16, 7),
                         compression="gzip", shuffle=True)
    return data
