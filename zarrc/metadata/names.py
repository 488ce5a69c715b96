"""Node names and hierarchy paths (v3 core, "Node names" and "Path").

A path is "/" for the root, otherwise "/" followed by node names joined with "/".
A node name is non-empty, has no "/", is not made only of periods ("." or ".."),
and does not start with the reserved prefix "__".  The spec further recommends the
characters a-z, A-Z, 0-9, "-", "_", "." (see ``is_recommended_name``).  Nodes that
others wrote under a reserved name (zarr-python writes them; xarray stores a variable
named None as ``__values__``) are read: only creation refuses those names
(``check_new_path``).
"""

from __future__ import annotations

import re

from zarrc.errors import MetadataError

RECOMMENDED_NAME = re.compile(r"[A-Za-z0-9._-]+")
# a path normalize_path gives back as it is: "/" or "/name/name...", each name valid
_CANONICAL = re.compile(r"/|(?:/[^/\\]*[^/\\.][^/\\]*)+")


def check_node_name(name: str, *, reserved_ok: bool = False) -> str:
    """Return ``name`` if it is a valid node name, else raise MetadataError saying
    which rule it breaks (with ``reserved_ok``, a name of the reserved prefix "__" is
    valid: a node another writer made, read)."""
    if not isinstance(name, str):
        raise MetadataError(f"node name {name!r} must be a string")
    if name == "":
        raise MetadataError("node name must not be empty")
    if "/" in name:
        raise MetadataError(f"node name {name!r} must not contain '/'")
    if name.strip(".") == "":
        raise MetadataError(f"node name {name!r} must not consist only of periods")
    if name.startswith("__") and not reserved_ok:
        raise MetadataError(f"node name {name!r} must not start with the reserved prefix '__'")
    return name


def is_recommended_name(name: str) -> bool:
    """True if ``name`` uses only the characters the spec recommends (a-z, A-Z, 0-9,
    '-', '_', '.'); such names behave the same on every store."""
    return bool(RECOMMENDED_NAME.fullmatch(name))


def normalize_path(path: str) -> str:
    """The canonical form of a node path: "/" for the root, else "/a/b".

    As the v2 spec's logical path normalisation: "\\" becomes "/", leading, trailing
    and repeated slashes go ("", "/", "a/b", "/a/b/", "a//b", "a\\b" all work).  Raises
    MetadataError for segments that are not valid node names ("." and ".." included,
    so a path can never climb out of the hierarchy); names of the reserved prefix "__"
    are accepted (reading what other writers made; ``check_new_path`` refuses them)."""
    if not isinstance(path, str):
        raise MetadataError(f"path {path!r} must be a string")
    if _CANONICAL.fullmatch(path):
        return path                      # (already "/a/b": each name holds a character not ".")
    names = [check_node_name(part, reserved_ok=True) for part in path.replace("\\", "/").split("/") if part]
    return "/" + "/".join(names)


def check_new_path(path: str) -> str:
    """``path`` normalised, for a node about to be created: as ``normalize_path``, and
    a name of the reserved prefix "__" raises MetadataError too."""
    path = normalize_path(path)
    for part in filter(None, path.split("/")):
        check_node_name(part)
    return path


def join_path(parent: str, name: str) -> str:
    """The path of child ``name`` (a name or a relative path "b/c") of ``parent``."""
    parent = normalize_path(parent)
    plain = isinstance(name, str) and name and _CANONICAL.fullmatch("/" + name)
    child = "/" + name if plain else normalize_path(name)      # (a valid name or "b/c" as it is)
    if child == "/":
        return parent
    return child if parent == "/" else parent + child


def parent_path(path: str) -> str:
    """The parent of ``path``; the root's parent is the root."""
    path = normalize_path(path)
    return path.rsplit("/", 1)[0] or "/"


def node_name(path: str) -> str:
    """The last name of ``path`` ("" for the root)."""
    return normalize_path(path).rsplit("/", 1)[1]


def key_prefix(path: str) -> str:
    """The store key prefix of a node's keys: "" for the root, else "a/b/"."""
    path = normalize_path(path)
    return "" if path == "/" else path[1:] + "/"


def metadata_key(path: str) -> str:
    """The store key of a node's zarr.json ("zarr.json", "a/b/zarr.json")."""
    return key_prefix(path) + "zarr.json"
