# Shard assembly, for other kernels.

from libc.stdint cimport int64_t, uint8_t, uint64_t

# The shard index layout (the home of it; Python takes the names from shard.pyx):
# one entry per inner chunk, two uint64 (offset, nbytes), both all ones for an empty
# chunk, then 4 bytes of crc32c (little-endian) when the index codecs end in crc32c.
cdef enum:
    SHARD_ENTRY_BYTES = 16
    SHARD_CRC_BYTES = 4

cdef extern from *:
    """
    #define ZC_SHARD_EMPTY UINT64_MAX
    #define ZC_SHARD_DAMAGED (UINT64_MAX - 1)
    """
    const uint64_t SHARD_EMPTY "ZC_SHARD_EMPTY"   # an empty entry's offset and nbytes
    # a damaged entry's offset in a checked index (codecs/shard_index.check_index: half
    # empty, outside the shard's data, overlapping another); never a valid offset, for
    # no shard reaches 2^64 - 2 bytes
    const uint64_t SHARD_DAMAGED "ZC_SHARD_DAMAGED"

cdef inline Py_ssize_t shard_index_nbytes(Py_ssize_t n, bint crc) noexcept nogil:
    return SHARD_ENTRY_BYTES * n + (SHARD_CRC_BYTES if crc else 0)

cdef Py_ssize_t fill_index(const uint8_t** ptrs, const Py_ssize_t* lens, Py_ssize_t n,
                           Py_ssize_t first_offset, bint index_big_endian, bint index_crc,
                           uint8_t* index) noexcept nogil
cdef object build_shard(const uint8_t** ptrs, const Py_ssize_t* lens, Py_ssize_t n,
                        bint index_at_start, bint index_big_endian, bint index_crc)
cdef int part_pointer(object part, Py_ssize_t i, const uint8_t** ptr, Py_ssize_t* length) except -1
cdef Py_ssize_t shard_place(const int64_t* coords, Py_ssize_t ndim, const Py_ssize_t* cps,
                            const Py_ssize_t* grid, const int64_t** starts, const Py_ssize_t* nstarts,
                            int64_t* shard, Py_ssize_t* entry, Py_ssize_t* nchunks) noexcept nogil
