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

    /// The malloc arenas a Herald process uses (glibc makes up to 8 per core, one per
    /// thread that meets contention). Each arena keeps its own free chunks and top, so the
    /// memory many idle connections hold is spread over more pages than it needs: with 2,
    /// `herald-bench gateway --memory-only` measured about 120 bytes less resident memory
    /// per idle connection than glibc's default (3,668 and 3,755 against 3,917 and 3,826,
    /// 19,000 connections), fan-out and unicast within noise.
    public static let arenas = 2

    /// Caps the process's malloc arenas at ``arenas``; call first thing, before threads
    /// allocate. `herald serve` and the benchmarks measuring it do.
    public static func limitArenas() {
        _ = c_herald_limit_malloc_arenas(Int32(arenas))
    }

    /// Gives the free pages inside the heap back to the system: glibc returns only the
    /// top of an arena by itself, so memory freed in the middle (the channels of connections
    /// that parked, see the gateway's parking lot) would stay resident.
    public static func trim() {
        _ = c_herald_trim_heap()
    }
}
