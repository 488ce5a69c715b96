"""Sharding (``sharding_indexed``), in one place: shard indexes and their cache
(``index``), reads (``reads``), writes (``writes``; nested sharding: ``nested``),
the sharded strategy (``strategy``) and the whole-shard codec of the Python
strategy (``codec``)."""
