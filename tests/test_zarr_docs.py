"""zarr-python's own documentation examples, unchanged, with ``import zarr`` giving
zarrc: the quickstart and the user guide's pages on arrays, groups, attributes,
storage, consolidated metadata, configuration and performance (zarr-python 3.0.0's
text, fetched from PyPI when the test runs and cached: zarr_docs.py).

One test per block of examples (its id: page:line).  Each page's examples run in
order in a fresh directory; an example passes if it runs and, where the page shows
data (numbers, tuples, lists, numpy arrays), gives the same values.  Reprs of nodes,
codecs, ``info`` and ``tree()`` are not compared: zarrc's are its own.

DESELECTED leaves out examples that fail in zarr-python 3.1+ as well (the 3.0 pages
have aged) and examples of what zarrc does not do (the README's "What differs from
zarr-python" lists the same); PENDING marks blocks waiting for a feature being added
(strict: once it lands the block passes, the mark fails, and is removed).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import zarr_docs

# (page, key): why.  In each block of the page, the examples from the first one whose
# text (source or shown output) holds the key to the block's end are left out.
DESELECTED: dict[tuple[str, str], str] = {
    # the page's own example fails in zarr-python 3.1 and 3.4 as well
    ("quickstart.rst", "BloscShuffle.SHUFFLE"):
        "zarr-python 3.1+ fails it too: BloscShuffle has no member SHUFFLE",
    ("quickstart.rst", 'name="bar", shape=(100, 10)'):
        "zarr-python 3.1+ fails it too: create_array without a dtype",
    ("quickstart.rst", "example-3.zip"):
        "zarr-python 3.1+ fails it too: create_array(mode=...) is a TypeError, so the zip "
        "file the next block opens is never written",
    ("user-guide/arrays.rst", "array.v2_default_compressor"):
        "zarr-python 3.1+ fails it too: the configuration key was removed",
    ("user-guide/arrays.rst", "name='foo/bar'"):
        "zarr-python 3.1+ fails it too: the page creates an array inside the array foo",
    # what the tests cannot reach: the page reads a public S3 bucket (zarrc's remote
    # stores are tested against S3 and HTTP servers on 127.0.0.1: tests/stores/test_remote_*)
    ("user-guide/storage.rst", "s3://"):
        "the page reads a public S3 bucket; the tests have no network beyond 127.0.0.1",
    # what zarrc does not do
    ("user-guide/consolidated_metadata.rst", "metadata.consolidated_metadata.metadata"):
        "a group's metadata.consolidated_metadata is the zarr.json member as a read-only "
        "mapping of JSON, not zarr-python's ConsolidatedMetadata object of metadata objects",
    ("user-guide/consolidated_metadata.rst", "consolidated['child'].metadata.consolidated_metadata"):
        "a group got from a consolidated group has no consolidated_metadata of its own (None)",
    ("user-guide/config.rst", "'array.order': 'F'"):
        "zarrc reads into C-ordered arrays only: array.order 'F' is refused",
    ("user-guide/performance.rst", "'array.order': 'F'"):
        "zarrc reads into C-ordered arrays only: array.order 'F' is refused",
    ("user-guide/config.rst", "zarr.config.pprint()"):
        "zarr.config is zarrc's own settings (not donfig): no pprint(), and the page prints "
        "zarr-python's whole configuration tree (which differs between its versions too)",
}


def _numcodecs_zarr3() -> str | None:
    """Why numcodecs.zarr3 cannot be used here, or None."""
    try:
        import numcodecs.zarr3  # noqa: F401 (it checks zarr-python's version when imported)
    except ImportError as e:
        return f"numcodecs.zarr3 is not usable here ({e}; it needs numcodecs 0.14+ and zarr-python)"
    return None


# key -> why: whole blocks whose text holds the key are left out in this environment
NOT_HERE: dict[str, str] = {"numcodecs.zarr3": why} if (why := _numcodecs_zarr3()) else {}

# block id (page:line; stable: the pages are fixed by their sdist's hash) -> the zarrc
# feature a block waits for (strict xfails: a block that passes fails the test until removed)
PENDING: dict[str, str] = {}

NO_310 = ("zarr-python's 3.0 documentation is for Python 3.11+ (zarr 3 needs it), and its "
          "examples use numcodecs.zarr3, which needs zarr-python")


def left_out(block: zarr_docs.Block) -> tuple[set[int], list[str]]:
    """(ids of the block's examples DESELECTED or NOT_HERE leave out, the reasons)."""
    ids: set[int] = set()
    why: list[str] = []
    for (page, key), reason in DESELECTED.items():
        if page != block.page:
            continue
        hit = [i for i, e in enumerate(block.examples) if key in e.source + e.want]
        if hit:
            ids.update(id(e) for e in block.examples[hit[0]:])
            why.append(reason)
    for key, reason in NOT_HERE.items():
        if key in block.text():
            ids.update(id(e) for e in block.examples)
            why.append(reason)
    return ids, why


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
            if block.id in PENDING:
                marks.append(pytest.mark.xfail(strict=True, reason="pending: " + PENDING[block.id]))
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
    """Every DESELECTED key matches an example of its page, every PENDING id is a
    block's (so neither list goes stale)."""
    blocks = [b for page in BLOCKS.values() for b in page]
    if not blocks:
        pytest.skip("the pages are not available")
    for page, key in DESELECTED:
        assert any(b.page == page and key in e.source + e.want for b in blocks for e in b.examples), \
            f"DESELECTED {(page, key)} matches no example"
    assert set(PENDING) <= {b.id for b in blocks}, set(PENDING) - {b.id for b in blocks}


def test_checks_catch_what_differs(tmp_path):
    """The harness itself, on examples written here: data the page shows is compared
    by value (a wrong value, dtype or type fails), a repr is not, an error or an
    unexpected output fails, and ``import zarr`` inside gives zarrc and its modules
    (zarr-python's, where installed, are back afterwards)."""
    page = "made-up.rst"
    text = """
    >>> import zarr, zarr.codecs
    >>> z = zarr.create_array(store={}, shape=(4,), dtype='int32')
    >>> z[:] = [1, 2, 3, 4]
    >>> z[1:3]
    array([2, 3], dtype=int32)
    >>> z[1:3]
    array([2, 4], dtype=int32)
    >>> z[1:3]
    array([2, 3])
    >>> z.shape
    [4]
    >>> z
    <Array something else entirely>
    >>> zarr.__name__, zarr.codecs.__name__
    ('zarrc', 'zarrc.codecs')
    >>> z.no_such_thing
    >>> z.shape
    >>> z.attrs.get("absent")
    {'shown': 'but None came'}
    """
    (tmp_path / page).write_text(text)
    blocks = zarr_docs.blocks(tmp_path, page)
    before = sys.modules.get("zarr")
    outcomes = zarr_docs.run_page(blocks, tmp_path)
    assert sys.modules.get("zarr") is before
    problems = [(e.lineno + 1, outcomes[id(e)].problem) for b in blocks for e in b.examples]
    ok = [line for line, problem in problems if problem is None]
    bad = {line: problem for line, problem in problems if problem is not None}
    assert ok == [2, 3, 4, 5, 13, 15], problems
    assert sorted(bad) == [7, 9, 11, 17, 18, 19], problems
    assert "[2, 4]" in bad[7] and "array([2, 3], dtype=int32)" in bad[9]
    assert "(4,)" in bad[11] and "AttributeError" in bad[17] and "prints nothing" in bad[18]
    assert "printed nothing" in bad[19]
    assert outcomes[id(blocks[0].examples[-5])].repr_differs
    assert np.array_equal(zarr_docs._data("array([1, 2], dtype=uint8)"), np.array([1, 2], "u1"))
