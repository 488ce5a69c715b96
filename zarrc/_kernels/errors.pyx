# cython: language_level=3, freethreading_compatible=True
"""The kernels' error codes and :class:`KernelError`, the exception a codec kernel
raises when it refuses its input (the codes: see errors.pxd).  No C library."""

import os


class KernelError(Exception):
    """A codec kernel refused its input.

    ``code`` is one of the ZC_* codes (see ``errors.pxd``); ``expected`` and
    ``actual`` carry the sizes or checksums involved, ``codec`` the codec name.
    The Python codec layer turns it into a :class:`zarrc.errors.CodecError`.
    """

    def __init__(self, message, codec, code, expected, actual):
        super().__init__(message)
        self.codec = codec
        self.code = code
        self.expected = expected
        self.actual = actual


CORRUPT = ZC_CORRUPT
TRUNCATED = ZC_TRUNCATED
SIZE = ZC_SIZE
TOO_LARGE = ZC_TOO_LARGE
PARAM = ZC_PARAM
UNSUPPORTED = ZC_UNSUPPORTED
CHECKSUM = ZC_CHECKSUM
IO = ZC_IO
VALUE = ZC_VALUE


cdef str describe(ZcError* err, Py_ssize_t nin):
    detail = err.detail.decode("utf-8", "replace") if err.detail != NULL else ""
    code, exp, act = err.code, err.expected, err.actual
    if code == ZC_IO:
        return f"{detail} failed: {os.strerror(act)}"
    if code == ZC_TRUNCATED:
        what = f" ({detail})" if detail else ""
        return f"input truncated{what}: needs {exp} bytes, holds {act}"
    if code == ZC_SIZE:
        return f"{detail or 'data decodes to'} {act} bytes, {exp} expected"
    if code == ZC_TOO_LARGE:
        return f"data decodes to more than the {exp} bytes expected"
    if code == ZC_CHECKSUM:
        what = f"{detail} " if detail else ""
        return f"{what}checksum mismatch: stored 0x{exp:08x}, computed 0x{act:08x}"
    if code == ZC_VALUE:
        return f"item {exp} of the chunk: {detail}"
    if code == ZC_CORRUPT:
        where = f" in {nin} bytes of input" if nin >= 0 else ""
        return f"corrupt data ({detail}){where}"
    return detail or f"error {code}"


cdef object raise_error(str codec, ZcError* err, Py_ssize_t nin):
    if err.code == ZC_NOMEM:
        raise MemoryError(f"{codec}: out of memory")
    raise KernelError(f"{codec}: {describe(err, nin)}", codec, err.code, err.expected, err.actual)
