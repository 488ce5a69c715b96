# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""N-d strided copy / fill kernels between chunk buffers and array regions (nogil)."""

from libc.stdint cimport uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memcmp

cdef extern from "src/zc_platform.h":
    uint16_t zc_bswap16(uint16_t v) noexcept nogil
    uint32_t zc_bswap32(uint32_t v) noexcept nogil
    uint64_t zc_bswap64(uint64_t v) noexcept nogil


cdef inline void swap_item(char* dst, const char* src, Py_ssize_t itemsize) noexcept nogil:
    cdef uint16_t a
    cdef uint32_t b
    cdef uint64_t c
    cdef Py_ssize_t i
    if itemsize == 2:
        memcpy(&a, src, 2); a = zc_bswap16(a); memcpy(dst, &a, 2)
    elif itemsize == 4:
        memcpy(&b, src, 4); b = zc_bswap32(b); memcpy(dst, &b, 4)
    elif itemsize == 8:
        memcpy(&c, src, 8); c = zc_bswap64(c); memcpy(dst, &c, 8)
    else:
        for i in range(itemsize):
            dst[i] = src[itemsize - 1 - i]


cdef void byteswap(char* buf, Py_ssize_t n_items, Py_ssize_t itemsize) noexcept nogil:
    """Reverse the bytes of each of n_items items of itemsize bytes, in place
    (for complex types, call with the size of one component)."""
    cdef Py_ssize_t i, j
    cdef char t
    if itemsize <= 1:
        return
    if itemsize in (2, 4, 8):
        for i in range(n_items):
            swap_item(buf + i * itemsize, buf + i * itemsize, itemsize)
        return
    for i in range(n_items):
        for j in range(itemsize // 2):
            t = buf[i * itemsize + j]
            buf[i * itemsize + j] = buf[i * itemsize + itemsize - 1 - j]
            buf[i * itemsize + itemsize - 1 - j] = t


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include "src/zc_platform.h"
    #if defined(ZC_HAVE_SSE2)
    #include <emmintrin.h>
    /* Copy with non-temporal stores: the destination's cache lines are written
       without being read first (a large fresh output is not in any cache).  Short
       runs only where they are whole cache lines (else lines are written in parts). */
    static inline void zc_stream_copy(char* dst, const char* src, size_t n) {
        if (n < 256 && (n < 64 || (((uintptr_t)dst | n) & 63))) { memcpy(dst, src, n); return; }
        /* to a cache line's start: a 64-byte group of stream stores that straddles
           two lines writes each in part (a partial write-combining flush, ~2x slower
           on an output numpy aligned to 16 bytes) */
        size_t head = (size_t)(-(uintptr_t)dst) & 63;
        if (head > n) head = n;
        memcpy(dst, src, head);
        dst += head; src += head; n -= head;
        for (; n >= 64; n -= 64, dst += 64, src += 64) {
            __m128i a = _mm_loadu_si128((const __m128i*)src);
            __m128i b = _mm_loadu_si128((const __m128i*)(src + 16));
            __m128i c = _mm_loadu_si128((const __m128i*)(src + 32));
            __m128i d = _mm_loadu_si128((const __m128i*)(src + 48));
            _mm_stream_si128((__m128i*)dst, a);
            _mm_stream_si128((__m128i*)(dst + 16), b);
            _mm_stream_si128((__m128i*)(dst + 32), c);
            _mm_stream_si128((__m128i*)(dst + 48), d);
        }
        memcpy(dst, src, n);
    }
    static inline void zc_stream_fence(void) { _mm_sfence(); }
    #else
    static inline void zc_stream_copy(char* dst, const char* src, size_t n) { memcpy(dst, src, n); }
    static inline void zc_stream_fence(void) {}
    #endif
    """
    void zc_stream_copy(char* dst, const char* src, size_t n) noexcept nogil
    void zc_stream_fence() noexcept nogil


cdef extern from *:
    """
    #include "src/zc_platform.h"
    #if defined(__linux__)
    #include <sys/mman.h>
    #ifndef MADV_POPULATE_WRITE
    #define MADV_POPULATE_WRITE 23
    #endif
    /* Map the pages of a fresh output in one call: the kernel then zeroes them
       without taking a fault for each one (~1 us a page on a VM).  Skipped when
       the first page is in memory already (a block malloc handed out before). */
    static void zc_prefault(char* p, size_t n) {
        long page = zc_page_size();
        if (page <= 0) return;
        uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
        uintptr_t hi = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
        unsigned char resident = 0;
        if (hi <= lo) return;
        if (mincore((void*)lo, (size_t)page, &resident) == 0 && (resident & 1)) return;
        (void)madvise((void*)lo, hi - lo, MADV_POPULATE_WRITE);  /* (older kernels: EINVAL) */
    }
    #else
    static void zc_prefault(char* p, size_t n) { (void)p; (void)n; }
    #endif
    """
    void zc_prefault(char* p, size_t n) noexcept nogil


cdef void prefault(char* p, size_t n) noexcept nogil:
    """Make the pages of p[0:n], a new output not yet written, present in one call
    (Linux 5.14+; elsewhere, or when they are present already, nothing)."""
    zc_prefault(p, n)


cdef void stream_fence() noexcept nogil:
    """Order this thread's copy_nd(..., stream=True) stores before what follows."""
    zc_stream_fence()


cdef inline void copy_items(const char* src, char* dst, DimPlan* d,
                            Py_ssize_t itemsize, bint stream) noexcept nogil:
    cdef Py_ssize_t k, n = d.count
    cdef Py_ssize_t* so = d.src_off
    cdef Py_ssize_t* do = d.dst_off
    if d.contiguous:
        if stream:
            zc_stream_copy(dst + do[0], src + so[0], n * itemsize)
        else:
            memcpy(dst + do[0], src + so[0], n * itemsize)
    elif itemsize == 1:
        for k in range(n):
            dst[do[k]] = src[so[k]]
    elif itemsize == 2:
        for k in range(n):
            (<uint16_t*>(dst + do[k]))[0] = (<const uint16_t*>(src + so[k]))[0]
    elif itemsize == 4:
        for k in range(n):
            (<uint32_t*>(dst + do[k]))[0] = (<const uint32_t*>(src + so[k]))[0]
    elif itemsize == 8:
        for k in range(n):
            (<uint64_t*>(dst + do[k]))[0] = (<const uint64_t*>(src + so[k]))[0]
    else:
        for k in range(n):
            memcpy(dst + do[k], src + so[k], itemsize)


cdef void copy_nd(const char* src, char* dst, int ndim, DimPlan* dims,
                  Py_ssize_t itemsize, bint stream=False) noexcept nogil:
    """Copy every selected element: element (k0..kn) goes from
    src + sum(dims[d].src_off[kd]) to dst + sum(dims[d].dst_off[kd]).  ``stream``:
    contiguous runs are written with non-temporal stores (for outputs much larger
    than the caches; call stream_fence before the output is handed over)."""
    cdef Py_ssize_t idx[32]
    cdef Py_ssize_t so, do
    cdef int d
    if ndim == 0:
        memcpy(dst, src, itemsize)
        return
    for d in range(ndim):
        if dims[d].count == 0:
            return
        idx[d] = 0
    while True:
        so = 0
        do = 0
        for d in range(ndim - 1):
            so += dims[d].src_off[idx[d]]
            do += dims[d].dst_off[idx[d]]
        copy_items(src + so, dst + do, &dims[ndim - 1], itemsize, stream)
        if not next_position(idx, dims, ndim - 1):
            return


cdef extern from *:
    """
    /* Ask for the cache lines of p[0:n] (at most the first 512 bytes: the hardware
       prefetcher follows a longer run by itself). */
    #include "src/zc_platform.h"
    static inline void zc_prefetch_lines(const char* p, size_t n) {
        const char* end = p + (n < 512 ? n : 512);
        for (p = (const char*)((uintptr_t)p & ~(uintptr_t)63); p < end; p += 64)
            zc_prefetch(p);
    }
    """
    void zc_prefetch_lines(const char* p, size_t n) noexcept nogil


DEF PREFETCH_ROWS = 8


cdef void gather_nd(const char* src, char* dst, int ndim, DimPlan* dims,
                    Py_ssize_t itemsize) noexcept nogil:
    """copy_nd from a large array into a chunk buffer (a write's gather): the source
    rows PREFETCH_ROWS ahead are prefetched.  A chunk's rows lie far apart in the
    array (each in its own 4 KiB page when rows are short), so the hardware
    prefetcher does not see them coming and each row would wait for memory."""
    cdef Py_ssize_t idx[32]
    cdef Py_ssize_t ahead[32]
    cdef Py_ssize_t so, do, row, k
    cdef int d, n = ndim - 1
    cdef bint more = True
    cdef DimPlan* last = &dims[ndim - 1] if ndim > 0 else NULL
    if ndim < 2 or not last.contiguous:
        copy_nd(src, dst, ndim, dims, itemsize)
        return
    for d in range(ndim):
        if dims[d].count == 0:
            return
        idx[d] = 0
        ahead[d] = 0
    row = last.count * itemsize
    for k in range(PREFETCH_ROWS):
        more = next_position(ahead, dims, n)
        if not more:
            break
    while True:
        if more:
            so = last.src_off[0]
            for d in range(n):
                so += dims[d].src_off[ahead[d]]
            zc_prefetch_lines(src + so, <size_t>row)
            more = next_position(ahead, dims, n)
        so = last.src_off[0]
        do = last.dst_off[0]
        for d in range(n):
            so += dims[d].src_off[idx[d]]
            do += dims[d].dst_off[idx[d]]
        memcpy(dst + do, src + so, row)
        if not next_position(idx, dims, n):
            return


cdef void fill_pattern(char* dst, Py_ssize_t n_items, const char* pattern,
                       Py_ssize_t itemsize) noexcept nogil:
    """Write the itemsize-byte pattern n_items times, contiguously."""
    cdef Py_ssize_t done, total = n_items * itemsize
    if n_items <= 0:
        return
    memcpy(dst, pattern, itemsize)
    done = itemsize
    while done < total:   # doubling copies
        memcpy(dst + done, dst, done if 2 * done <= total else total - done)
        done = 2 * done if 2 * done <= total else total


cdef void fill_nd(char* dst, int ndim, DimPlan* dims, const char* pattern,
                  Py_ssize_t itemsize) noexcept nogil:
    """Write the pattern at every destination position of the plan."""
    cdef Py_ssize_t idx[32]
    cdef Py_ssize_t do, k
    cdef int d
    cdef DimPlan* last
    if ndim == 0:
        memcpy(dst, pattern, itemsize)
        return
    for d in range(ndim):
        if dims[d].count == 0:
            return
        idx[d] = 0
    last = &dims[ndim - 1]
    while True:
        do = 0
        for d in range(ndim - 1):
            do += dims[d].dst_off[idx[d]]
        if last.contiguous:
            fill_pattern(dst + do + last.dst_off[0], last.count, pattern, itemsize)
        else:
            for k in range(last.count):
                memcpy(dst + do + last.dst_off[k], pattern, itemsize)
        if not next_position(idx, dims, ndim - 1):
            return


cdef bint all_equal_pattern(const char* buf, Py_ssize_t nbytes, const char* pattern,
                            Py_ssize_t itemsize) noexcept nogil:
    """True if buf (nbytes, a multiple of itemsize) is the pattern repeated (bitwise)."""
    cdef Py_ssize_t done
    if nbytes <= 0:
        return True
    if memcmp(buf, pattern, itemsize) != 0:
        return False
    # buf[0:done] is known to be the pattern; compare the rest against it, doubling
    done = itemsize
    while done < nbytes:
        if done > nbytes - done:
            return memcmp(buf + done, buf, nbytes - done) == 0
        if memcmp(buf + done, buf, done) != 0:
            return False
        done *= 2
    return True


cdef void selected_span(DimPlan* dims, int ndim, Py_ssize_t itemsize, Py_ssize_t* lo_d,
                        Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """The chunk's bytes [lo, hi) from the first to the last selected element (dims'
    source offsets); lo_d: each dimension's smallest offset (they add up to lo)."""
    cdef Py_ssize_t k, hi_d
    cdef int d
    lo[0] = 0
    hi[0] = itemsize
    for d in range(ndim):
        lo_d[d] = dims[d].src_off[0]
        hi_d = lo_d[d]
        for k in range(1, dims[d].count):
            if dims[d].src_off[k] < lo_d[d]:
                lo_d[d] = dims[d].src_off[k]
            elif dims[d].src_off[k] > hi_d:
                hi_d = dims[d].src_off[k]
        lo[0] += lo_d[d]
        hi[0] += hi_d
