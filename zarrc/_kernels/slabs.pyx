# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Read outputs of SLAB_MIN_BYTES to SLAB_BYTES (256 KiB to 2 MiB: a chunk or a few)
carved from 2 MiB slabs of anonymous memory that the kernel may back with one huge
page.  A new malloc'd block of that size takes a page fault for each 4 KiB page when
first written (~1 us each on a VM: 0.14 s for 512 outputs of 512 KiB, about what
decoding them costs); a slab takes one fault for 2 MiB (0.03 s for the same 256 MiB).

Each output is a numpy view of a :class:`Piece`, which keeps its slab alive.  The
allocator hands out the current slab's pages in order; a piece freed at the top of
the current slab gives its pages back at once (read, drop, read again reuses the same
memory, as malloc would).  Once a slab is retired (the next output did not fit), the
pages of its dead pieces and its unused tail go back to the kernel (MADV_DONTNEED),
so live outputs hold little more than their own pages; a retired slab whose pieces
have all died is kept as the one spare, or unmapped.

Linux only, and only where pages are 4 KiB and Python has a GIL (which orders every
call here: outputs are made and freed with it held); elsewhere ``slab_array``
returns None and the caller uses numpy's allocator.
"""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo

import sys

import numpy as np

cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #include <unistd.h>
    #include <stdint.h>
    /* size bytes of fresh memory at a multiple of size (a power of two), which the
       kernel may back with huge pages. */
    static char* zc_slab_map(size_t size) {
        size_t span = 2 * size;
        char* p = (char*)mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == (char*)MAP_FAILED) return NULL;
        uintptr_t lo = ((uintptr_t)p + size - 1) & ~(uintptr_t)(size - 1);
        if (lo > (uintptr_t)p) munmap(p, lo - (uintptr_t)p);
        if ((uintptr_t)p + span > lo + size) munmap((char*)(lo + size), (uintptr_t)p + span - (lo + size));
    #ifdef MADV_HUGEPAGE
        (void)madvise((char*)lo, size, MADV_HUGEPAGE);
    #endif
        return (char*)lo;
    }
    static void zc_slab_unmap(char* p, size_t size) { munmap(p, size); }
    /* give the pages of p[0:n] (page-aligned) back to the kernel */
    static void zc_slab_drop(char* p, size_t n) { if (n) (void)madvise(p, n, MADV_DONTNEED); }
    static long zc_page_size(void) { return sysconf(_SC_PAGESIZE); }
    #define ZC_HAVE_SLABS 1
    #else
    static char* zc_slab_map(size_t size) { (void)size; return NULL; }
    static void zc_slab_unmap(char* p, size_t size) { (void)p; (void)size; }
    static void zc_slab_drop(char* p, size_t n) { (void)p; (void)n; }
    static long zc_page_size(void) { return 0; }
    #define ZC_HAVE_SLABS 0
    #endif
    """
    char* zc_slab_map(size_t size) noexcept nogil
    void zc_slab_unmap(char* p, size_t size) noexcept nogil
    void zc_slab_drop(char* p, size_t n) noexcept nogil
    long zc_page_size() noexcept nogil
    int ZC_HAVE_SLABS


DEF PAGE = 4096
DEF MAX_PIECES = 8                 # SLAB_BYTES // SLAB_MIN_BYTES
SLAB_BYTES = 2 << 20
SLAB_MIN_BYTES = 256 << 10

cdef bint enabled = (ZC_HAVE_SLABS and zc_page_size() == PAGE
                     and getattr(sys, "_is_gil_enabled", lambda: True)())
cdef Slab current = None           # the slab outputs are carved from
cdef Slab spare = None             # a retired slab whose pieces have all died


@cython.final
cdef class Slab:
    cdef char* base
    cdef size_t top                # bytes handed out (pieces below may have died)
    cdef Py_ssize_t live           # pieces alive
    cdef bint retired
    cdef Py_ssize_t ndead          # dead pieces below top, while current
    cdef size_t dead_start[MAX_PIECES]
    cdef size_t dead_end[MAX_PIECES]

    def __dealloc__(self):
        if self.base != NULL:
            zc_slab_unmap(self.base, SLAB_BYTES)

    cdef void start_over(self) noexcept:
        self.top = 0
        self.ndead = 0
        self.retired = False

    cdef void retire(self) noexcept:
        """Stop carving from this slab; give back the pages no live piece uses."""
        cdef Py_ssize_t i
        self.retired = True
        for i in range(self.ndead):
            zc_slab_drop(self.base + self.dead_start[i], self.dead_end[i] - self.dead_start[i])
        self.ndead = 0
        zc_slab_drop(self.base + self.top, SLAB_BYTES - self.top)

    cdef void release(self, size_t start, size_t end) noexcept:
        """A piece [start, end) died."""
        global spare
        cdef Py_ssize_t i
        cdef bint popped = True
        self.live -= 1
        if self.retired:
            if self.live > 0:
                zc_slab_drop(self.base + start, end - start)
            elif spare is None:
                self.start_over()
                spare = self
            return
        if self.live == 0:
            self.top = 0
            self.ndead = 0
            return
        if end != self.top:
            self.dead_start[self.ndead] = start
            self.dead_end[self.ndead] = end
            self.ndead += 1
            return
        self.top = start
        while popped:                  # pieces that died earlier may now be at the top
            popped = False
            for i in range(self.ndead):
                if self.dead_end[i] == self.top:
                    self.top = self.dead_start[i]
                    self.ndead -= 1
                    self.dead_start[i] = self.dead_start[self.ndead]
                    self.dead_end[i] = self.dead_end[self.ndead]
                    popped = True
                    break


@cython.final
@cython.no_gc                      # holds only its slab, which holds nothing
cdef class Piece:
    """Bytes [start, start + nbytes) of a slab, writable, for a numpy array's base."""
    cdef Slab slab
    cdef size_t start, end
    cdef Py_ssize_t nbytes

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.slab.base + self.start, self.nbytes, 0, flags)

    def __dealloc__(self):
        if self.slab is not None:
            self.slab.release(self.start, self.end)


cdef Piece new_piece(Py_ssize_t nbytes):
    """nbytes (SLAB_MIN_BYTES to SLAB_BYTES) from the current slab, or None when no
    slab can be mapped."""
    global current, spare
    cdef size_t n = (<size_t>nbytes + PAGE - 1) & ~(<size_t>PAGE - 1)
    cdef Slab slab = current
    cdef Piece piece
    if slab is None or slab.top + n > SLAB_BYTES or slab.ndead == MAX_PIECES:
        if slab is not None and slab.live == 0:
            slab.start_over()
        else:
            if slab is not None:
                slab.retire()
            if spare is not None:
                slab, spare = spare, None
            else:
                slab = Slab.__new__(Slab)
                slab.base = zc_slab_map(SLAB_BYTES)
                if slab.base == NULL:
                    return None
            current = slab
    piece = Piece.__new__(Piece)
    piece.slab = slab
    piece.start = slab.top
    piece.end = slab.top + n
    piece.nbytes = nbytes
    slab.top += n
    slab.live += 1
    return piece


cdef object _frombuffer = np.frombuffer


cdef object slab_array(tuple shape, object dtype, Py_ssize_t nbytes):
    """A new C-order array of ``shape`` and ``dtype`` (``nbytes`` in all) in a slab,
    or None where slabs are not used (off Linux, other page sizes, no GIL), for
    sizes outside SLAB_MIN_BYTES to SLAB_BYTES, for arrays of objects, or when no
    memory could be mapped."""
    if not enabled or nbytes < SLAB_MIN_BYTES or nbytes > SLAB_BYTES or dtype.hasobject:
        return None
    piece = new_piece(nbytes)
    if piece is None:
        return None
    return _frombuffer(piece, dtype).reshape(shape)


def empty(shape, dtype):
    """``numpy.empty(shape, dtype)``, in a slab where ``slab_array`` takes it (for tests)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    out = slab_array(shape, dtype, dtype.itemsize * int(np.prod(shape, dtype=np.int64)))
    return np.empty(shape, dtype) if out is None else out


def in_use():
    """``(pieces alive in the current slab, its bytes handed out)`` and whether a spare
    slab is kept (for tests)."""
    if current is None:
        return (0, 0), spare is not None
    return (current.live, current.top), spare is not None
