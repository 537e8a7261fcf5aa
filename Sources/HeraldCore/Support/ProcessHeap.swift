import CHeraldMalloc

/// The process's heap as its allocator counts it: the bytes handed out by `malloc` and
/// not freed, whatever resident memory the allocator keeps besides (free chunks, arenas).
/// Memory per connection is judged by it (`herald_process_heap_bytes`).
public enum ProcessHeap {
    /// The bytes allocated and not freed (glibc's `mallinfo2`: `uordblks` in the arenas plus
    /// `hblkhd` mapped on their own); nil where the allocator doesn't say.
    public static var bytesInUse: Int? {
        let bytes = c_herald_heap_bytes_in_use()
        return bytes == 0 ? nil : Int(bytes)
    }
}
