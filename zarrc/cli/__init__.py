"""The ``zarrc`` command line (``zarrc ...`` or ``python -m zarrc ...``).

``main.py``: the argument parser, the commands' dispatch and the one place errors
become a line on stderr and an exit status; ``options.py``: what the commands'
options parse into (storage options, shapes, compressors, filters) and how a node
is opened; ``inspect.py``: ``info``, ``tree``, ``ls``, ``consolidate``, ``model`` (ZEP 6 JSON);
``overviews.py``: ``overviews`` (``zarrc.build_overviews``);
``validate.py``: ``validate``; ``convert.py``: ``convert``'s plan (the destination's
metadata, node by node) and ``convert_units.py`` its streaming copy (units of whole
destination shards or chunks, a journal for resuming, the progress bar).  Nothing
in zarrc imports this package.
"""
