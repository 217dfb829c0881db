import Testing

@testable import APNSHTTP2

@Suite("Nghttp2MemoryPool")
struct Nghttp2MemoryPoolTests {
    @Test("sizes map to power-of-two classes from 64 bytes to 8 KiB; larger ones are not pooled")
    func sizeClasses() {
        let expected: [(Int, Int)] = [
            (0, 0), (1, 0), (64, 0), (65, 1), (128, 1), (129, 2), (256, 2), (257, 3), (4096, 6), (4097, 7),
            (8192, 7), (8193, Nghttp2MemoryPool.unpooled), (1 << 20, Nghttp2MemoryPool.unpooled),
        ]
        for (size, sizeClass) in expected {
            #expect(Nghttp2MemoryPool.sizeClass(for: size) == sizeClass, "size \(size)")
        }
    }

    @Test("a freed block is handed out again, last freed first, for any size of its class")
    func reuse() throws {
        let pool = Nghttp2MemoryPool()
        let first = try #require(pool.allocate(100))
        let second = try #require(pool.allocate(128))
        #expect(first != second)
        #expect(Int(bitPattern: first) % 16 == 0 && Int(bitPattern: second) % 16 == 0)
        pool.free(first)
        pool.free(second)
        #expect(pool.cachedBlocks(sizeClass: 1) == 2)
        #expect(pool.allocate(65) == second)
        #expect(pool.allocate(127) == first)
        #expect(pool.cachedBlocks(sizeClass: 1) == 0)
        let other = try #require(pool.allocate(200))  // class 2: a block of its own
        #expect(other != first && other != second)
        pool.free(nil)
        for block in [first, second, other] { pool.free(block) }
    }

    @Test("calloc zeroes a reused block and refuses a size that overflows")
    func zeroed() throws {
        let pool = Nghttp2MemoryPool()
        let dirty = try #require(pool.allocate(256))
        dirty.initializeMemory(as: UInt8.self, repeating: 0xAB, count: 256)
        pool.free(dirty)
        let clean = try #require(pool.allocateZeroed(16, 16))
        #expect(clean == dirty)
        #expect((0..<256).allSatisfy { clean.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        #expect(pool.allocateZeroed(Int.max / 2, 3) == nil)
        pool.free(clean)
    }

    @Test("realloc keeps a block that already fits, moves its bytes when it grows, and frees at size 0")
    func reallocation() throws {
        let pool = Nghttp2MemoryPool()
        let block = try #require(pool.reallocate(nil, 70))  // nil allocates: class 1, 128 usable bytes
        for offset in 0..<70 { block.storeBytes(of: UInt8(offset), toByteOffset: offset, as: UInt8.self) }
        #expect(pool.reallocate(block, 128) == block)
        let grown = try #require(pool.reallocate(block, 5000))
        #expect(grown != block)
        #expect((0..<70).allSatisfy { grown.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
        #expect(pool.cachedBlocks(sizeClass: 1) == 1)  // the old block, kept for reuse
        let huge = try #require(pool.reallocate(grown, 100_000))  // into an unpooled block
        #expect((0..<70).allSatisfy { huge.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
        #expect(pool.cachedBlocks(sizeClass: 7) == 1)
        #expect(pool.reallocate(huge, 0) == nil)
    }

    @Test("blocks above 8 KiB go back to the system; a class keeps at most 512 KiB of free blocks")
    func limits() throws {
        let pool = Nghttp2MemoryPool()
        let large = try #require(pool.allocate(20_000))
        large.initializeMemory(as: UInt8.self, repeating: 1, count: 20_000)
        pool.free(large)
        #expect((0..<Nghttp2MemoryPool.classCount).allSatisfy { pool.cachedBlocks(sizeClass: $0) == 0 })
        let limit = Nghttp2MemoryPool.cachedBytesPerClass / 4096
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<(limit + 10) { blocks.append(try #require(pool.allocate(4096))) }
        for block in blocks { pool.free(block) }
        #expect(pool.cachedBlocks(sizeClass: 6) == limit)
        let reused = (0..<limit).compactMap { _ in pool.allocate(3000) }
        #expect(Set(reused) == Set(blocks.prefix(limit)))  // the first freed, which the list kept
        #expect(pool.cachedBlocks(sizeClass: 6) == 0)
        for block in reused { pool.free(block) }
    }
}
