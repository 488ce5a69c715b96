"""The blosc codec (v3 ``blosc``, v2/numcodecs ``blosc``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zarrc._kernels import blosc as k
from zarrc.codecs._base import Codec, Fail, NativeStep, codec_fail, raise_codec_error
from zarrc.codecs.enums import plain
from zarrc.codecs.registry import register
from zarrc.errors import CodecError
from zarrc.metadata.codecs import required_members
from zarrc.metadata.common import fail as spec_fail
from zarrc.metadata.common import is_int
from zarrc.metadata.dtypes import DataType
from zarrc.runtime.threads import codec_threads, run_each

CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}   # blosc's codes
SHUFFLE_NAMES = {v: n for n, v in SHUFFLES.items()}
AUTOSHUFFLE = -1        # numcodecs' code for "by the item size"


def item_size(data_type: DataType) -> int:
    """The item size blosc shuffles by for ``data_type``: its size, 1 for the
    variable-length types (whose chunks are a byte stream), as zarr-python."""
    return 1 if data_type.variable_length else data_type.itemsize


def default_shuffle(typesize: int) -> str:
    """blosc's shuffle when none is given (zarr-python's for a ``BloscCodec`` without
    one, numcodecs' AUTOSHUFFLE): "bitshuffle" for one-byte items, else "shuffle"."""
    return "bitshuffle" if typesize == 1 else "shuffle"


def check_options(cname: Any, clevel: Any, shuffle: Any, typesize: Any, blocksize: Any, fail: Fail, *,
                  codes: bool) -> int | None:
    """blosc's options checked, the one check of the spec parser and the constructor
    (``fail`` words the error); returns the shuffle's code (None: by the typesize).
    ``shuffle``: a name, None, or with ``codes`` numcodecs' codes 0, 1, 2 and -1
    (AUTOSHUFFLE); ``typesize`` None: the item size."""
    if not isinstance(cname, str) or cname not in CNAMES:
        fail("cname", cname, f"must be one of {', '.join(CNAMES)}")
    if not is_int(clevel) or not 0 <= clevel <= 9:
        fail("clevel", clevel, "must be an integer from 0 to 9")
    code: int | None = None
    if isinstance(shuffle, str) and shuffle in SHUFFLES:
        code = SHUFFLES[shuffle]
    elif codes and is_int(shuffle) and (shuffle in SHUFFLE_NAMES or shuffle == AUTOSHUFFLE):
        code = None if shuffle == AUTOSHUFFLE else shuffle
    elif shuffle is not None:
        fail("shuffle", shuffle, f"must be one of {', '.join(SHUFFLES)}"
             + (" (or numcodecs' codes 0, 1, 2, -1)" if codes else ""))
    if typesize is not None and (not is_int(typesize) or typesize < 1):
        fail("typesize", typesize, "must be a positive integer")
    if not is_int(blocksize) or blocksize < 0:
        fail("blocksize", blocksize, "must be a non-negative integer")
    return code


def _check_built(cname: str) -> None:
    if cname not in k.blosc_compressors():
        raise CodecError(f"blosc: compressor {cname!r} is not built into this blosc "
                         f"(available: {k.blosc_compressors()})")


@dataclass(frozen=True)
class BloscStep(NativeStep):
    """The kernels' blosc step: compressor, level, shuffle code, typesize, blocksize."""

    kind = "blosc"
    cname: str
    clevel: int
    shuffle: int
    typesize: int
    blocksize: int


def _decode_blocks_parallel(buf: Any, dest: memoryview, nbytes: int, blocksize: int,
                            threads: int) -> None:
    """Decode a blosc frame on ``threads`` threads of the shared pool, each taking
    runs of whole blocks (blosc's getitem) until none are left."""
    if dest.nbytes != nbytes:
        raise CodecError(f"blosc: header claims {nbytes} bytes, {dest.nbytes} expected")
    per_task = max(blocksize, -(-nbytes // (threads * 4)) // blocksize * blocksize)
    run_each(range(0, nbytes, per_task),
             lambda start: k.blosc_decode_range(buf, start, dest[start:start + per_task]), threads)


@register
class Blosc(Codec):
    """Blosc: shuffle + compress with lz4, lz4hc, blosclz, zstd or zlib.

    Parameters
    ----------
    cname : compressor name; "snappy" is recognised but not built in.
    clevel : 0 (no compression) to 9.
    shuffle : "noshuffle", "shuffle" or "bitshuffle" (or numcodecs' 0, 1, 2); None (or
        numcodecs' AUTOSHUFFLE, -1): by the item size, "bitshuffle" for one-byte
        items, else "shuffle" (zarr-python's rule for a ``BloscCodec`` given no
        shuffle, numcodecs' for AUTOSHUFFLE; decided by the typesize).
    typesize : bytes per element for shuffling; None takes the item size of the
        buffer given to ``encode`` (as numcodecs does).

    Options left None are set from the data type when the codec is given to a new
    array (its zarr.json records them), as zarr-python does for its own codecs.
    blocksize : bytes per blosc block; 0 lets blosc choose.

    ``decode`` checks the frame header against the size of ``out`` before writing,
    and raises CodecError for corrupt, truncated or wrongly sized input.
    """

    name = "blosc"
    codec_id = "blosc"
    numcodecs_keys = frozenset({"cname", "clevel", "shuffle", "blocksize", "typesize"})

    def __init__(self, cname: str = "lz4", clevel: int = 5, shuffle: str | int | None = None,
                 typesize: int | None = None, blocksize: int = 0) -> None:
        cname, shuffle = plain(cname), plain(shuffle)      # (enum members: BloscCname, BloscShuffle)
        shuffle_code = check_options(cname, clevel, shuffle, typesize, blocksize, codec_fail("blosc"),
                                     codes=True)
        _check_built(cname)
        self._set(cname, clevel, shuffle_code, typesize, blocksize)

    @classmethod
    def from_numcodecs(cls, config: Mapping[str, Any]) -> Blosc:
        """numcodecs' default shuffle is SHUFFLE (1); its AUTOSHUFFLE (-1) is decided per
        buffer by the typesize, or the buffer's item size, as numcodecs does (after
        filters that change it)."""
        return cls(**{"shuffle": 1, **config})

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """blosc's members; those left out get zarr-python's values (``BloscCodec``'s
        defaults, and what it derives from the data type): cname "zstd", clevel 5,
        typesize the item size, shuffle "bitshuffle" for one-byte items else "shuffle",
        blocksize 0."""
        required_members(config, (), ("cname", "clevel", "shuffle", "typesize", "blocksize"))
        size = item_size(data_type)
        cname, clevel = config.get("cname", "zstd"), config.get("clevel", 5)
        shuffle = config.get("shuffle")           # (None too: zarr-python's "derive it")
        typesize = config.get("typesize")
        blocksize = config.get("blocksize", 0)
        check_options(cname, clevel, shuffle, typesize, blocksize, spec_fail, codes=False)
        return {"typesize": size if typesize is None else typesize, "cname": cname, "clevel": clevel,
                "shuffle": default_shuffle(size) if shuffle is None else shuffle, "blocksize": blocksize}

    def _set(self, cname: str, clevel: int, shuffle_code: int | None, typesize: int | None,
             blocksize: int) -> None:
        self.cname = cname
        self.clevel = clevel
        self.shuffle = None if shuffle_code is None else SHUFFLE_NAMES[shuffle_code]
        self._shuffle = shuffle_code
        self.typesize = typesize
        self.blocksize = blocksize

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Blosc:
        """From a validated spec configuration: only checks that this build of blosc
        has the compressor (the spec also allows snappy)."""
        _check_built(configuration["cname"])
        codec = cls.__new__(cls)
        codec._set(configuration["cname"], configuration["clevel"], SHUFFLES[configuration["shuffle"]],
                   configuration.get("typesize"), configuration.get("blocksize", 0))
        return codec

    def shuffle_code(self, typesize: int) -> int:
        """blosc's shuffle code for a typesize (the codec's shuffle, or when it has none
        by the typesize, as numcodecs' AUTOSHUFFLE)."""
        if self._shuffle is not None:
            return self._shuffle
        return SHUFFLES[default_shuffle(typesize)]

    def native_step(self, itemsize: int) -> BloscStep:
        """The typesize is ``itemsize`` unless the codec sets one, the shuffle by it
        unless the codec sets one (by the typesize, as numcodecs' AUTOSHUFFLE)."""
        typesize = self.typesize if self.typesize is not None else itemsize
        return BloscStep(self.cname, self.clevel, self.shuffle_code(typesize), typesize, self.blocksize)

    def encode(self, buf: Any) -> bytes:
        view = memoryview(buf)
        typesize = self.typesize if self.typesize is not None else view.itemsize
        try:
            # One thread: blosc's threaded compression orders blocks by completion,
            # so the same input would not always give the same bytes.
            return k.blosc_compress(view, self.clevel, self.shuffle_code(typesize), typesize, self.cname,
                                    self.blocksize, 1)
        except k.KernelError as exc:
            raise_codec_error(exc)

    def decode(self, buf: Any, out: Any = None) -> Any:
        try:
            nbytes, _, blocksize, typesize, _ = k.blosc_header(buf)
            threads = min(codec_threads(nbytes), -(-nbytes // max(blocksize, 1)))
            if nbytes % max(typesize, 1):
                threads = 1     # blosc_getitem cannot reach a trailing partial item
            if threads <= 1:
                if out is None:
                    return k.blosc_decode(buf)
                k.blosc_decode_into(buf, out)
                return out
            dest = k.NewBytes(nbytes) if out is None else out
            _decode_blocks_parallel(buf, memoryview(dest).cast("B"), nbytes, blocksize, threads)
            return dest.take() if out is None else out
        except k.KernelError as exc:
            raise_codec_error(exc)

    def decode_range(self, buf: Any, start: int, out: Any) -> Any:
        """Decode only bytes [start, start + len(out)) of the decoded data into ``out``;
        blosc decompresses just the blocks that hold them."""
        try:
            k.blosc_decode_range(buf, start, out)
            return out
        except k.KernelError as exc:
            raise_codec_error(exc)

    def configuration(self) -> dict[str, Any]:
        """The v3 configuration; typesize and shuffle only where set (a new array fills
        them in from its data type)."""
        conf: dict[str, Any] = {"cname": self.cname, "clevel": self.clevel}
        if self.shuffle is not None:
            conf["shuffle"] = self.shuffle
        if self.typesize is not None:
            conf["typesize"] = self.typesize
        conf["blocksize"] = self.blocksize
        return conf

    def get_config(self) -> dict[str, Any]:
        """The numcodecs configuration (shuffle None is numcodecs' AUTOSHUFFLE, -1)."""
        return {"id": self.codec_id, "cname": self.cname, "clevel": self.clevel,
                "shuffle": AUTOSHUFFLE if self._shuffle is None else self._shuffle,
                "blocksize": self.blocksize}


class BloscCodec(Blosc):
    """zarr-python's ``BloscCodec``: :class:`Blosc` with zarr-python's keyword-only
    arguments and defaults (``cname="zstd"``; zarrc's ``Blosc()`` is lz4).  Unset
    ``typesize`` / ``shuffle`` are taken from the array's data type, as in zarr-python."""

    def __init__(self, *, typesize: int | None = None, cname: str = "zstd", clevel: int = 5,
                 shuffle: str | int | None = None, blocksize: int = 0) -> None:
        super().__init__(cname=cname, clevel=clevel, shuffle=shuffle, typesize=typesize,
                         blocksize=blocksize)
