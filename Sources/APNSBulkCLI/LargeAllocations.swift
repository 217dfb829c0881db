#if canImport(Glibc)
internal import CLinux
#endif

/// Owns the one allocator setting the duplicate filter needs: glibc serves blocks of 64 KiB and more from their
/// own mappings, so the filter's table segments, regrown one at a time, go back to the system when replaced instead
/// of leaving holes in the heap that stay resident (about 2 bytes a pair at 10 million pairs; docs/FILES.md,
/// "Duplicates").
enum LargeAllocations {
    static let mappedThreshold: Int32 = 64 << 10

    /// Call once, before the filter holds anything. Fixing the threshold also stops glibc from raising it.
    static func mapSeparately() {
        #if canImport(Glibc)
        _ = mallopt(M_MMAP_THRESHOLD, mappedThreshold)
        #endif
    }
}
