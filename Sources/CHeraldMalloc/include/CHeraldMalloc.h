#ifndef C_HERALD_MALLOC_H
#define C_HERALD_MALLOC_H

#include <stddef.h>

/// The bytes malloc has handed out and not taken back (glibc: mallinfo2's uordblks plus
/// hblkhd); 0 where the allocator doesn't say.
size_t c_herald_heap_bytes_in_use(void);

/// Caps the number of malloc arenas (glibc: mallopt M_ARENA_MAX); 0 where it can't.
int c_herald_limit_malloc_arenas(int count);

/// Gives the whole free pages inside the heap back to the system (glibc: malloc_trim(0));
/// returns 1 if any were, 0 otherwise or where it can't.
int c_herald_trim_heap(void);

#endif
