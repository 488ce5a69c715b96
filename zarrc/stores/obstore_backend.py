"""The obstore backend of RemoteStore: S3, GCS, Azure and HTTP(S) through obstore's
asynchronous API (``pip install obstore``; imported when first used).

:func:`open_obstore` makes one from a URL and zarr-python / fsspec style storage
options (``key``, ``secret``, ``endpoint_url``, ``anon``, ``region_name``,
``client_kwargs``... mapped onto obstore's configuration); :class:`ObstoreBackend`
also takes an obstore store object as it is (``obstore.store.S3Store``,
``HTTPStore``, ``MemoryStore``, ``LocalStore``...).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from zarrc.errors import ArgumentTypeError, MissingDependencyError, StoreError
from zarrc.stores.remote import (
    INSTALL_HINT,
    Backend,
    PreconditionFailed,
    deadline_of,
    pop_timeouts,
)

HTTP_SCHEMES = ("http", "https")

# obstore's I/O runs on a tokio runtime, whose threads a forked child does not have:
# a request there would never finish.  The process that first used obstore; a child
# forked from it refuses to (a StoreError instead of a hang).
_USED_IN: list[int] = []


def check_not_forked(url: str) -> None:
    """Note that this process uses obstore; StoreError in a process forked after its
    parent used it (obstore is not fork-safe: use the "spawn" or "forkserver" start
    methods of multiprocessing, or open stores on fsspec URLs)."""
    pid = os.getpid()
    if not _USED_IN:
        _USED_IN.append(pid)
    elif _USED_IN[0] != pid:
        raise StoreError(f"cannot use {url} through obstore in a process forked after obstore ran in its "
                         "parent (obstore's runtime does not survive fork): start worker processes with "
                         "'spawn' or 'forkserver', or open the store in the worker")


def import_obstore() -> Any:
    """The obstore module; StoreError naming the extra to install if it is missing."""
    try:
        import obstore
    except ImportError:
        raise MissingDependencyError(f"remote stores need obstore: {INSTALL_HINT}") from None
    return obstore


# fsspec / s3fs / zarr-python style names -> obstore's S3 configuration keys
_S3_NAMES = {
    "key": "access_key_id", "aws_access_key_id": "access_key_id", "access_key": "access_key_id",
    "secret": "secret_access_key", "aws_secret_access_key": "secret_access_key",
    "secret_key": "secret_access_key",
    "token": "session_token", "aws_session_token": "session_token",
    "endpoint_url": "endpoint", "region_name": "region",
}
_GCS_NAMES = {"token": "service_account_path", "credentials": "service_account_path"}
_AZURE_NAMES = {"account_name": "account_name", "account_key": "account_key", "sas_token": "sas_key",
                "connection_string": "connection_string"}
_IGNORED = {"use_ssl", "default_fill_cache", "default_cache_type", "asynchronous", "skip_instance_cache",
            "use_listings_cache", "listings_expiry_time", "config_kwargs", "project", "requester_pays",
            "version_aware", "cache_regions", "s3_additional_kwargs"}


def obstore_config(scheme: str, options: dict) -> tuple[dict, dict, dict]:
    """(config, client_options, retry_config) for obstore from storage options
    (zarrc's timeout keys already removed).  fsspec-style keys are renamed, obstore's
    own keys pass through (an unknown one makes obstore raise)."""
    options = dict(options)
    client = dict(options.pop("client_options", None) or {})
    retry = dict(options.pop("retry_config", None) or {})
    config = dict(options.pop("config", None) or {})
    kwargs = dict(options.pop("client_kwargs", None) or {})
    for name in ("endpoint_url", "region_name", "aws_access_key_id", "aws_secret_access_key"):
        if name in kwargs:
            options.setdefault(name, kwargs.pop(name))
    if "headers" in options:
        client["default_headers"] = options.pop("headers")
    anon = bool(options.pop("anon", False))
    names = (_S3_NAMES if scheme in ("s3", "s3a") else _GCS_NAMES if scheme in ("gs", "gcs")
             else _AZURE_NAMES if scheme in ("az", "abfs", "abfss", "azure", "adl") else {})
    for key, value in options.items():
        if key in _IGNORED or value is None:
            continue
        config[names.get(key, key)] = value
    if anon and scheme not in HTTP_SCHEMES:
        config["skip_signature"] = True
    endpoint = str(config.get("endpoint", ""))
    if endpoint.startswith("http://") or scheme == "http":
        client.setdefault("allow_http", True)
    if scheme in ("s3", "s3a") and "region" not in config and "default_region" not in config:
        config["region"] = "us-east-1"     # (an endpoint given without one: any name will do)
    return config, client, retry


def open_obstore(url: str, storage_options: dict | None = None) -> ObstoreBackend:
    """An ObstoreBackend on ``url`` (s3://, gs://, gcs://, az://, abfs://, http(s)://)
    with ``storage_options``.  Raises StoreError for a missing obstore or a
    configuration obstore refuses (naming the URL)."""
    obstore_store = import_obstore().store
    options = dict(storage_options or {})
    timeout, connect, retries = pop_timeouts(options)
    scheme = urlsplit(url).scheme.lower()
    config, client, retry = obstore_config(scheme, options)
    client.setdefault("timeout", f"{timeout:g}s")
    client.setdefault("connect_timeout", f"{connect:g}s")
    retry.setdefault("max_retries", retries)
    from datetime import timedelta

    retry.setdefault("retry_timeout", timedelta(seconds=deadline_of(timeout, connect, retries)))
    retry.setdefault("backoff", {"init_backoff": timedelta(milliseconds=100), "max_backoff": timedelta(seconds=2),
                                 "base": 2})
    target = "gs" + url[3:] if scheme == "gcs" else url
    try:
        if scheme in HTTP_SCHEMES:
            store = obstore_store.HTTPStore.from_url(target, client_options=client, retry_config=retry)
        else:
            store = obstore_store.from_url(target, config=config, client_options=client, retry_config=retry)
    except Exception as e:
        raise StoreError(f"cannot open {url} with obstore: {type(e).__name__}: {e}") from e
    backend = ObstoreBackend(store, url=url.rstrip("/"), writable=scheme not in HTTP_SCHEMES)
    backend.deadline = deadline_of(timeout, connect, retries)
    backend.description = (url, dict(storage_options or {}))
    return backend


class ObstoreBackend(Backend):
    """RemoteStore's backend over an obstore store object (keys relative to its prefix).

    ``url``: the location for messages (default: the store's repr); ``writable``:
    False for an HTTPStore unless given.  Pickles to its URL and storage options
    if it was opened by :func:`open_obstore`, else to the obstore object (which
    obstore pickles to its configuration).
    """

    etags = True
    blocking_calls = True

    def __init__(self, store: Any, url: str | None = None, writable: bool | None = None) -> None:
        self.obs = import_obstore()
        if type(store).__module__.split(".")[0] != "obstore":
            raise ArgumentTypeError(f"not an obstore store object: {type(store).__module__}."
                                    f"{type(store).__qualname__} {store!r:.80}")
        self.store = store
        self.url = url or repr(store)
        if writable is None:
            writable = type(store).__name__ != "HTTPStore"
        self.writable = writable
        self.description: tuple[str, dict] | None = None
        self._errors = self.obs.exceptions

    def __reduce__(self) -> tuple:
        if self.description is not None:
            return (open_obstore, self.description)
        return (ObstoreBackend, (self.store, self.url, self.writable))

    def describe(self) -> tuple[str, dict] | None:
        """(url, storage options) this backend was opened with, or None (made from an object)."""
        return self.description

    async def get(self, key: str, start: int | None = None, length: int | None = None,
                  suffix: int | None = None, if_match: str | None = None) -> Any:
        """See Backend.get: obstore's get_async with a range and if_match option."""
        check_not_forked(self.url)
        options: dict = {}
        if suffix is not None:
            options["range"] = {"suffix": suffix}
        elif start is not None or length is not None:
            begin = start or 0
            options["range"] = {"offset": begin} if length is None else (begin, begin + length)
        if if_match is not None:
            options["if_match"] = if_match
        try:
            result = await self.obs.get_async(self.store, key, options=options or None)
            return await result.bytes_async()
        except FileNotFoundError:
            return None
        except self._errors.PreconditionError:
            raise PreconditionFailed(key) from None

    def get_now(self, key: str, start: int, length: int | None) -> Any:
        """See Backend.get_now: obstore's blocking get (its runtime's thread does the
        request while this one waits without the GIL)."""
        check_not_forked(self.url)
        options = None
        if start or length is not None:
            options = {"range": {"offset": start} if length is None else (start, start + length)}
        try:
            return self.obs.get(self.store, key, options=options).bytes()
        except FileNotFoundError:
            return None

    def get_now_versioned(self, key: str, start: int, length: int | None) -> tuple[Any, int, str | None] | None:
        """See Backend.get_now_versioned: obstore's blocking ranged get, whose result
        carries the object's metadata (size, ETag)."""
        check_not_forked(self.url)
        rng: Any = {"suffix": -start} if start < 0 else {"offset": start} if length is None \
            else (start, start + length)
        try:
            result = self.obs.get(self.store, key, options={"range": rng})
            meta = result.meta
            return result.bytes(), meta["size"], meta.get("e_tag")
        except FileNotFoundError:
            return None

    def put_now(self, key: str, data: Any) -> None:
        """See Backend.put_now: obstore's blocking put."""
        check_not_forked(self.url)
        self.obs.put(self.store, key, data, use_multipart=False)

    async def head(self, key: str) -> tuple[int, str | None] | None:
        """(size, ETag) from obstore's head_async, None if absent."""
        check_not_forked(self.url)
        try:
            meta = await self.obs.head_async(self.store, key)
        except FileNotFoundError:
            return None
        return meta["size"], meta.get("e_tag")

    async def put(self, key: str, data: Any, if_match: str | None = None, create: bool = False) -> None:
        """One PUT (obstore's put_async; mode UpdateVersion with if_match, "create" with create)."""
        check_not_forked(self.url)
        mode: Any = {"e_tag": if_match} if if_match is not None else "create" if create else None
        try:
            await self.obs.put_async(self.store, key, data, mode=mode, use_multipart=False)
        except (self._errors.PreconditionError, self._errors.AlreadyExistsError):
            raise PreconditionFailed(key) from None

    async def delete(self, key: str) -> None:
        """Delete ``key``; absent is no error."""
        check_not_forked(self.url)
        try:
            await self.obs.delete_async(self.store, key)
        except FileNotFoundError:
            pass

    async def delete_many(self, keys: Sequence[str]) -> None:
        """One bulk delete (S3 DeleteObjects) where the store has it."""
        check_not_forked(self.url)
        try:
            await self.obs.delete_async(self.store, list(keys))
        except FileNotFoundError:
            for key in keys:
                await self.delete(key)

    async def list(self, prefix: str) -> builtins.list[str]:
        """Every key under the directory ``prefix``."""
        check_not_forked(self.url)
        keys: builtins.list[str] = []
        async for chunk in self.obs.list(self.store, prefix.rstrip("/") or None, chunk_size=1000):
            keys.extend(meta["path"] for meta in chunk)
        return keys

    async def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(key names, directory names) directly under ``prefix`` (list_with_delimiter_async)."""
        check_not_forked(self.url)
        found = await self.obs.list_with_delimiter_async(self.store, prefix.rstrip("/") or None)
        n = len(prefix)
        keys = [meta["path"][n:] for meta in found["objects"]]
        dirs = [p[n:].rstrip("/") for p in found["common_prefixes"]]
        return keys, dirs
