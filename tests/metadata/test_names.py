"""Node names and paths (v3 core "Node names", "Path")."""

from __future__ import annotations

import pytest

from zarrc.errors import MetadataError
from zarrc.metadata.names import (
    check_new_path,
    check_node_name,
    is_recommended_name,
    join_path,
    key_prefix,
    metadata_key,
    node_name,
    normalize_path,
    parent_path,
)


@pytest.mark.parametrize("name", ["a", "foo", "FOO", "a.b", "x_1-2", "...a", "_x", "température", "a b"])
def test_valid_names(name):
    assert check_node_name(name) == name


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("", "must not be empty"),
        ("a/b", "must not contain '/'"),
        (".", "only of periods"),
        ("..", "only of periods"),
        ("...", "only of periods"),
        ("__zarr", "reserved prefix"),
        ("__", "reserved"),
        (5, "must be a string"),
    ],
)
def test_invalid_names(name, match):
    with pytest.raises(MetadataError, match=match):
        check_node_name(name)


def test_recommended_characters():
    assert is_recommended_name("abc-DEF_012.x")
    assert not is_recommended_name("température") and not is_recommended_name("a b")
    assert not is_recommended_name("a:b")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("", "/"),
        ("/", "/"),
        ("a", "/a"),
        ("/a/b", "/a/b"),
        ("a/b/", "/a/b"),
        ("//a//b", "/a/b"),
        ("a\\b", "/a/b"),
        ("\\a\\\\b\\", "/a/b"),
        ("/a\\/b", "/a/b"),
    ],
)
def test_normalize_path(path, expected):
    assert normalize_path(path) == expected


@pytest.mark.parametrize("path", ["/a/../b", "..", "a/./b", "a/..", "a\\..\\b", "..\\x"])
def test_paths_cannot_escape(path):
    with pytest.raises(MetadataError):
        normalize_path(path)
    with pytest.raises(MetadataError):
        check_new_path(path)


def test_reserved_names_are_read_but_not_created():
    # zarr-python writes them (xarray: a variable named None is "__values__")
    assert normalize_path("/__x/y") == "/__x/y" and join_path("/", "__values__") == "/__values__"
    for path in ("/__x/y", "a/__values__", "__"):
        with pytest.raises(MetadataError, match="reserved prefix"):
            check_new_path(path)
    assert check_new_path("a/_b") == "/a/_b"


def test_path_helpers():
    assert join_path("/", "a") == "/a" and join_path("/a", "b/c") == "/a/b/c" and join_path("a", "") == "/a"
    with pytest.raises(MetadataError):
        join_path("/a", "../b")
    assert parent_path("/a/b") == "/a" and parent_path("/a") == "/" and parent_path("/") == "/"
    assert node_name("/a/b") == "b" and node_name("/") == ""
    assert key_prefix("/") == "" and key_prefix("/foo/bar") == "foo/bar/"
    assert metadata_key("/") == "zarr.json" and metadata_key("foo/bar") == "foo/bar/zarr.json"
