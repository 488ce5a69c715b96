"""zarr-python's own documentation examples, unchanged, with ``import zarr`` giving
zarrc: the quickstart and the user guide's pages on arrays, groups, attributes,
storage, consolidated metadata, configuration and performance (zarr-python 3.0.0's
text, fetched from PyPI when the test runs and cached: zarr_docs.py).

One test per block of examples (its id: page:line).  Each page's examples run in
order in a fresh directory; an example passes if it runs and, where the page shows
data (numbers, tuples, lists, numpy arrays), gives the same values.  Reprs of nodes,
codecs, ``info`` and ``tree()`` are not compared: zarrc's are its own.

DESELECTED leaves out examples zarrc does not run on purpose (the README's "What
differs from zarr-python" lists the same); PENDING marks blocks waiting for a feature
being added (strict: once it lands the block passes, the mark fails, and is removed).
"""

from __future__ import annotations

import os
import sys

import pytest
import zarr_docs

# (page, key): why.  In each block of the page, the examples from the first one whose
# text (source or shown output) holds the key to the block's end are left out.
DESELECTED: dict[tuple[str, str], str] = {
}

# (page, key): the feature being added.  The one block whose text holds the key is
# expected to fail until then.
PENDING: dict[tuple[str, str], str] = {
}

NO_310 = ("zarr-python's 3.0 documentation is for Python 3.11+ (zarr 3 needs it), and its "
          "examples use numcodecs.zarr3, which needs zarr-python")


def left_out(block: zarr_docs.Block) -> tuple[set[int], list[str]]:
    """(ids of the block's examples DESELECTED leaves out, the reasons)."""
    ids: set[int] = set()
    why: list[str] = []
    for (page, key), reason in DESELECTED.items():
        if page != block.page:
            continue
        hit = [i for i, e in enumerate(block.examples) if key in e.source + e.want]
        if hit:
            ids.update(id(e) for e in block.examples[hit[0]:])
            why.append(reason)
    return ids, why


def pending(block: zarr_docs.Block) -> list[str]:
    """The features PENDING says the block waits for."""
    return [why for (page, key), why in PENDING.items() if page == block.page and key in block.text()]


BLOCKS: dict[str, list[zarr_docs.Block]] = {}         # page -> its blocks


def _params():
    if sys.version_info < (3, 11):
        return [pytest.param(None, id="python-3.10", marks=pytest.mark.skip(reason=NO_310))]
    try:
        folder = zarr_docs.fetch_pages()
    except zarr_docs.Unavailable as e:
        if os.environ.get("CI"):                 # CI reaches PyPI: the test must run there
            return [pytest.param(str(e), id="fetch")]
        return [pytest.param(None, id="fetch", marks=pytest.mark.skip(reason=str(e)))]
    params = []
    for page in zarr_docs.PAGES:
        BLOCKS[page] = zarr_docs.blocks(folder, page)
        for block in BLOCKS[page]:
            marks = []
            ids, why = left_out(block)
            if len(ids) == len(block.examples):
                marks.append(pytest.mark.skip(reason="deselected: " + "; ".join(why)))
            waits = pending(block)
            if waits:
                marks.append(pytest.mark.xfail(strict=True, reason="pending: " + "; ".join(waits)))
            params.append(pytest.param(block, id=block.id, marks=marks))
    return params


PARAMS = _params()


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory):
    """block -> {id(example): Outcome} of its page, each page run once (in a fresh
    directory) when first asked for."""
    runs: dict[str, dict] = {}

    def run(block):
        if block.page not in runs:
            workdir = tmp_path_factory.mktemp(block.page.replace("/", "-"))
            runs[block.page] = zarr_docs.run_page(BLOCKS[block.page], workdir,
                                                  lambda b: left_out(b)[0])
        return runs[block.page]
    return run


@pytest.mark.parametrize("block", PARAMS)
def test_block(block, page_runs):
    if isinstance(block, str):
        pytest.fail(block)                        # the pages could not be fetched
    outcomes = page_runs(block)
    problems = [f"line {e.lineno + 1}: {outcomes[id(e)].problem}\n    {e.source.strip()}"
                for e in block.examples if id(e) in outcomes and outcomes[id(e)].problem]
    assert not problems, f"{block.id}:\n" + "\n".join(problems)


@pytest.mark.skipif(sys.version_info < (3, 11), reason=NO_310)
def test_lists_name_examples_on_their_pages():
    """Every DESELECTED key matches an example of its page, every PENDING key one block
    (so neither list goes stale)."""
    blocks = [b for page in BLOCKS.values() for b in page]
    if not blocks:
        pytest.skip("the pages are not available")
    for page, key in DESELECTED:
        assert any(b.page == page and key in e.source + e.want for b in blocks for e in b.examples), \
            f"DESELECTED {(page, key)} matches no example"
    for page, key in PENDING:
        hits = [b.id for b in blocks if b.page == page and key in b.text()]
        assert len(hits) == 1, f"PENDING {(page, key)} matches blocks {hits}"
