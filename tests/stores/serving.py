"""Real servers on 127.0.0.1, for the remote store tests (their fixtures are in
``servers.py``) and the remote benchmark (``bench/remote.py``): an HTTP file server
of the tests' own (ranges, ETags, conditional reads, and switches for failures and
latency) and moto's S3 server.  Nothing here talks to any other host, and nothing
here needs pytest."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

S3_CREDENTIALS = {"key": "testing", "secret": "testing", "region_name": "us-east-1"}


class Switches:
    """What the HTTP server does wrong, set by a test: ``latency`` seconds before each
    answer, ``forbid`` (403 for everything), ``fail`` (that many 500s, then normal
    answers), ``truncate`` (bodies cut to half their announced length, then the
    connection closed), ``hang`` (seconds to wait before answering)."""

    def __init__(self) -> None:
        self.latency = 0.0
        self.forbid = False
        self.fail = 0
        self.truncate = False
        self.hang = 0.0
        self.requests: list[tuple[str, str, str | None]] = []   # (method, path, Range header)
        self.stop = threading.Event()
        self.lock = threading.Lock()


_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def etag_of(path: str) -> str:
    """The ETag the server gives a file: its size and modification time."""
    return _etag(os.stat(path))


def _etag(st: os.stat_result) -> str:
    return f'"{st.st_size:x}-{st.st_mtime_ns:x}"'


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in separate writes: with Nagle's algorithm on, the body
    # would wait for the client's delayed ACK of the headers (~40 ms per answer)
    disable_nagle_algorithm = True
    server: FileServer

    def log_message(self, *args: object) -> None:   # (quiet)
        pass

    def _plain(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self) -> None:
        sw = self.server.switches
        with sw.lock:
            sw.requests.append((self.command, self.path, self.headers.get("Range")))
            failing = sw.fail > 0
            if failing:
                sw.fail -= 1
        if sw.hang:
            sw.stop.wait(sw.hang)
        if sw.latency:
            time.sleep(sw.latency)
        if sw.forbid:
            return self._plain(403, b"Forbidden")
        if failing:
            return self._plain(500, b"Internal Server Error")
        rel = unquote(urlsplit(self.path).path).lstrip("/")
        path = os.path.join(self.server.root, *rel.split("/"))
        if not rel or ".." in rel.split("/") or not os.path.isfile(path):
            return self._plain(404, b"Not Found")
        with open(path, "rb") as f:     # (only the bytes asked for are read: shards are large)
            return self._answer(f)

    def _answer(self, f: BinaryIO) -> None:
        """Answer from the open file ``f``: its size and ETag from fstat, then only
        the bytes of the range asked for."""
        sw = self.server.switches
        st = os.fstat(f.fileno())
        size, etag = st.st_size, _etag(st)
        headers = {"ETag": etag, "Accept-Ranges": "bytes"}
        match = self.headers.get("If-Match")
        if match is not None and match.strip() not in ("*", etag):
            return self._plain(412, b"Precondition Failed", headers)
        status, begin, end = 200, 0, size
        wanted = self.headers.get("Range")
        if wanted:
            found = _RANGE.match(wanted.strip())
            if found is None or found.groups() == ("", ""):
                return self._plain(416, b"", {"Content-Range": f"bytes */{size}"})
            first, last = found.groups()
            if first == "":                      # a suffix
                begin, end = max(0, size - int(last)), size
            else:
                begin, end = int(first), size if last == "" else min(size, int(last) + 1)
            if begin >= size or (first == "" and size == 0):
                return self._plain(416, b"", {"Content-Range": f"bytes */{size}"})
            status = 206
            headers["Content-Range"] = f"bytes {begin}-{end - 1}/{size}"
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(end - begin))
        self.end_headers()
        if self.command == "HEAD":
            return None
        f.seek(begin)
        body = f.read(end - begin)
        if sw.truncate and body:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return None
        self.wfile.write(body)
        return None

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()


class FileServer(ThreadingHTTPServer):
    """An HTTP server of the files under ``root`` in a thread: ``url`` is its address."""

    daemon_threads = True

    def __init__(self, root: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.root = root
        self.switches = Switches()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def write(self, key: str, data: bytes) -> None:
        """Put a file under the served directory."""
        path = os.path.join(self.root, *key.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def close(self) -> None:
        self.switches.stop.set()
        self.shutdown()
        self.server_close()


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class S3:
    """moto's S3 server: ``endpoint``, ``options(**more)`` (storage options with dummy
    credentials), ``bucket()`` (a new bucket's name), ``client`` (boto3)."""

    def __init__(self) -> None:
        import boto3  # (ImportError without moto[server])
        from moto import server as moto_server

        self.server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.client = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                                   aws_secret_access_key="testing", region_name="us-east-1")

    def options(self, **more: object) -> dict:
        return {"endpoint_url": self.endpoint, **S3_CREDENTIALS, **more}

    def bucket(self) -> str:
        name = f"b-{uuid.uuid4().hex[:16]}"
        self.client.create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        self.server.stop()
