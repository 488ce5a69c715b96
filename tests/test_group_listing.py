"""Listing a group's members while creating members: the listing is of the group as
it was when the listing started, whether it reads consolidated metadata or the store."""

from __future__ import annotations

import pytest

import zarrc


@pytest.mark.parametrize("use_consolidated", [True, False])
def test_members_listed_while_a_member_is_created(tmp_path, use_consolidated):
    g = zarrc.open_group(str(tmp_path), mode="w")
    g.create_group("a")
    g.create_group("b")
    zarrc.consolidate_metadata(str(tmp_path))
    g = zarrc.open_group(str(tmp_path), mode="r+", use_consolidated=use_consolidated)
    assert g.consolidated is use_consolidated
    listed = []
    for name, node in g.members():
        listed.append((name, node.path))
        g.create_group(f"new-{name}")
    assert listed == [("a", "a"), ("b", "b")]
    assert sorted(g.keys()) == ["a", "b", "new-a", "new-b"]
