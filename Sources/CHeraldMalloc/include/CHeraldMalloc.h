#ifndef C_HERALD_MALLOC_H
#define C_HERALD_MALLOC_H

#include <stddef.h>

/// The bytes malloc has handed out and not taken back (glibc: mallinfo2's uordblks plus
/// hblkhd); 0 where the allocator doesn't say.
size_t c_herald_heap_bytes_in_use(void);

#endif
