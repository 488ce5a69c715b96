"""Store fixtures: one factory per store kind, so a test runs against every store."""

from __future__ import annotations

import pytest

from zarrc.stores import LocalStore, MemoryStore, Store, ZipStore

KINDS = ["local", "memory", "zip"]

# Modules whose tests start servers (S3, HTTP on 127.0.0.1) or drive other libraries'
# stores (Icechunk, kerchunk, VirtualiZarr): marked "servers", which the wheel tests'
# smoke subset leaves out (scripts/wheel-test); the test command runs them.
SERVER_MODULES = ("test_remote_", "test_icechunk", "test_virtualizarr", "test_reference")


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if item.path.name.startswith(SERVER_MODULES):
            item.add_marker(pytest.mark.servers)


class StoreFactory:
    """Opens stores of one kind at one location under a test's tmp_path."""

    def __init__(self, kind: str, tmp_path) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self.data: dict = {}
        self.location = {
            "local": str(tmp_path / "store.zarr"),
            "zip": str(tmp_path / "store.zip"),
            "memory": None,
        }[kind]
        self.opened: list[Store] = []

    def writable(self) -> Store:
        """A new, empty, writable store."""
        if self.kind == "local":
            store = LocalStore(self.location, mode="w")
        elif self.kind == "zip":
            store = ZipStore(self.location, mode="w")
        else:
            store = MemoryStore(self.data)
        self.opened.append(store)
        return store

    def read_only(self, writer: Store) -> Store:
        """The same location reopened read only (a zip writer is closed first)."""
        if self.kind == "local":
            store = LocalStore(self.location, mode="r")
        elif self.kind == "zip":
            writer.close()
            store = ZipStore(self.location, mode="r")
        else:
            store = MemoryStore(self.data, read_only=True)
        self.opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=KINDS)
def factory(request, tmp_path):
    f = StoreFactory(request.param, tmp_path)
    yield f
    f.close_all()


@pytest.fixture
def store(factory):
    """A new, empty, writable store of each kind."""
    return factory.writable()
