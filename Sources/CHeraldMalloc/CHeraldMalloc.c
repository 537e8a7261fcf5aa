#include "CHeraldMalloc.h"

#include <stdlib.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

size_t c_herald_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int c_herald_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}

int c_herald_trim_heap(void) {
    return malloc_trim(0);
}
#else
int c_herald_trim_heap(void) {
    return 0;
}

int c_herald_limit_malloc_arenas(int count) {
    (void)count;
    return 0;
}

size_t c_herald_heap_bytes_in_use(void) {
    return 0;
}
#endif
