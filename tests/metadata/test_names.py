"""Node names and paths (v3 core "Node names", "Path")."""

from __future__ import annotations

import pytest

from zarrc.errors import MetadataError
from zarrc.metadata.names import (
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


@pytest.mark.parametrize("path", ["/a/../b", "..", "a/./b", "/__x/y", "a/..", "a\\..\\b", "..\\x"])
def test_paths_cannot_escape_or_use_reserved_names(path):
    with pytest.raises(MetadataError):
        normalize_path(path)


def test_path_helpers():
    assert join_path("/", "a") == "/a" and join_path("/a", "b/c") == "/a/b/c" and join_path("a", "") == "/a"
    with pytest.raises(MetadataError):
        join_path("/a", "../b")
    assert parent_path("/a/b") == "/a" and parent_path("/a") == "/" and parent_path("/") == "/"
    assert node_name("/a/b") == "b" and node_name("/") == ""
    assert key_prefix("/") == "" and key_prefix("/foo/bar") == "foo/bar/"
    assert metadata_key("/") == "zarr.json" and metadata_key("foo/bar") == "foo/bar/zarr.json"
