"""The chunk-file C code (zarrc/_kernels/src/chunk_files.c) through its thin Python
wrappers (zarrc._kernels.chunk_files): whole-file and ranged reads, short files,
missing files, slabs of uncompressed chunks, atomic writes (with and without files
that have no name) that make their directories, deletes, and the one rule for
temporary file names that the local store shares."""

import errno
import os
import stat

import pytest

from zarrc._kernels import chunk_files as cf
from zarrc._kernels.errors import IO, SIZE, TRUNCATED, KernelError
from zarrc.stores.local import LocalStore, is_temp_name


@pytest.fixture(params=[True, False], ids=["unnamed", "named"])
def unnamed(request):
    before = cf.unnamed_files()
    cf.unnamed_files(request.param)
    yield request.param
    cf.unnamed_files(before)


def test_whole_file_is_read(tmp_path):
    data = os.urandom(300_000)
    (tmp_path / "c").write_bytes(data)
    assert cf.read_whole_file(os.fsencode(tmp_path / "c")) == data
    (tmp_path / "e").write_bytes(b"")
    assert cf.read_whole_file(os.fsencode(tmp_path / "e")) == b""


@pytest.mark.parametrize("name", ["missing", "missing/below/a/file"])
def test_missing_file_reads_as_none(tmp_path, name):
    assert cf.read_whole_file(os.fsencode(tmp_path / name)) is None


def test_file_under_a_file_reads_as_missing(tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    assert cf.read_whole_file(os.fsencode(tmp_path / "f" / "c")) is None   # ENOTDIR


def test_directory_is_an_io_error(tmp_path):
    with pytest.raises(KernelError) as e:
        cf.read_whole_file(os.fsencode(tmp_path))
    assert e.value.code == IO


def test_range_is_read(tmp_path):
    data = bytes(range(256)) * 40
    (tmp_path / "s").write_bytes(data)
    assert cf.read_file_range(os.fsencode(tmp_path / "s"), 1000, 333) == data[1000:1333]
    assert cf.read_file_range(os.fsencode(tmp_path / "s"), len(data), 0) == b""


def test_range_past_the_end_is_truncated(tmp_path):
    (tmp_path / "s").write_bytes(b"0123456789")
    with pytest.raises(KernelError, match="past the end") as e:
        cf.read_file_range(os.fsencode(tmp_path / "s"), 6, 8)
    assert (e.value.code, e.value.expected, e.value.actual) == (TRUNCATED, 14, 10)


def test_slabs_of_an_uncompressed_chunk(tmp_path):
    data = os.urandom(4096)
    path = os.fsencode(tmp_path / "u")
    (tmp_path / "u").write_bytes(data)
    starts = [0, 100, 4000, 96]
    assert cf.read_slabs(path, 4096, starts, 96) == b"".join(data[s:s + 96] for s in starts)
    assert cf.read_slabs(os.fsencode(tmp_path / "none"), 4096, starts, 96) is None


def test_slabs_of_a_short_chunk_file(tmp_path):
    (tmp_path / "u").write_bytes(b"x" * 100)
    with pytest.raises(KernelError) as e:                  # the file must hold the chunk
        cf.read_slabs(os.fsencode(tmp_path / "u"), 128, [0], 16)
    assert (e.value.code, e.value.expected, e.value.actual) == (SIZE, 128, 100)


def test_directory_reads_fail_with_eisdir(tmp_path):
    """A directory in place of a chunk file: EISDIR from the whole-file read and
    from the slab read (src/chunk_files.c checks the type; Windows opens
    directories too, so it is checked there the same way)."""
    for read in (lambda p: cf.read_whole_file(p), lambda p: cf.read_slabs(p, 8, [0], 8)):
        with pytest.raises(KernelError) as e:
            read(os.fsencode(tmp_path))
        assert e.value.code == IO and e.value.actual == errno.EISDIR


def test_open_regular_names_the_file(tmp_path):
    (tmp_path / "r").write_bytes(b"abc")
    fd, (dev, ino, size, mtime_ns) = cf.open_regular_file(os.fsencode(tmp_path / "r"))
    try:
        st = os.fstat(fd)
        assert (dev, ino, size, mtime_ns) == (st.st_dev, st.st_ino, 3, st.st_mtime_ns)
    finally:
        os.close(fd)
    assert cf.open_regular_file(os.fsencode(tmp_path / "none")) == -1
    assert cf.open_regular_file(os.fsencode(tmp_path)) == -2           # not a regular file


def test_write_makes_nested_directories(tmp_path, unnamed):
    path = tmp_path / "a" / "b" / "c" / "0.0"
    assert cf.write_parts_to(os.fsencode(path), [b"head", None, b"", b"tail"]) == 8
    assert path.read_bytes() == b"headtail"
    assert os.listdir(path.parent) == ["0.0"]               # no temporary file left


def test_write_replaces_atomically(tmp_path, unnamed):
    path = tmp_path / "c"
    path.write_bytes(b"old" * 1000)
    ino = path.stat().st_ino
    cf.write_parts_to(os.fsencode(path), [b"new"])
    assert path.read_bytes() == b"new"
    assert path.stat().st_ino != ino                        # a new file took the name
    assert os.listdir(tmp_path) == ["c"]


def test_write_of_many_parts(tmp_path, unnamed):
    parts = [os.urandom(n % 97) for n in range(1000)]      # more than one writev call
    path = tmp_path / "many"
    assert cf.write_parts_to(os.fsencode(path), parts) == sum(map(len, parts))
    assert path.read_bytes() == b"".join(parts)


def test_write_into_a_file_fails(tmp_path, unnamed):
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(KernelError) as e:
        cf.write_parts_to(os.fsencode(tmp_path / "f" / "c"), [b"data"])
    assert e.value.code == IO


def test_make_parents(tmp_path):
    cf.make_parents(os.fsencode(tmp_path / "x" / "y" / "z" / "file"))
    assert (tmp_path / "x" / "y" / "z").is_dir()
    assert not (tmp_path / "x" / "y" / "z" / "file").exists()
    cf.make_parents(os.fsencode(tmp_path / "x" / "y" / "z" / "file"))    # exists: fine
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(OSError):
        cf.make_parents(os.fsencode(tmp_path / "f" / "d" / "file"))


def test_delete(tmp_path):
    (tmp_path / "c").write_bytes(b"x")
    cf.delete(os.fsencode(tmp_path / "c"))
    assert not (tmp_path / "c").exists()
    cf.delete(os.fsencode(tmp_path / "c"))                  # missing: no error
    cf.delete(os.fsencode(tmp_path / "c" / "below"))        # under a missing file: no error
    (tmp_path / "d").mkdir()
    with pytest.raises(KernelError) as e:
        cf.delete(os.fsencode(tmp_path / "d"))
    assert e.value.code == IO


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_write_into_a_read_only_directory_fails(tmp_path, unnamed):
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(KernelError):
            cf.write_parts_to(os.fsencode(tmp_path / "ro" / "c"), [b"data"])
    finally:
        os.chmod(tmp_path / "ro", stat.S_IRWXU)


# ---------------------------------------------------------------- temporary names

def test_temp_path_rule():
    tag = b"12-34-abcd5"
    assert cf.temp_path(b"/d/e/c.0", tag) == b"/d/e/.c.0" + cf.TEMP_MARK.encode() + tag + cf.TEMP_END.encode()
    assert cf.temp_path(b"c.0", tag) == b".c.0.zarrc-12-34-abcd5.tmp"
    assert cf.temp_path("/d/name", tag) == "/d/.name.zarrc-12-34-abcd5.tmp"      # str in, str out


def test_temp_path_fits_name_max_for_long_names():
    long = "n" * 250
    tmp = cf.temp_path("/d/" + long)
    name = tmp.rsplit("/", 1)[1]
    assert name.startswith("." + "n" * cf.TEMP_NAME_KEEP + cf.TEMP_MARK)
    assert len(name.encode()) < 255
    assert is_temp_name(name)


def test_temp_tags_differ():
    assert len({cf.temp_tag() for _ in range(100)}) == 100
    a, b = cf.temp_path("/d/x"), cf.temp_path("/d/x")
    assert a != b and is_temp_name(a.rsplit("/", 1)[1])


def test_long_keys_are_written_by_the_native_writer_and_the_store(tmp_path, unnamed):
    """The C writer's fallback (a named temporary file) and LocalStore.set name their
    temporary files by the same rule, so both write keys whose names are long."""
    store = LocalStore(tmp_path)
    key = "k" * 240
    store.set(key, b"by the store")
    assert store.get(key) == b"by the store"
    cf.write_parts_to(os.fsencode(tmp_path / key), [b"natively"])      # exists: temporary name
    assert store.get(key) == b"natively"
    assert sorted(os.listdir(tmp_path)) == [key]
