#ifndef CGLIBCMALLOC_SHIM_H
#define CGLIBCMALLOC_SHIM_H
#include <malloc.h>

/* Caps how many arenas glibc's malloc keeps (by default up to 8 per core). Each arena holds on to what its
   threads freed, so a process whose work hops across many Dispatch threads grows with every arena it touches.
   Returns 1 on success, 0 when glibc refused the value. */
static inline int CGlibcMalloc_set_arena_limit(int arenas) { return mallopt(M_ARENA_MAX, arenas); }

/* Fixes the size from which malloc serves a block with its own mapping, returned to the system when freed. By
   default glibc raises that size to the largest block freed so far, after which video frames and encoder
   buffers come from the heap and stay in the process once freed. Returns 1 on success, 0 when refused. */
static inline int CGlibcMalloc_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

/* Gives back to the system the free pages inside malloc's heaps, not only at their tops. A long import's heap is
   holed by blocks freed out of order (a page's records, a batch's rows), and glibc keeps those pages resident
   until told. Returns 1 when some memory was released. */
static inline int CGlibcMalloc_release_free_pages(void) { return malloc_trim(0); }
#endif
