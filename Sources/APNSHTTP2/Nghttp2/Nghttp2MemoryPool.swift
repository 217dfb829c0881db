internal import CNghttp2

#if canImport(Glibc)
    import Glibc
#endif

/// Owns the memory one `Nghttp2Session`'s nghttp2 session allocates (its streams, queued frames, copied header
/// lists, header-table entries and buffers), handed to nghttp2 as its `nghttp2_mem`. Blocks of up to 8 KiB are
/// kept after nghttp2 frees them, in one free list per power-of-two size class, and handed out again: a request's
/// five allocations and frees inside nghttp2 become list pops and pushes. glibc's per-thread cache holds seven
/// blocks a size, so with a hundred streams in flight most of those calls went to its slower bins
/// (docs/PERFORMANCE.md, "HTTP/2").
///
/// Every block starts with a 16-byte header (its size class and usable size), so `free` and `realloc` need no
/// lookup, and the address nghttp2 gets stays 16-byte aligned like `malloc`'s. A free list keeps at most
/// 512 KiB of blocks; beyond that, and for blocks above 8 KiB, memory goes back to `free` at once. The free
/// lists are freed in `deinit`, which must run after `nghttp2_session_del` (the session frees through this pool).
/// Not thread-safe, like the session it serves: only the thread driving that session calls it.
final class Nghttp2MemoryPool {
    /// Bytes before the address nghttp2 gets: the size class, then the usable size (one word each).
    static let headerBytes = 16
    /// Size classes 0 ..< `classCount` hold blocks of `smallestBlock` << class bytes: 64 B to 8 KiB.
    static let classCount = 8
    static let smallestBlockShift = 6
    static let smallestBlock = 1 << smallestBlockShift
    /// The size-class word of a block too large for any class, freed to the system.
    static let unpooled = -1
    /// Bytes of free blocks one class keeps at most.
    static let cachedBytesPerClass = 512 * 1024

    /// `classCount` free-list heads (a block's address as a word; 0 for none), then each class's count of free
    /// blocks. Addressed without the pool object, so the C callbacks take no reference count.
    private let state: UnsafeMutablePointer<Int>

    init() {
        state = .allocate(capacity: 2 * Self.classCount)
        state.initialize(repeating: 0, count: 2 * Self.classCount)
    }

    deinit {
        for sizeClass in 0..<Self.classCount {
            var head = UnsafeMutableRawPointer(bitPattern: state[sizeClass])
            while let block = head {
                head = UnsafeMutableRawPointer(bitPattern: block.load(as: Int.self))
                Glibc.free(block - Self.headerBytes)
            }
        }
        state.deallocate()
    }

    /// The allocator to pass to `nghttp2_session_*_new3` (nghttp2 copies it). Valid while this pool lives.
    var allocator: nghttp2_mem {
        nghttp2_mem(
            mem_user_data: UnsafeMutableRawPointer(state),
            malloc: { size, pool in Nghttp2MemoryPool.allocate(size, pool) },
            free: { block, pool in Nghttp2MemoryPool.free(block, pool) },
            calloc: { count, size, pool in Nghttp2MemoryPool.allocateZeroed(count, size, pool) },
            realloc: { block, size, pool in Nghttp2MemoryPool.reallocate(block, size, pool) })
    }

    /// The free blocks `sizeClass` holds now (for tests).
    func cachedBlocks(sizeClass: Int) -> Int { state[Self.classCount + sizeClass] }

    // MARK: The allocator's functions, called by nghttp2 through `allocator` (and by the tests, with `state`).

    func allocate(_ size: Int) -> UnsafeMutableRawPointer? { Self.allocate(size, UnsafeMutableRawPointer(state)) }
    func free(_ block: UnsafeMutableRawPointer?) { Self.free(block, UnsafeMutableRawPointer(state)) }
    func allocateZeroed(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
        Self.allocateZeroed(count, size, UnsafeMutableRawPointer(state))
    }
    func reallocate(_ block: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
        Self.reallocate(block, size, UnsafeMutableRawPointer(state))
    }

    /// The class whose blocks hold `size` bytes, or `unpooled`.
    static func sizeClass(for size: Int) -> Int {
        if size <= smallestBlock { return 0 }
        let sizeClass = Int.bitWidth - (size - 1).leadingZeroBitCount - smallestBlockShift
        return sizeClass < classCount ? sizeClass : unpooled
    }

    private static func allocate(_ size: Int, _ pool: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        guard let state = pool?.assumingMemoryBound(to: Int.self), size >= 0 else { return nil }
        let sizeClass = sizeClass(for: size)
        if sizeClass != unpooled, let block = UnsafeMutableRawPointer(bitPattern: state[sizeClass]) {
            state[sizeClass] = block.load(as: Int.self)
            state[classCount + sizeClass] -= 1
            return block
        }
        let usable = sizeClass == unpooled ? size : smallestBlock << sizeClass
        let (total, overflow) = usable.addingReportingOverflow(headerBytes)
        guard !overflow, let base = malloc(total) else { return nil }
        base.storeBytes(of: sizeClass, as: Int.self)
        base.storeBytes(of: usable, toByteOffset: 8, as: Int.self)
        return base + headerBytes
    }

    private static func free(_ block: UnsafeMutableRawPointer?, _ pool: UnsafeMutableRawPointer?) {
        guard let block, let state = pool?.assumingMemoryBound(to: Int.self) else { return }
        let sizeClass = (block - headerBytes).load(as: Int.self)
        let blocksKept = cachedBytesPerClass >> (smallestBlockShift + sizeClass)
        guard sizeClass != unpooled, state[classCount + sizeClass] < blocksKept else {
            Glibc.free(block - headerBytes)
            return
        }
        block.storeBytes(of: state[sizeClass], as: Int.self)
        state[sizeClass] = Int(bitPattern: block)
        state[classCount + sizeClass] += 1
    }

    private static func allocateZeroed(_ count: Int, _ size: Int, _ pool: UnsafeMutableRawPointer?)
        -> UnsafeMutableRawPointer?
    {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let block = allocate(bytes, pool) else { return nil }
        block.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        return block
    }

    /// `realloc`'s contract: a nil block allocates; size 0 frees and returns nil; a block whose usable size
    /// already holds `size` is returned as it is; otherwise its bytes move to a new block.
    private static func reallocate(_ block: UnsafeMutableRawPointer?, _ size: Int, _ pool: UnsafeMutableRawPointer?)
        -> UnsafeMutableRawPointer?
    {
        guard let block else { return allocate(size, pool) }
        if size == 0 {
            free(block, pool)
            return nil
        }
        let usable = (block - headerBytes).load(fromByteOffset: 8, as: Int.self)
        if size <= usable { return block }
        guard let moved = allocate(size, pool) else { return nil }
        moved.copyMemory(from: block, byteCount: usable)
        free(block, pool)
        return moved
    }
}
