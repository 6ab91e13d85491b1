#ifndef CGLIBCMALLOC_SHIM_H
#define CGLIBCMALLOC_SHIM_H
#include <malloc.h>

/* Caps how many arenas glibc's malloc keeps (by default up to 8 per core). Each arena holds on to what its
   threads freed, so a process whose work hops across many Dispatch threads grows with every arena it touches.
   Returns 1 on success, 0 when glibc refused the value. */
static inline int CGlibcMalloc_set_arena_limit(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
#endif
