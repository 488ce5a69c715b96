"""The read/write engine against numpy: basic selections (read and write) over
every store kind and several codec chains, orthogonal integer-array projections
through ``read_into`` / ``write_from``, and the chunk-level rules (missing chunks
read as the fill value, partial chunks are read-modified-written, chunks equal to
the fill value are not stored)."""

from __future__ import annotations

import itertools
import os
import warnings

import numpy as np
import pytest
from helpers import CHAINS, DTYPES, StoreMaker, chunk_keys, make_array, random_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrc
from zarrc import engine
from zarrc.core import indexing
from zarrc.engine import batch

DET = dict(derandomize=True, deadline=None, database=None,
           suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------ strategies

@st.composite
def geometry(draw, max_ndim=3, max_size=10):
    ndim = draw(st.integers(0, max_ndim))
    shape = tuple(draw(st.lists(st.integers(0, max_size), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(1, min(n + 1, 6)))) for n in shape)
    return shape, chunks


@st.composite
def selection(draw, shape):
    """A basic selection: ints (negative too), slices with any positive step and
    out-of-range bounds, '...', fewer indices than dimensions."""
    sel = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "all"] if n else ["slice", "all"]))
        if kind == "int":
            sel.append(draw(st.integers(-n, n - 1)))
        elif kind == "all":
            sel.append(slice(None))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            sel.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, n + 2))))
    form = draw(st.sampled_from(["all", "fewer", "ellipsis"]))
    if form == "fewer":
        sel = sel[:draw(st.integers(0, len(sel)))]
    elif form == "ellipsis":
        i = draw(st.integers(0, len(sel)))
        j = draw(st.integers(i, len(sel)))
        sel = sel[:i] + [Ellipsis] + sel[j:]
    if len(sel) == 1 and draw(st.booleans()):
        return sel[0]                                   # a bare index, not a tuple
    return tuple(sel)


@st.composite
def value_for(draw, out_shape, dtype, fill):
    """A value to assign to a selection of ``out_shape``: a scalar (often the fill
    value), an array of that shape, or one numpy broadcasts to it (1s, missing
    leading dimensions, extra leading 1s), sometimes a reversed view."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["fill", "scalar", "array", "broadcast", "leading1", "reversed"]))
    if kind == "fill":
        return np.asarray(fill, dtype=dtype)[()]
    if kind == "scalar":
        return random_data(rng, (), dtype)[()]
    shape = list(out_shape)
    if kind == "broadcast":
        shape = [1 if draw(st.booleans()) else n for n in shape]
        shape = shape[draw(st.integers(0, len(shape))):]
    elif kind == "leading1":
        shape = [1] * draw(st.integers(1, 2)) + shape
    value = random_data(rng, tuple(shape), dtype)
    if kind == "reversed" and value.ndim:
        value = value[::-1]
    return value


def np_assign(expected, sel, value):
    """``expected[sel] = value`` with numpy, extra leading 1s of ``value`` dropped
    (numpy does that too, except for a single element)."""
    target_ndim = np.ndim(expected[sel])
    if np.ndim(value) > target_ndim:
        value = np.reshape(value, np.shape(value)[np.ndim(value) - target_ndim:])
    expected[sel] = value


# ------------------------------------------------------------------ helpers

def new_store(kind, scratch_root):
    return StoreMaker(kind, scratch_root).new()


def fill_of(rng, dtype, choice):
    if choice == "default":
        return None
    return random_data(rng, (), dtype)[()]


def present_chunks_match_data(arr, expected, fill):
    """A chunk key exists exactly where the chunk's region is not the fill value
    everywhere (bitwise)."""
    keys = set(chunk_keys(arr.store, arr.path + "/" if arr.path else ""))
    fill_bytes = np.asarray(fill if fill is not None else 0, dtype=expected.dtype).tobytes()
    grid = [-(-n // c) for n, c in zip(expected.shape, arr.chunks)]
    for coords in np.ndindex(*grid):
        region = expected[tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, arr.chunks))]
        all_fill = np.ascontiguousarray(region).tobytes() == fill_bytes * region.size
        key = arr._chunked.chunk_keys(np.array([coords], np.int64).reshape(1, -1))[0]
        assert (key in keys) == (not all_fill), (coords, key, keys)


# ------------------------------------------------------------------ basic selections

@pytest.mark.parametrize("kind", ["memory", "local", "zip"])
@pytest.mark.parametrize("chain", ["bytes", "blosc", "zstd+crc32c", "transpose", "big-endian"])
@settings(max_examples=40, **DET)
@given(data=st.data())
def test_read_selections_match_numpy(scratch_root, kind, chain, data):
    shape, chunks = data.draw(geometry())
    dtype = data.draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    expected = random_data(rng, shape, dtype)
    store = new_store(kind, scratch_root)
    arr = make_array(store, shape, chunks, dtype, chain)
    arr[...] = expected
    if kind == "zip":                                   # read back through a closed archive
        arr = zarrc.open_array(StoreMaker("zip", scratch_root).reopen_read_only(store), mode="r")
    for _ in range(4):
        sel = data.draw(selection(shape))
        got = arr[sel]
        want = expected[sel]
        # (a 0-d array reads as a numpy scalar, as zarr-python; otherwise an ndarray)
        assert isinstance(got, np.generic if not shape else np.ndarray), type(got)
        assert got.shape == np.shape(want) and got.dtype == expected.dtype
        np.testing.assert_array_equal(got, want)
    arr.store.close()


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("chain", ["bytes", "blosc", "zstd+crc32c", "transpose", "big-endian"])
@settings(max_examples=40, **DET)
@given(data=st.data())
def test_write_selections_match_numpy(scratch_root, kind, chain, data):
    shape, chunks = data.draw(geometry())
    dtype = data.draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    fill = fill_of(rng, dtype, data.draw(st.sampled_from(["default", "random"])))
    store = new_store(kind, scratch_root)
    arr = make_array(store, shape, chunks, dtype, chain, fill_value=fill)
    expected = np.full(shape, fill if fill is not None else 0, dtype=dtype)
    if data.draw(st.booleans()):
        expected = random_data(rng, shape, dtype)
        arr[...] = expected
    for _ in range(3):
        sel = data.draw(selection(shape))
        value = data.draw(value_for(np.empty(shape)[sel].shape, dtype, fill if fill is not None else 0))
        arr[sel] = value
        np_assign(expected, sel, value)
        np.testing.assert_array_equal(arr[...], expected)
        present_chunks_match_data(arr, expected, fill)


@settings(max_examples=60, **DET)
@given(data=st.data())
def test_write_once_to_zip_store(scratch_root, data):
    """Zip members cannot be rewritten: one write of a selection into a new array."""
    shape, chunks = data.draw(geometry())
    dtype = data.draw(st.sampled_from(DTYPES))
    chain = data.draw(st.sampled_from(sorted(CHAINS)))
    store = new_store("zip", scratch_root)
    arr = make_array(store, shape, chunks, dtype, chain)
    sel = data.draw(selection(shape))
    value = data.draw(value_for(np.empty(shape)[sel].shape, dtype, 0))
    arr[sel] = value
    expected = np.zeros(shape, dtype)
    np_assign(expected, sel, value)
    reopened = zarrc.open_array(StoreMaker("zip", scratch_root).reopen_read_only(store), mode="r")
    np.testing.assert_array_equal(reopened[...], expected)
    reopened.store.close()


def test_many_chunks_and_chunks_of_one_element(store_maker):
    """Selections spanning more chunks than the small-plan threshold, and chunks of
    size 1, so both projection paths and every edge-chunk case run."""
    rng = np.random.default_rng(0)
    expected = rng.integers(0, 1000, (200, 6)).astype("int32")
    arr = make_array(store_maker.new(), expected.shape, (1, 4), "int32", "zstd+crc32c")
    arr[...] = expected
    other = make_array(store_maker.new(), (301,), (3,), "float64", "blosc")
    other[::2] = np.arange(151.0)
    if store_maker.kind == "zip":
        arr = zarrc.open_array(store_maker.reopen_read_only(arr.store), mode="r")
        other = zarrc.open_array(store_maker.reopen_read_only(other.store), mode="r")
    assert indexing.SMALL < 100
    for sel in [..., (slice(None, None, 3), slice(1, None, 5)), (slice(7, 199, 13), 5),
                (-1, slice(None, None, 5)), (slice(2, 190), slice(0, 6, 2)), (slice(1, None, 2), 4)]:
        np.testing.assert_array_equal(arr[sel], expected[sel])
    want = np.zeros(301)
    want[::2] = np.arange(151.0)
    np.testing.assert_array_equal(other[...], want)
    np.testing.assert_array_equal(other[1::4], want[1::4])


def test_zero_dimensional_array(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (), (), "float64", "zstd+crc32c", fill_value=2.5)
    assert arr[...].shape == () and arr[...] == 2.5 and arr[()] == 2.5
    assert chunk_keys(arr.store) == []
    arr[...] = 7.0
    assert arr[()] == 7.0 and chunk_keys(arr.store) == ["c"]
    arr[()] = np.array([3.0])                          # a leading 1 is dropped, as numpy
    assert arr[...] == 3.0
    arr[...] = 2.5
    assert chunk_keys(arr.store) == []              # back to the fill value: deleted


def test_zero_length_dimensions(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (0, 5), (3, 2), "int16", "blosc")
    assert arr[...].shape == (0, 5) and arr[:, 1].shape == (0,) and arr[..., 2:].shape == (0, 3)
    arr[...] = 1
    arr[:, 3] = np.zeros(0)
    assert chunk_keys(arr.store) == [] and arr.nchunks == 0
    arr = make_array(rw_store_maker.new(), (4, 6), (2, 2), "int16", "bytes")
    arr[1:1, :] = 5                                    # empty selections write nothing
    arr[:, 6:] = 5
    assert chunk_keys(arr.store) == []


# ------------------------------------------------------------------ orthogonal projections

def orthogonal_case(data, shape):
    """Per dimension: an integer array (unsorted, repeats), a slice or an int."""
    dims, arrays, dropped = [], [], []
    for n, c in shape:
        kind = data.draw(st.sampled_from(["indices", "slice", "int"] if n else ["indices", "slice"]))
        if kind == "indices":
            idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=12)) if n else [], np.int64)
            idx = np.where(idx < 0, idx + n, idx)
            dims.append(indexing.project_indices(idx, n, c))
            arrays.append(idx)
            dropped.append(False)
        elif kind == "slice":
            s = slice(*slice(data.draw(st.none() | st.integers(-n - 1, n + 1)),
                             data.draw(st.none() | st.integers(-n - 1, n + 1)),
                             data.draw(st.integers(1, 4))).indices(n))
            dims.append(indexing.project_slice(s.start, s.stop, s.step, n, c))
            arrays.append(np.arange(s.start, s.stop, s.step))
            dropped.append(False)
        else:
            i = data.draw(st.integers(0, n - 1))
            dims.append(indexing.project_int(i, n, c))
            arrays.append(np.array([i]))
            dropped.append(True)
    return dims, arrays, dropped


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("chain", ["bytes", "transpose", "big-endian"])
@settings(max_examples=40, **DET)
@given(data=st.data())
def test_read_into_with_integer_arrays_matches_np_ix(scratch_root, kind, chain, data):
    shape, chunks = data.draw(geometry(max_ndim=3, max_size=9))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    expected = random_data(rng, shape, "complex64")
    arr = make_array(new_store(kind, scratch_root), shape, chunks, "complex64", chain)
    arr[...] = expected
    dims, arrays, dropped = orthogonal_case(data, list(zip(shape, chunks)))
    want = expected[np.ix_(*arrays)] if arrays else expected
    want = want[tuple(0 if d else slice(None) for d in dropped)]
    out_shape = tuple(d.nsel for d in dims if not d.dropped)
    layout = data.draw(st.sampled_from(["C", "strided", "reversed"]) if out_shape else st.just("C"))
    if layout == "strided":                             # a non-contiguous output
        every_other = (slice(None, None, 2),) * len(out_shape)
        out = np.zeros(tuple(2 * n for n in out_shape), expected.dtype)[every_other]
    elif layout == "reversed":                          # negative strides
        out = np.zeros(out_shape, expected.dtype)[(slice(None, None, -1),) * len(out_shape)]
    else:
        out = np.zeros(out_shape, expected.dtype)
    engine.read_into(arr._engine, dims, out)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("chain", ["bytes", "transpose", "zstd+crc32c"])
@settings(max_examples=40, **DET)
@given(data=st.data())
def test_write_from_with_integer_arrays_matches_np_ix(scratch_root, kind, chain, data):
    shape, chunks = data.draw(geometry(max_ndim=3, max_size=9))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    expected = random_data(rng, shape, "int32")
    arr = make_array(new_store(kind, scratch_root), shape, chunks, "int32", chain)
    arr[...] = expected
    dims, arrays, dropped = orthogonal_case(data, list(zip(shape, chunks)))
    value = random_data(rng, tuple(d.nsel for d in dims if not d.dropped), "int32")
    engine.write_from(arr._engine, dims, value)
    # numpy's orthogonal assignment, in C order of the value, so the last of
    # repeated indices wins (as it does in the engine)
    full_value = value.reshape(tuple(len(a) for a in arrays))
    for pos in np.ndindex(*full_value.shape):
        expected[tuple(int(a[p]) for a, p in zip(arrays, pos))] = full_value[pos]
    np.testing.assert_array_equal(arr[...], expected)


def test_read_into_and_write_from_check_the_operand():
    arr = make_array({}, (4, 4), (2, 2))
    dims = [indexing.project_indices(np.array([1, 1]), 4, 2), indexing.project_slice(0, 4, 1, 4, 2)]
    for bad in (np.zeros((2, 3), "int32"), np.zeros((2, 4), "int64"), np.zeros(8, "int32")):
        with pytest.raises(ValueError):
            engine.read_into(arr._engine, dims, bad)
        with pytest.raises(ValueError):
            engine.write_from(arr._engine, dims, bad)
    read_only = np.zeros((2, 4), "int32")
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        engine.read_into(arr._engine, dims, read_only)
    with pytest.raises(ValueError, match="read-only"):
        arr.get_orthogonal_selection(([1, 1], slice(None)), out=read_only)
    assert not read_only.any()


# ------------------------------------------------------------------ fill values and empty chunks

def test_missing_chunks_read_as_fill_value(store_maker):
    arr = make_array(store_maker.new(), (5, 7), (2, 3), "int16", "blosc", fill_value=-3)
    arr[0:2, 0:3] = 1                                   # one chunk stored, the rest missing
    if store_maker.kind == "zip":
        arr = zarrc.open_array(store_maker.reopen_read_only(arr.store), mode="r")
    expected = np.full((5, 7), -3, "int16")
    expected[0:2, 0:3] = 1
    np.testing.assert_array_equal(arr[...], expected)
    np.testing.assert_array_equal(arr[1:4, 2:6], expected[1:4, 2:6])
    assert arr[4, 6] == -3


def test_partial_chunk_write_keeps_the_rest_of_the_chunk(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (6, 6), (4, 4), "float32", "zstd+crc32c")
    data = np.arange(36, dtype="float32").reshape(6, 6) + 1
    arr[...] = data
    arr[1:3, 2] = -1                                    # inside chunk (0, 0)
    arr[3:5, 3:5] = -2                                  # spans four chunks, edge ones too
    data[1:3, 2] = -1
    data[3:5, 3:5] = -2
    np.testing.assert_array_equal(arr[...], data)


def test_chunks_equal_to_fill_value_are_not_stored(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (4, 6), (2, 3), "int32", "bytes", fill_value=9)
    arr[...] = 9
    assert chunk_keys(arr.store) == []
    arr[0, 0] = 1
    arr[3, 5] = 2
    assert chunk_keys(arr.store) == ["c/0/0", "c/1/1"]
    arr[0, 0] = 9                                       # the chunk is the fill value again
    assert chunk_keys(arr.store) == ["c/1/1"]
    arr[2:, 3:] = 9                                     # a whole-chunk write of fill values
    assert chunk_keys(arr.store) == []
    np.testing.assert_array_equal(arr[...], np.full((4, 6), 9))


def test_write_empty_chunks_keeps_them(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (4, 6), (2, 3), "int32", "blosc", fill_value=9,
                        write_empty_chunks=True)
    arr[...] = 9
    assert chunk_keys(arr.store) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    np.testing.assert_array_equal(arr[...], np.full((4, 6), 9))


def test_nan_fill_value(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (4, 4), (2, 2), "float64", "zstd+crc32c",
                        fill_value=float("nan"))
    assert np.isnan(arr.fill_value) and np.isnan(arr[...]).all()
    arr[...] = np.nan
    assert chunk_keys(arr.store) == []
    arr[0, 0] = 1.0
    assert chunk_keys(arr.store) == ["c/0/0"]
    arr[0, 0] = np.nan
    assert chunk_keys(arr.store) == []
    # a NaN with another payload is a different bit pattern: stored, and read back exactly
    other_nan = np.frombuffer(np.uint64(0x7FF8000000000001).tobytes(), "float64")[0]
    arr[3, 3] = other_nan
    assert chunk_keys(arr.store) == ["c/1/1"]
    assert arr[3, 3].tobytes() == other_nan.tobytes()


def test_negative_zero_is_not_zero(rw_store_maker):
    """Bitwise comparison decides: -0.0 differs from a 0.0 fill value and vice versa."""
    arr = make_array(rw_store_maker.new(), (4,), (2,), "float32", "bytes", fill_value=0.0)
    arr[...] = -0.0
    assert chunk_keys(arr.store) == ["c/0", "c/1"]
    assert np.signbit(arr[...]).all()
    arr[...] = 0.0
    assert chunk_keys(arr.store) == []
    neg = make_array(rw_store_maker.new(), (4,), (2,), "float32", "bytes", fill_value=-0.0)
    assert np.signbit(neg[...]).all()
    neg[...] = 0.0
    assert chunk_keys(neg.store) == ["c/0", "c/1"]
    assert not np.signbit(neg[...]).any()
    neg[:2] = -0.0
    assert chunk_keys(neg.store) == ["c/1"]


def test_edge_chunks_are_padded_with_the_fill_value():
    """Stored edge chunks are whole chunks; the part outside the array holds the
    fill value (the bytes codec only, so the stored bytes are the chunk)."""
    store = {}
    arr = make_array(store, (3, 5), (2, 4), "<u2", "bytes", fill_value=7)
    arr[...] = np.arange(15, dtype="u2").reshape(3, 5)
    edge = np.frombuffer(arr.store.get("c/1/1"), "<u2").reshape(2, 4)
    np.testing.assert_array_equal(edge, [[14, 7, 7, 7], [7, 7, 7, 7]])


@pytest.mark.parametrize("dtype", ["int32", "complex64", "complex128", "float64"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_stored_bytes_layout(dtype, endian):
    """The bytes codec's endianness (per component for complex types) and the
    transpose codec's order show in the stored chunk."""
    rng = np.random.default_rng(1)
    data = random_data(rng, (4, 6, 2), dtype)
    arr = zarrc.create_array({}, shape=data.shape, chunks=(4, 3, 2), dtype=dtype, compressors=None,
                             filters=[{"name": "transpose", "configuration": {"order": [2, 0, 1]}}],
                             serializer={"name": "bytes", "configuration": {"endian": endian}})
    arr[...] = data
    stored = np.dtype(dtype).newbyteorder("<" if endian == "little" else ">")
    chunk = data[:, 3:6, :].transpose(2, 0, 1).astype(stored)
    assert arr.store.get("c/0/1/0") == chunk.tobytes()
    np.testing.assert_array_equal(arr[...], data)


# ------------------------------------------------------------------ values, batches

def test_value_conversions(rw_store_maker):
    arr = make_array(rw_store_maker.new(), (4, 5), (3, 2), "float64", "blosc")
    expected = np.zeros((4, 5))
    for sel, value in [
        ((slice(None), 1), [1, 2, 3, 4]),                       # a list
        ((0,), np.arange(5, dtype="int8")),                      # another dtype
        ((slice(1, 3),), np.arange(10.0).reshape(2, 5)[::-1, ::-1]),  # negative strides
        ((Ellipsis, 4), np.arange(4.0).reshape(1, 4)),            # leading 1 dropped
        ((slice(None), slice(2, 4)), np.arange(2.0)),             # broadcast rows
        ((slice(None, None, 3), slice(None, None, 2)), np.asfortranarray(np.ones((2, 3)))),
        ((2, 3), np.float32(0.5)),
        ((slice(None), slice(None)), np.arange(4.0).reshape(4, 1)),
    ]:
        arr[sel] = value
        np_assign(expected, sel, value)
        np.testing.assert_array_equal(arr[...], expected)
    with pytest.raises(ValueError):
        arr[0:2] = np.ones((3, 5))
    np.testing.assert_array_equal(arr[...], expected)


def test_writes_split_into_batches(rw_store_maker, monkeypatch):
    monkeypatch.setattr(batch, "WRITE_BATCH_BYTES", 3 * 4 * 4)        # three chunks a batch
    arr = make_array(rw_store_maker.new(), (9, 10), (2, 3), "int32", "zstd+crc32c")
    data = np.arange(90, dtype="int32").reshape(9, 10)
    arr[...] = data
    arr[1:8, 2:9] = -data[1:8, 2:9]
    data[1:8, 2:9] *= -1
    np.testing.assert_array_equal(arr[...], data)
    assert len(chunk_keys(arr.store)) == arr.nchunks


def test_no_temporary_files_after_writes(tmp_path):
    store = zarrc.stores.LocalStore(tmp_path / "a.zarr")
    arr = make_array(store, (20, 20), (3, 7), "float64", "blosc")
    arr[...] = 1.5
    arr[2:17:3, 5] = 2.5
    arr[:3, :7] = 0.0                                   # deletes chunk c/0/0
    names = [os.path.join(d, f) for d, _, files in os.walk(tmp_path) for f in files]
    assert not [n for n in names if os.path.basename(n).startswith(".")], names
    assert sorted(os.path.relpath(n, tmp_path / "a.zarr") for n in names) == sorted(
        ["zarr.json"] + [k for k in store.list() if k != "zarr.json"])
    assert not os.path.exists(tmp_path / "a.zarr" / "c" / "0" / "0")


def test_config_threads_one_gives_the_same_result(rw_store_maker):
    rng = np.random.default_rng(5)
    data = random_data(rng, (40, 30, 6), "float32")
    results = []
    for threads in (1, None):
        ctx = zarrc.config.set(threads=threads) if threads else zarrc.config.set()
        with ctx:
            arr = make_array(rw_store_maker.new(), data.shape, (7, 4, 6), "float32", "blosc")
            arr[...] = data
            arr[3:33:2, ::5, 1] = -1.0
            results.append((arr[...], arr[1::3, 2:29, ::2], snapshot_chunks(arr)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def snapshot_chunks(arr):
    return {k: arr.store.get(k) for k in chunk_keys(arr.store)}


def test_zip_rewrites_warn_but_read_the_latest(scratch_root):
    store = new_store("zip", scratch_root)
    arr = make_array(store, (4,), (2,), "int8", "bytes")
    arr[...] = 1
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        arr[1:3] = 2
    np.testing.assert_array_equal(arr[...], [1, 2, 2, 1])


def test_uncompressed_chunks_read_back_missing_ones_fill_and_bad_sizes_name_the_chunk(tmp_path):
    """A whole uncompressed chunk is read from its file straight into the output;
    a file of the wrong size is an error naming the chunk, a missing one the fill."""
    x = np.arange(8 * 6, dtype="<i4").reshape(8, 6)
    a = zarrc.create_array(str(tmp_path), shape=(8, 6), chunks=(4, 3), dtype="<i4", compressors=None,
                           fill_value=-1)
    a[:] = x
    np.testing.assert_array_equal(a[4:8, 0:3], x[4:8, 0:3])
    np.testing.assert_array_equal(a[:], x)
    (tmp_path / "c" / "1" / "0").unlink()
    expected = x.copy()
    expected[4:8, 0:3] = -1
    np.testing.assert_array_equal(a[:], expected)
    chunk = tmp_path / "c" / "0" / "1"
    chunk.write_bytes(chunk.read_bytes()[:-4])
    with pytest.raises(zarrc.errors.CodecError, match="c/0/1"):
        a[0:4, 3:6]
    chunk.write_bytes(bytes(4 * 3 * 4 + 4))
    with pytest.raises(zarrc.errors.CodecError, match="c/0/1"):
        a[:]
    big = zarrc.create_array(str(tmp_path / "big"), shape=(4, 3), chunks=(4, 3), dtype=">u2",
                             compressors=None, serializer={"name": "bytes", "configuration": {"endian": "big"}})
    big[:] = np.arange(12).reshape(4, 3)
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "big"))[:], np.arange(12).reshape(4, 3))


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_spread_order_is_a_permutation_that_alternates_runs(parts):
    for n in range(40):
        order = batch.spread_order(n, parts)
        assert sorted(order.tolist()) == list(range(n))
        m = -(-n // parts)
        if parts > 1 and n >= 2 * parts:   # neighbours come from different runs
            assert all(a // m != b // m for a, b in itertools.pairwise(order[:parts]))


def test_files_written_in_spread_order_and_parents_made_deepest_first(tmp_path):
    """Whole chunks written by two threads land in the right files whatever order the
    tasks run in; missing parent directories are made however deep, some existing."""
    (tmp_path / "a.zarr" / "c" / "1").mkdir(parents=True)     # one parent exists already
    data = np.arange(6 * 5 * 8, dtype="<i4").reshape(6, 5, 8)
    with zarrc.config.set(threads=2):
        a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=data.shape, chunks=(2, 2, 8),
                               dtype="<i4", compressors=None, fill_value=-1)
        a[...] = data
    for i, j in np.ndindex(3, 3):
        stored = np.frombuffer((tmp_path / "a.zarr" / "c" / str(i) / str(j) / "0").read_bytes(), "<i4")
        expected = np.full((2, 2, 8), -1, "<i4")
        part = data[2 * i:2 * i + 2, 2 * j:2 * j + 2]
        expected[:part.shape[0], :part.shape[1]] = part
        np.testing.assert_array_equal(stored, expected.ravel())
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "a.zarr"))[...], data)


def test_a_file_where_a_chunk_directory_should_be_is_an_error(tmp_path):
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=(4, 4), chunks=(2, 2), dtype="<i4",
                           compressors=None, fill_value=0)
    (tmp_path / "a.zarr" / "c").write_bytes(b"in the way")
    with pytest.raises(zarrc.errors.StoreError, match="c/0/0"):
        a[...] = np.ones((4, 4), "<i4")
    assert (tmp_path / "a.zarr" / "c").read_bytes() == b"in the way"


@pytest.fixture(params=[True, False], ids=["unnamed", "named"])
def file_kind(request):
    """Atomic writes through files with no name (O_TMPFILE, then linked), or through
    named temporary files renamed into place (where there are no unnamed files)."""
    from zarrc._kernels import chunk_files
    before = chunk_files.unnamed_files()
    chunk_files.unnamed_files(request.param)
    yield request.param
    chunk_files.unnamed_files(before)


def test_atomic_writes_either_way(file_kind, tmp_path):
    data = np.random.default_rng(2).standard_normal((30, 20)).astype("<f8")
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=data.shape, chunks=(7, 6), dtype="<f8",
                           compressors=zarrc.codecs.Zstd(level=1), fill_value=0)
    a[...] = data                                    # new files
    a[...] = data * 2                                # whole chunks replaced
    a[3:25, 4] = -1.0                                # parts of chunks replaced
    expected = data * 2
    expected[3:25, 4] = -1.0
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "a.zarr"))[...], expected)
    names = [os.path.join(d, f) for d, _, files in os.walk(tmp_path) for f in files]
    assert not [n for n in names if os.path.basename(n).startswith(".")], names
    assert len(names) == 1 + 5 * 4                   # zarr.json and every chunk
    umask = os.umask(0)
    os.umask(umask)
    assert {os.stat(n).st_mode & 0o777 for n in names} == {0o666 & ~umask}
