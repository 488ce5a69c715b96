"""A codec spec whose name is not a str is a bad spec (MetadataError, a ZarrcError),
wherever the spec is given: on its own, in a codec chain, in a sharding codec."""

from __future__ import annotations

import pytest

import zarrc.codecs  # noqa: F401  (registers every codec)
from zarrc.codecs.chain import CodecChain
from zarrc.codecs.registry import codec_from_spec
from zarrc.codecs.sharding import ShardingIndexed
from zarrc.errors import MetadataError


@pytest.mark.parametrize("name", [["zstd"], {"zstd": 1}, None, 3])
def test_a_spec_name_that_is_not_a_str_is_an_unknown_codec(name):
    with pytest.raises(MetadataError, match="unknown codec"):
        codec_from_spec({"name": name})


def test_a_chain_or_shard_with_an_unhashable_codec_name_raises_metadata_error():
    with pytest.raises(MetadataError, match=r"unknown codec \['bytes'\]"):
        CodecChain([{"name": ["bytes"]}])
    with pytest.raises(MetadataError, match=r"unknown codec \['bytes'\]"):
        ShardingIndexed(chunk_shape=(2,), codecs=[{"name": "bytes"}], index_codecs=[{"name": ["bytes"]}])
