# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""Shard assembly: inner chunks + index -> one shard, built without the GIL."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from zarrc._kernels.crc32c cimport zc_crc32c_update

ENTRY_BYTES = SHARD_ENTRY_BYTES
CRC_BYTES = SHARD_CRC_BYTES
EMPTY = SHARD_EMPTY                 # an empty entry's offset and nbytes
DAMAGED = SHARD_DAMAGED             # a damaged entry's offset and nbytes in a checked index


def index_nbytes(Py_ssize_t n, bint crc):
    """Bytes of the index of ``n`` inner chunks, with or without its crc32c."""
    return shard_index_nbytes(n, crc)


cdef inline void put_u64(uint8_t* p, uint64_t v, bint big) noexcept nogil:
    cdef int i
    for i in range(8):
        p[7 - i if big else i] = (v >> (8 * i)) & 0xff


cdef Py_ssize_t fill_index(const uint8_t** ptrs, const Py_ssize_t* lens, Py_ssize_t n,
                           Py_ssize_t first_offset, bint index_big_endian, bint index_crc,
                           uint8_t* index) noexcept nogil:
    """Write the index (shard_index_nbytes) of n inner chunks laid out in
    order from byte ``first_offset`` (ptrs[i] NULL: empty); return where they end."""
    cdef Py_ssize_t i, pos = first_offset
    cdef uint64_t off, nb
    cdef uint32_t crc
    for i in range(n):
        if ptrs[i] == NULL:
            off = nb = SHARD_EMPTY
        else:
            off = <uint64_t>pos
            nb = <uint64_t>lens[i]
            pos += lens[i]
        put_u64(index + SHARD_ENTRY_BYTES * i, off, index_big_endian)
        put_u64(index + SHARD_ENTRY_BYTES * i + 8, nb, index_big_endian)
    if index_crc:
        crc = zc_crc32c_update(0, index, SHARD_ENTRY_BYTES * n)
        for i in range(4):
            index[SHARD_ENTRY_BYTES * n + i] = (crc >> (8 * i)) & 0xff
    return pos


cdef object build_shard(const uint8_t** ptrs, const Py_ssize_t* lens, Py_ssize_t n,
                        bint index_at_start, bint index_big_endian, bint index_crc):
    """The shard made of n inner chunks (ptrs[i] NULL: empty) and its index, or None
    if every inner chunk is empty.  The copying runs without the GIL."""
    cdef Py_ssize_t i, pos, total, index_nbytes = shard_index_nbytes(n, index_crc)
    cdef uint8_t* out
    cdef bint any_data = False
    total = index_nbytes
    for i in range(n):
        if ptrs[i] != NULL:
            total += lens[i]
            any_data = True
    if not any_data:
        return None
    result = PyBytes_FromStringAndSize(NULL, total)
    out = <uint8_t*>PyBytes_AS_STRING(result)
    with nogil:
        pos = index_nbytes if index_at_start else 0
        fill_index(ptrs, lens, n, pos, index_big_endian, index_crc,
                   out if index_at_start else out + (total - index_nbytes))
        for i in range(n):
            if ptrs[i] != NULL:
                memcpy(out + pos, ptrs[i], lens[i])
                pos += lens[i]
    return result


cdef int part_pointer(object part, Py_ssize_t i, const uint8_t** ptr, Py_ssize_t* length) except -1:
    """Pointer and length of an inner chunk given as None, bytes or (bytes, offset, length)."""
    if part is None:
        ptr[0] = NULL
        length[0] = 0
    elif type(part) is bytes:
        ptr[0] = <const uint8_t*>PyBytes_AS_STRING(part)
        length[0] = PyBytes_GET_SIZE(part)
    else:
        buf, start, size = part
        if start < 0 or size < 0 or start + size > len(<bytes>buf):
            raise ValueError(f"inner chunk {i}: range ({start}, {size}) outside {len(buf)} bytes")
        ptr[0] = <const uint8_t*>PyBytes_AS_STRING(<bytes>buf) + <Py_ssize_t>start
        length[0] = size
    return 0


def assemble_shard(list parts, bint index_at_start, bint index_big_endian, bint index_crc):
    """Build a shard from its inner chunks, in C order of the inner chunk grid.

    ``parts[i]``: None (empty inner chunk), bytes, or (bytes, offset, length) (a
    slice of an old shard, kept byte for byte).  Chunks are laid out in order,
    then the index ((offset, nbytes) uint64 pairs, 2^64-1 for empty chunks, then
    the crc32c of the pairs if ``index_crc``) at the start or end.  Returns the
    shard's bytes, or None if every inner chunk is empty.
    """
    cdef Py_ssize_t n = len(parts), i
    cdef const uint8_t** ptrs = <const uint8_t**>malloc(max(n, 1) * sizeof(void*))
    cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    if ptrs == NULL or lens == NULL:
        free(ptrs)
        free(lens)
        raise MemoryError()
    try:
        for i in range(n):
            part_pointer(parts[i], i, &ptrs[i], &lens[i])
        return build_shard(ptrs, lens, n, index_at_start, index_big_endian, index_crc)
    finally:
        free(ptrs)
        free(lens)


# check_index's answers: the entries' layout is sound, or the first fault found
INDEX_OK, INDEX_HALF_EMPTY, INDEX_OUTSIDE, INDEX_OVERLAP, INDEX_UNSORTED = 0, 1, 2, 3, 4


def check_index(const uint64_t[:, ::1] table, uint64_t data_start, uint64_t data_end, bint bounded):
    """One pass over a decoded shard index (n x 2 native uint64: offset, nbytes),
    without the GIL and without temporaries: (code, i, j).  ``INDEX_HALF_EMPTY`` /
    ``INDEX_OUTSIDE``: entry ``i`` is the first one half empty / the first used one
    not inside [data_start, data_end) (``bounded`` False: no end); else
    ``INDEX_OVERLAP``: used entries ``i`` and ``j``, consecutive in offset order,
    overlap; ``INDEX_UNSORTED``: the used entries are not in offset order and their
    overlaps are left to the caller; ``INDEX_OK``."""
    cdef Py_ssize_t n = table.shape[0], k, prev = -1, half = -1, outside = -1, ov_a = -1, ov_b = -1
    cdef uint64_t off, nb, end, prev_off = 0, prev_end = 0
    cdef bint unsorted = False
    if table.shape[1] != 2:
        raise ValueError(f"a shard index table has 2 columns, not {table.shape[1]}")
    with nogil:
        for k in range(n):
            off = table[k, 0]
            nb = table[k, 1]
            if off == SHARD_EMPTY or nb == SHARD_EMPTY:
                if (off == SHARD_EMPTY) != (nb == SHARD_EMPTY) and half < 0:
                    half = k
                continue
            end = off + nb                      # wraps for absurd values: end < off
            if outside < 0 and (off < data_start or end < off or (bounded and end > data_end)):
                outside = k
            if prev >= 0 and not unsorted:
                if off < prev_off:
                    unsorted = True
                elif prev_end > off and ov_a < 0:
                    ov_a, ov_b = prev, k
            prev, prev_off, prev_end = k, off, end
    if half >= 0:
        return INDEX_HALF_EMPTY, half, -1
    if outside >= 0:
        return INDEX_OUTSIDE, outside, -1
    if unsorted:
        return INDEX_UNSORTED, -1, -1
    if ov_a >= 0:
        return INDEX_OVERLAP, ov_a, ov_b
    return INDEX_OK, -1, -1


cdef Py_ssize_t shard_place(const int64_t* coords, Py_ssize_t ndim, const Py_ssize_t* cps,
                            const Py_ssize_t* grid, const int64_t** starts, const Py_ssize_t* nstarts,
                            int64_t* shard, Py_ssize_t* entry, Py_ssize_t* nchunks) noexcept nogil:
    """Where the inner chunk at grid coordinates ``coords`` is stored: its shard's
    grid coordinates (``shard``), its index entry in it (``entry``, C order) and the
    shard's entries (``nchunks``); returns the shard's C-order number in a grid of
    ``grid`` shards per dimension.  Along dimension d a shard holds ``cps[d]`` inner
    chunks, or, where ``starts[d]`` is not NULL (a rectilinear grid's shards), the
    shards begin at inner chunks starts[d][0 .. nstarts[d] - 1] (increasing, from 0,
    the last one the end), found by a binary search."""
    cdef Py_ssize_t d, lo, hi, mid, n, sid = 0, flat = 0, total = 1
    cdef int64_t c, k, origin
    for d in range(ndim):
        c = coords[d]
        if starts[d] == NULL:
            k = c // cps[d]
            n = cps[d]
            origin = k * n
        else:
            lo, hi = 0, nstarts[d] - 1        # starts[d][lo] <= c < starts[d][hi]
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if starts[d][mid] <= c:
                    lo = mid
                else:
                    hi = mid
            k = lo
            origin = starts[d][lo]
            n = <Py_ssize_t>(starts[d][lo + 1] - origin)
        shard[d] = k
        sid = sid * grid[d] + k
        flat = flat * n + <Py_ssize_t>(c - origin)
        total *= n
    entry[0] = flat
    nchunks[0] = total
    return sid
