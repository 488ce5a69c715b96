/* Taking the GIL back after native work without falling asleep.
 *
 * A thread that wants the GIL while another holds it sleeps on a condition
 * variable, and waking it costs a cross-CPU wake-up: ~30 us on a virtual machine,
 * more than a small read's whole native part.  Two Python threads each doing small
 * reads (a few us of Python, then tens of us without the GIL) then run slower
 * together than one alone, as each return from native code finds the other in its
 * Python part and sleeps.
 *
 * So a thread that has just taken the GIL after native work records when
 * (zc_gil_taken), and clears that when it lets the GIL go for native work again
 * (zc_gil_released).  A thread finishing native work while that record is fresh
 * (the other is in the few microseconds of Python between two native parts) spins
 * until it clears, then takes the free GIL without sleeping (zc_gil_wait).  The
 * spin is bounded (ZC_GIL_SPIN_NS after the holder took the GIL), so a holder that
 * goes on with other Python work, or lets the GIL go by other means, costs at
 * most that.  Pool threads (zc_gil_pool_thread) neither record nor spin: their
 * next step is to wait for more work.  Without a GIL (free-threaded Python,
 * zc_gil_disable) nothing is recorded, so nobody spins.
 */
#ifndef ZC_GIL_HANDOFF_H
#define ZC_GIL_HANDOFF_H

#include <stdint.h>

#include "zc_platform.h"

#define ZC_GIL_SPIN_NS 20000

static int64_t zc_gil_since = 0;          /* when a reader took the GIL (0: none) */
static ZC_THREAD_LOCAL int zc_pool_thread = 0;
static int zc_gil_off = 0;                 /* no GIL (free-threaded Python): no spinning */

static inline void zc_gil_pool_thread(void) { zc_pool_thread = 1; }
static inline void zc_gil_disable(void) { zc_gil_off = 1; }

/* Call with the GIL held, right after taking it back. */
static inline void zc_gil_taken(void) {
  if (!zc_pool_thread && !zc_gil_off) zc_store_i64_release(&zc_gil_since, zc_now_ns());
}

/* Call without the GIL, right after letting it go. */
static inline void zc_gil_released(void) {
  if (!zc_pool_thread && !zc_gil_off) zc_store_i64_release(&zc_gil_since, 0);
}

/* Call without the GIL, just before taking it back. */
static inline void zc_gil_wait(void) {
  if (zc_pool_thread) return;
  int64_t since = zc_load_i64_acquire(&zc_gil_since);
  if (since == 0) return;
  while (since != 0 && zc_now_ns() - since < ZC_GIL_SPIN_NS) {
    for (int i = 0; i < 16; i++) zc_cpu_relax();
    since = zc_load_i64_acquire(&zc_gil_since);
  }
}

#endif
