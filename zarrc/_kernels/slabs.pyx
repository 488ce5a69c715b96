# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""Memory for read outputs of SLAB_MIN_BYTES (256 KiB) and more, in anonymous
mappings that the kernel may back with 2 MiB huge pages, kept for the next reads
when the outputs die.

A new numpy array takes a page fault for each 4 KiB page (or each 2 MiB huge page,
which the kernel then zeroes) when first written: for a read that decodes fast
codecs that is a third of the time.  Here:

- outputs of 256 KiB to 2 MiB (a chunk or a few) are carved from 2 MiB slabs, one
  fault per slab instead of one per 4 KiB page.  The current slab's pages are handed
  out in order; a piece freed at the top gives its pages back at once (read, drop,
  read again reuses the same memory).  Once a slab is retired (the next output did
  not fit), its dead pieces and unused tail are kept mapped while the whole process
  holds less than HELD_MAX_BYTES of such pages, then go back to the kernel
  (MADV_DONTNEED), so live outputs hold little more than their own pages;
- larger outputs get a mapping of their own (a multiple of 2 MiB);
- when a slab's pieces have all died, or a larger output dies, its mapping goes to
  a pool of free memory, lazily freed (MADV_FREE: the kernel may take the pages
  when it runs short of memory, without writing them anywhere; until it does, they
  are reused without faults or zeroing).  The next output of about that size takes
  it.  The pool holds at most ``pool_limit()`` bytes (``zarrc.config.pool_bytes``,
  default 1 GiB), the oldest mappings leaving first.

Each output is a numpy view of a :class:`Piece` or :class:`Block`, which keeps its
memory alive.  Linux and Windows (VirtualAlloc; MEM_RESET where Linux drops or
lazily frees pages), and only where pages are 4 KiB and Python has a GIL
(which orders every call here: outputs are made and freed with it held); elsewhere
``output_array`` returns None and the caller uses numpy's allocator.
"""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from libc.stdint cimport uintptr_t

import sys

import numpy as np

cdef extern from *:
    """
    #include <stdint.h>
    #include "src/zc_platform.h"
    #define ZC_ALIGN ((size_t)2 << 20)
    #if defined(__linux__)
    #include <sys/mman.h>
    /* size bytes (a multiple of 2 MiB) of fresh memory at a multiple of 2 MiB, which
       the kernel may back with huge pages. */
    static char* zc_slab_map(size_t size) {
        size_t span = size + ZC_ALIGN;
        char* p = (char*)mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == (char*)MAP_FAILED) return NULL;
        uintptr_t lo = ((uintptr_t)p + ZC_ALIGN - 1) & ~(uintptr_t)(ZC_ALIGN - 1);
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
    /* let the kernel take the pages of p[0:n] when it needs memory; 0 if it may */
    static int zc_slab_lazy_free(char* p, size_t n) {
    #ifdef MADV_FREE
        return madvise(p, n, MADV_FREE);
    #else
        (void)p; (void)n; return -1;
    #endif
    }
    #define ZC_HAVE_SLABS 1
    #elif defined(_WIN32)
    /* Windows: a reservation cannot be trimmed, so the aligned range is found in
       a larger one, which is released and the range reserved in its place
       (another thread may take it meanwhile: then try again). */
    static char* zc_slab_map(size_t size) {
        int attempt;
        for (attempt = 0; attempt < 8; attempt++) {
            char* p = (char*)VirtualAlloc(NULL, size + ZC_ALIGN, MEM_RESERVE, PAGE_NOACCESS);
            uintptr_t lo;
            char* q;
            if (p == NULL) return NULL;
            lo = ((uintptr_t)p + ZC_ALIGN - 1) & ~(uintptr_t)(ZC_ALIGN - 1);
            VirtualFree(p, 0, MEM_RELEASE);
            q = (char*)VirtualAlloc((void*)lo, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
            if (q != NULL) return q;
        }
        return NULL;
    }
    static void zc_slab_unmap(char* p, size_t size) { (void)size; VirtualFree(p, 0, MEM_RELEASE); }
    /* MEM_RESET: the pages' contents may go (as with MADV_FREE; outputs are empty,
       nobody reads what was there), the range stays committed and usable; not
       decommitted, which a failed commit later could leave unusable */
    static int zc_slab_lazy_free(char* p, size_t n) {
        return VirtualAlloc(p, n, MEM_RESET, PAGE_READWRITE) != NULL ? 0 : -1;
    }
    static void zc_slab_drop(char* p, size_t n) { if (n) (void)zc_slab_lazy_free(p, n); }
    #define ZC_HAVE_SLABS 1
    #else
    static char* zc_slab_map(size_t size) { (void)size; return NULL; }
    static void zc_slab_unmap(char* p, size_t size) { (void)p; (void)size; }
    static void zc_slab_drop(char* p, size_t n) { (void)p; (void)n; }
    static int zc_slab_lazy_free(char* p, size_t n) { (void)p; (void)n; return -1; }
    #define ZC_HAVE_SLABS 0
    #endif
    """
    char* zc_slab_map(size_t size) noexcept nogil
    void zc_slab_unmap(char* p, size_t size) noexcept nogil
    void zc_slab_drop(char* p, size_t n) noexcept nogil
    int zc_slab_lazy_free(char* p, size_t n) noexcept nogil
    long zc_page_size() noexcept nogil
    int ZC_HAVE_SLABS


DEF PAGE = 4096
DEF MAX_RANGES = 9                 # SLAB_BYTES // SLAB_MIN_BYTES pieces, and a tail
SLAB_BYTES = 2 << 20
SLAB_MIN_BYTES = 256 << 10
HELD_MAX_BYTES = 32 << 20

cdef bint enabled = (ZC_HAVE_SLABS and zc_page_size() == PAGE
                     and getattr(sys, "_is_gil_enabled", lambda: True)())
cdef Slab current = None           # the slab outputs are carved from
cdef set holding = set()           # retired slabs with dead pages still mapped
cdef size_t held = 0               # their dead bytes
cdef list pool = []                # (size, address) of free mappings, oldest first
cdef size_t pooled = 0             # their bytes
cdef size_t limit = 1 << 30        # at most this many bytes in the pool


# ---------------------------------------------------------------- the pool

cdef char* take(size_t* size, size_t most) noexcept:
    """A free mapping of ``size[0]`` to ``most`` bytes (the smallest; of those, the one
    freed last), its size in ``size[0]``; or NULL."""
    global pooled
    cdef Py_ssize_t i, best = -1
    cdef size_t n, best_n = 0
    for i in range(len(pool) - 1, -1, -1):
        n = pool[i][0]
        if size[0] <= n <= most and (best < 0 or n < best_n):
            best, best_n = i, n
            if n == size[0]:
                break
    if best < 0:
        return NULL
    address = pool.pop(best)[1]
    pooled -= best_n
    size[0] = best_n
    return <char*><uintptr_t>address


cdef void give(char* base, size_t size) noexcept:
    """A mapping of ``size`` bytes is free: into the pool, or back to the kernel."""
    global pooled
    if pool is None or size > limit or zc_slab_lazy_free(base, size) != 0:
        zc_slab_unmap(base, size)
        return
    while pooled + size > limit:
        n, address = pool.pop(0)
        pooled -= <size_t>n
        zc_slab_unmap(<char*><uintptr_t>address, n)
    pool.append((size, <uintptr_t>base))
    pooled += size


cdef char* new_mapping(size_t* size, size_t most) noexcept:
    """A mapping of ``size[0]`` to ``most`` bytes from the pool, else a new one of
    ``size[0]``; its size in ``size[0]``.  NULL if none can be mapped."""
    cdef char* base = take(size, most)
    return base if base != NULL else zc_slab_map(size[0])


# ---------------------------------------------------------------- slabs

@cython.final
cdef class Slab:
    cdef char* base
    cdef size_t top                # bytes handed out (pieces below may have died)
    cdef Py_ssize_t live           # pieces alive
    cdef bint retired
    cdef Py_ssize_t ndead          # dead ranges: below top while current, anywhere
    cdef size_t dead_start[MAX_RANGES]   # once retired (where they are held mapped)
    cdef size_t dead_end[MAX_RANGES]
    cdef size_t held               # bytes of those, once retired

    def __dealloc__(self):
        if self.base != NULL:
            give(self.base, SLAB_BYTES)

    cdef void retire(self) noexcept:
        """Stop carving from this slab; its dead pieces and unused tail are held."""
        cdef Py_ssize_t i
        cdef size_t n = 0
        self.retired = True
        if self.top < SLAB_BYTES:
            self.dead_start[self.ndead] = self.top
            self.dead_end[self.ndead] = SLAB_BYTES
            self.ndead += 1
        for i in range(self.ndead):
            n += self.dead_end[i] - self.dead_start[i]
        if n:
            self.hold(n)

    cdef void hold(self, size_t n) noexcept:
        global held
        self.held += n
        held += n
        holding.add(self)
        if held > HELD_MAX_BYTES:
            drop_held()

    cdef void drop_dead(self) noexcept:
        """Give the pages of the dead ranges back to the kernel."""
        cdef Py_ssize_t i
        for i in range(self.ndead):
            zc_slab_drop(self.base + self.dead_start[i], self.dead_end[i] - self.dead_start[i])
        self.ndead = 0
        self.held = 0

    cdef void release(self, size_t start, size_t end) noexcept:
        """A piece [start, end) died."""
        global held
        cdef Py_ssize_t i
        cdef bint popped = True
        self.live -= 1
        if self.retired:
            if self.live > 0:
                self.dead_start[self.ndead] = start
                self.dead_end[self.ndead] = end
                self.ndead += 1
                self.hold(end - start)
            elif self.held:            # all dead: the slab goes to the pool when freed
                held -= self.held
                self.held = 0
                holding.discard(self)
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


cdef void drop_held() noexcept:
    """Give the dead pages of every retired slab back to the kernel."""
    global held
    cdef Slab slab
    for slab in holding:
        slab.drop_dead()
    holding.clear()
    held = 0


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
    global current
    cdef size_t n = (<size_t>nbytes + PAGE - 1) & ~(<size_t>PAGE - 1)
    cdef Slab slab = current
    cdef Piece piece
    cdef size_t size = SLAB_BYTES
    if slab is None or slab.top + n > SLAB_BYTES or slab.ndead == MAX_RANGES - 1:
        if slab is not None and slab.live == 0:
            slab.top = 0
            slab.ndead = 0
        else:
            if slab is not None:
                slab.retire()
            slab = Slab.__new__(Slab)
            slab.base = new_mapping(&size, SLAB_BYTES)
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


# ---------------------------------------------------------------- larger outputs

@cython.final
@cython.no_gc
cdef class Block:
    """A mapping of its own for one output, writable, for a numpy array's base."""
    cdef char* base
    cdef size_t size
    cdef Py_ssize_t nbytes

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.base, self.nbytes, 0, flags)

    def __dealloc__(self):
        if self.base != NULL:
            give(self.base, self.size)


cdef Block new_block(Py_ssize_t nbytes):
    """A mapping for nbytes (more than SLAB_BYTES), or None when none can be made.
    A pooled one may be up to an eighth larger than needed."""
    cdef size_t size = (<size_t>nbytes + SLAB_BYTES - 1) & ~(<size_t>SLAB_BYTES - 1)
    cdef Block block = Block.__new__(Block)
    block.base = new_mapping(&size, size + (size // 8 & ~(<size_t>SLAB_BYTES - 1)))
    if block.base == NULL:
        return None
    block.size = size
    block.nbytes = nbytes
    return block


# ---------------------------------------------------------------- entry points

cdef object _frombuffer = np.frombuffer


cdef object output_array(tuple shape, object dtype, Py_ssize_t nbytes):
    """A new C-order array of ``shape`` and ``dtype`` (``nbytes`` in all), starting at
    a 4 KiB boundary, in a slab or a mapping of its own; None where these are not used
    (off Linux, other page sizes, no GIL), for less than SLAB_MIN_BYTES, for arrays of
    objects, or when no memory could be mapped."""
    if not enabled or nbytes < SLAB_MIN_BYTES or dtype.hasobject:
        return None
    if nbytes <= SLAB_BYTES:
        memory = new_piece(nbytes)
    else:
        memory = new_block(nbytes)
    if memory is None:
        return None
    return _frombuffer(memory, dtype).reshape(shape)


def empty(shape, dtype):
    """``numpy.empty(shape, dtype)``, from here where ``output_array`` takes it (the
    outputs of reads that the BasicReader does not make, and tests)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    out = output_array(shape, dtype, dtype.itemsize * int(np.prod(shape, dtype=np.int64)))
    return np.empty(shape, dtype) if out is None else out


def in_use():
    """``(pieces alive in the current slab, its bytes handed out)`` (for tests)."""
    if current is None:
        return (0, 0)
    return (current.live, current.top)


def held_bytes():
    """Dead bytes of retired slabs still mapped (for tests)."""
    return held


def pooled_mappings():
    """The sizes of the free mappings in the pool, oldest first (for tests)."""
    return [n for n, _ in pool]


def pool_limit():
    """The most bytes of free memory kept for later outputs."""
    return limit


def set_pool_limit(Py_ssize_t nbytes):
    """Keep at most ``nbytes`` (>= 0) of free memory for later outputs; what the pool
    holds beyond that goes back to the kernel now."""
    global limit, pooled
    if nbytes < 0:
        raise ValueError(f"the pool limit must be at least 0, got {nbytes}")
    limit = <size_t>nbytes
    while pooled > limit:
        n, address = pool.pop(0)
        pooled -= <size_t>n
        zc_slab_unmap(<char*><uintptr_t>address, n)
