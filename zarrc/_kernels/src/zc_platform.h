/* The one place where zarrc's C code differs by system and compiler: atomics,
 * thread-locals, once-init, thread keys with a destructor, a monotonic clock,
 * byte swapping, SSE4.2 detection, positional reads, copies between files and
 * preallocation, closing a descriptor, the page size, and a few compiler words (hidden, always inline, prefetch, pause).
 *
 *   POSIX with GCC or Clang (Linux, macOS): the builtins and calls the code used
 *   before this header existed, so Linux compiles to the same code as before.
 *   Windows: Win32 calls (InitOnceExecuteOnce, FlsAlloc, QueryPerformanceCounter,
 *   ReadFile at an offset); with MSVC (no GNU builtins) its intrinsics.
 *
 * Everything else includes this instead of <pthread.h>, <unistd.h>, <cpuid.h> or
 * using __atomic_* / __builtin_* / __thread itself (scripts/cross-compile checks).
 * ZC_MSVC_PATHS forces the MSVC branches on Clang (-fms-extensions): the
 * cross-compile check uses it to compile them, as no MSVC runs here. */
#ifndef ZC_PLATFORM_H
#define ZC_PLATFORM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if (defined(_MSC_VER) && !defined(__clang__)) || defined(ZC_MSVC_PATHS)
#define ZC_MSVC 1          /* MSVC's intrinsics, no GNU builtins */
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define ZC_X86 1
#endif
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define ZC_HAVE_SSE2 1
#endif

#if defined(_WIN32)
#if !defined(_WIN64)
/* thread-key destructors are plain C functions, FLS callbacks are __stdcall on x86 */
#error "zarrc builds for 64-bit Windows only"
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <io.h>
#include <stdlib.h>
#if defined(ZC_MSVC)
#include <intrin.h>
#if defined(__clang__) && defined(__aarch64__)
#include <arm_acle.h>      /* (clang-cl: __dmb, __yield) */
#endif
#endif
#if !defined(__MINGW32__) && !defined(_SSIZE_T_DEFINED)
#define _SSIZE_T_DEFINED
typedef __int64 ssize_t;
#endif
#else
#include <pthread.h>
#include <sched.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
/* (headers older than the call, as manylinux2014's: its number on the common targets) */
#if !defined(SYS_copy_file_range) && defined(__x86_64__)
#define SYS_copy_file_range 326
#elif !defined(SYS_copy_file_range) && defined(__aarch64__)
#define SYS_copy_file_range 285
#endif
#endif

#if defined(ZC_X86)
#if defined(ZC_MSVC)
#include <intrin.h>
#else
#include <immintrin.h>
#include <cpuid.h>
#endif
#endif

/* ------------------------------------------------------------ compiler words */

#if defined(_MSC_VER) && !defined(__clang__)
#define ZC_HIDDEN
#define ZC_ALWAYS_INLINE static __forceinline
#define ZC_THREAD_LOCAL __declspec(thread)
#elif defined(_WIN32)
#define ZC_HIDDEN          /* a DLL exports only what is marked dllexport */
#define ZC_ALWAYS_INLINE static inline __attribute__((always_inline))
#define ZC_THREAD_LOCAL __thread
#else
#define ZC_HIDDEN __attribute__((visibility("hidden")))
#define ZC_ALWAYS_INLINE static inline __attribute__((always_inline))
#define ZC_THREAD_LOCAL __thread
#endif

/* a hint that p's cache line will be read soon */
static inline void zc_prefetch(const void* p) {
#if !defined(ZC_MSVC)
  __builtin_prefetch(p, 0, 3);
#elif defined(ZC_X86)
  _mm_prefetch((const char*)p, _MM_HINT_T0);
#elif defined(_M_ARM64) || defined(_M_ARM64EC)
  __prefetch(p);
#else
  (void)p;
#endif
}

/* one pause of a spin-wait loop */
static inline void zc_cpu_relax(void) {
#if defined(ZC_X86)
  _mm_pause();
#elif defined(ZC_MSVC) && (defined(_M_ARM64) || defined(_M_ARM64EC))
  __yield();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* let another thread run on this CPU (a spin-wait that has gone on a while) */
static inline void zc_yield(void) {
#if defined(_WIN32)
  SwitchToThread();
#else
  sched_yield();
#endif
}

/* ------------------------------------------------------------------- atomics */
/* relaxed: a flag or counter, no ordering; acquire / release: a value published
 * by one thread and read by others.  On MSVC an aligned volatile access is atomic
 * (x64, arm64); the fences give it the order (on x64 a compiler barrier). */

#if defined(ZC_MSVC)
#if defined(_M_ARM64) || defined(_M_ARM64EC)
#define ZC_MSVC_FENCE() __dmb(0xB)   /* _ARM64_BARRIER_ISH */
#else
#define ZC_MSVC_FENCE() _ReadWriteBarrier()
#endif
#endif

static inline int zc_load_int_relaxed(const int* p) {
#if defined(ZC_MSVC)
  return *(const volatile int*)p;
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

static inline void zc_store_int_relaxed(int* p, int v) {
#if defined(ZC_MSVC)
  *(volatile int*)p = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

static inline int64_t zc_load_i64_acquire(const int64_t* p) {
#if defined(ZC_MSVC)
  int64_t v = *(const volatile int64_t*)p;
  ZC_MSVC_FENCE();
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

static inline void zc_store_i64_release(int64_t* p, int64_t v) {
#if defined(ZC_MSVC)
  ZC_MSVC_FENCE();
  *(volatile int64_t*)p = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/* *p += d (relaxed); the value before.  ptrdiff_t is Py_ssize_t's type. */
static inline ptrdiff_t zc_fetch_add_relaxed(ptrdiff_t* p, ptrdiff_t d) {
#if defined(ZC_MSVC)
  return (ptrdiff_t)_InterlockedExchangeAdd64((volatile __int64*)p, (__int64)d);
#else
  return __atomic_fetch_add(p, d, __ATOMIC_RELAXED);
#endif
}

/* *p (relaxed), a counter another thread adds to */
static inline ptrdiff_t zc_load_ssize_relaxed(const ptrdiff_t* p) {
#if defined(ZC_MSVC)
  return *(const volatile ptrdiff_t*)p;
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/* *p += d (acquire and release: what one thread wrote before its add is seen by
 * the thread that loads the sum with acquire); the value before */
static inline int64_t zc_fetch_add_i64_acq_rel(int64_t* p, int64_t d) {
#if defined(ZC_MSVC)
  return (int64_t)_InterlockedExchangeAdd64((volatile __int64*)p, (__int64)d);
#else
  return __atomic_fetch_add(p, d, __ATOMIC_ACQ_REL);
#endif
}

/* if *p == expected, *p = desired (acquire and release): whether it was */
static inline int zc_cas_i64(int64_t* p, int64_t expected, int64_t desired) {
#if defined(ZC_MSVC)
  return _InterlockedCompareExchange64((volatile __int64*)p, (__int64)desired, (__int64)expected) ==
         (__int64)expected;
#else
  return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

/* ------------------------------------------------------- once, thread keys */

#if defined(_WIN32)
typedef INIT_ONCE zc_once_t;
#define ZC_ONCE_INIT INIT_ONCE_STATIC_INIT
typedef struct { void (*fn)(void); } zc_once_call_t;
static BOOL CALLBACK zc_once_call(PINIT_ONCE once, PVOID call, PVOID* context) {
  (void)once;
  (void)context;
  ((zc_once_call_t*)call)->fn();
  return TRUE;
}
/* run fn once per process; every caller returns after it has run */
static inline void zc_once(zc_once_t* once, void (*fn)(void)) {
  zc_once_call_t call;
  call.fn = fn;
  InitOnceExecuteOnce(once, zc_once_call, &call, NULL);
}

/* fiber-local storage: unlike TlsAlloc it calls a destructor when a thread exits */
typedef DWORD zc_key_t;
/* 0, or -1 if no key is left */
static inline int zc_key_create(zc_key_t* key, void (*destructor)(void*)) {
  *key = FlsAlloc((PFLS_CALLBACK_FUNCTION)destructor);
  return *key == FLS_OUT_OF_INDEXES ? -1 : 0;
}
static inline void* zc_key_get(zc_key_t key) { return FlsGetValue(key); }
static inline int zc_key_set(zc_key_t key, void* value) { return FlsSetValue(key, value) ? 0 : -1; }
#else
typedef pthread_once_t zc_once_t;
#define ZC_ONCE_INIT PTHREAD_ONCE_INIT
static inline void zc_once(zc_once_t* once, void (*fn)(void)) { pthread_once(once, fn); }

typedef pthread_key_t zc_key_t;
static inline int zc_key_create(zc_key_t* key, void (*destructor)(void*)) {
  return pthread_key_create(key, destructor) == 0 ? 0 : -1;
}
static inline void* zc_key_get(zc_key_t key) { return pthread_getspecific(key); }
static inline int zc_key_set(zc_key_t key, void* value) {
  return pthread_setspecific(key, value) == 0 ? 0 : -1;
}
#endif

/* -------------------------------------------------------------------- time */

/* a monotonic clock, in ns */
static inline int64_t zc_now_ns(void) {
#if defined(_WIN32)
  LARGE_INTEGER count, freq;
  QueryPerformanceCounter(&count);
  QueryPerformanceFrequency(&freq);
  return (count.QuadPart / freq.QuadPart) * 1000000000 +
         (count.QuadPart % freq.QuadPart) * 1000000000 / freq.QuadPart;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
}

/* -------------------------------------------------------------- byte order */

static inline uint16_t zc_bswap16(uint16_t v) {
#if defined(ZC_MSVC)
  return _byteswap_ushort(v);
#else
  return __builtin_bswap16(v);
#endif
}
static inline uint32_t zc_bswap32(uint32_t v) {
#if defined(ZC_MSVC)
  return _byteswap_ulong(v);
#else
  return __builtin_bswap32(v);
#endif
}
static inline uint64_t zc_bswap64(uint64_t v) {
#if defined(ZC_MSVC)
  return _byteswap_uint64(v);
#else
  return __builtin_bswap64(v);
#endif
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ZC_BIG_ENDIAN 1
#endif

/* ------------------------------------------------------------------- CPU */

/* CPUID leaf 1, ECX bit 20 (not __builtin_cpu_supports: the compiler-rt of zig cc,
   which builds the manylinux wheels, never fills in __cpu_model, so it says no) */
static inline int zc_cpu_has_sse42(void) {
#if defined(ZC_X86) && defined(ZC_MSVC)
  int r[4];
  __cpuid(r, 1);
  return (r[2] & (1 << 20)) != 0;
#elif defined(ZC_X86)
  unsigned int eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2) != 0;
#else
  return 0;
#endif
}

/* ------------------------------------------------------------------ files */

#if defined(_WIN32)
/* errno for a Win32 error code (the few that file calls give; else EIO) */
static inline int zc_errno_from_win32(DWORD e) {
  switch (e) {
  case ERROR_FILE_NOT_FOUND:
  case ERROR_PATH_NOT_FOUND:
  case ERROR_INVALID_DRIVE:
  case ERROR_BAD_NETPATH:
  case ERROR_BAD_NET_NAME:
    return ENOENT;
  case ERROR_ACCESS_DENIED:
  case ERROR_SHARING_VIOLATION:
  case ERROR_LOCK_VIOLATION:
  case ERROR_WRITE_PROTECT:
    return EACCES;
  case ERROR_FILE_EXISTS:
  case ERROR_ALREADY_EXISTS:
    return EEXIST;
  case ERROR_NOT_ENOUGH_MEMORY:
  case ERROR_OUTOFMEMORY:
    return ENOMEM;
  case ERROR_DISK_FULL:
  case ERROR_HANDLE_DISK_FULL:
    return ENOSPC;
  case ERROR_INVALID_HANDLE:
    return EBADF;
  case ERROR_INVALID_NAME:
  case ERROR_INVALID_PARAMETER:
    return EINVAL;
  case ERROR_FILENAME_EXCED_RANGE:
    return ENAMETOOLONG;
  case ERROR_DIRECTORY:
    return ENOTDIR;
  case ERROR_DIR_NOT_EMPTY:
    return ENOTEMPTY;
  default:
    return EIO;
  }
}
#endif

/* Up to n bytes at offset of the file fd, without using or moving a position the
   caller relies on: how many (0 at the end of the file), or -1 with errno.  On
   Windows: ReadFile at an OVERLAPPED offset on the descriptor's handle (at most
   1 GiB per call).  A handle opened without FILE_FLAG_OVERLAPPED serializes its
   reads and does move its file pointer, which no zarrc code uses. */
static inline ssize_t zc_pread(int fd, void* dst, size_t n, int64_t offset) {
#if defined(_WIN32)
  HANDLE h = (HANDLE)_get_osfhandle(fd);
  OVERLAPPED ov;
  DWORD got = 0, want = n > ((size_t)1 << 30) ? (DWORD)1 << 30 : (DWORD)n;
  if (h == INVALID_HANDLE_VALUE) {
    errno = EBADF;
    return -1;
  }
  memset(&ov, 0, sizeof ov);
  ov.Offset = (DWORD)((uint64_t)offset & 0xffffffffu);
  ov.OffsetHigh = (DWORD)((uint64_t)offset >> 32);
  if (!ReadFile(h, dst, want, &got, &ov)) {
    DWORD e = GetLastError();
    if (e == ERROR_HANDLE_EOF)
      return 0;
    errno = zc_errno_from_win32(e);
    return -1;
  }
  return (ssize_t)got;
#else
  return pread(fd, dst, n, (off_t)offset);
#endif
}

/* Up to n bytes at offset, retrying short reads and EINTR: how many (fewer than n
   only at the end of the file), or -1 with errno set. */
static inline int64_t zc_pread_full(int fd, void* dst, size_t n, int64_t offset) {
  size_t done = 0;
  ssize_t r;
  while (done < n) {
    r = zc_pread(fd, (char*)dst + done, n - done, offset + (int64_t)done);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (r == 0)
      break;
    done += (size_t)r;
  }
  return (int64_t)done;
}

/* Copy up to n bytes at offset *off of the file in to the current position of
   out, inside the kernel (Linux copy_file_range): how many (0 at the end of in,
   *off advanced by as many), or -1 with errno; ENOSYS where the system has no such
   call (the caller copies by reads and writes). */
static inline int64_t zc_copy_file_range(int in, int64_t* off, int out, size_t n) {
#if defined(__linux__) && defined(SYS_copy_file_range)
  long long from = (long long)*off;
  long k = syscall(SYS_copy_file_range, in, &from, out, NULL, n, 0u);
  if (k > 0)
    *off += k;
  return (int64_t)k;
#else
  (void)in;
  (void)off;
  (void)out;
  (void)n;
  errno = ENOSYS;
  return -1;
#endif
}

/* Allocate the first n bytes of the new file fd's blocks up front where the file
   system can (Linux fallocate, in files compiled with _GNU_SOURCE), writing no
   zeros; a hint: nothing where it cannot, failures ignored. */
static inline void zc_preallocate(int fd, int64_t n) {
#if defined(__linux__) && defined(_GNU_SOURCE)
  if (n > 0)
    (void)fallocate(fd, 0, 0, (off_t)n);
#else
  (void)fd;
  (void)n;
#endif
}

static inline int zc_close(int fd) {
#if defined(_WIN32)
  return _close(fd);
#else
  return close(fd);
#endif
}

/* the size of a memory page (0 if unknown) */
static inline long zc_page_size(void) {
#if defined(_WIN32)
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return (long)info.dwPageSize;
#else
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? page : 0;
#endif
}

#endif
