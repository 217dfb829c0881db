/// Bytes waiting to go out on one connection: appended at the end, consumed from the front. The storage is kept
/// and reused (compacted in place), so steady-state writing does not allocate; only after a burst left it larger
/// than `retainedCapacity` is it given back once drained.
struct SocketOutputBuffer {
    static let retainedCapacity = 1 << 20

    private var storage: [UInt8] = []
    private var start = 0

    /// Bytes waiting.
    var count: Int { storage.count - start }
    var isEmpty: Bool { start == storage.count }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        compactIfWorthwhile(adding: bytes.count)
        storage.append(contentsOf: bytes)
    }

    /// Drops `count` bytes from the front (they were sent).
    mutating func consume(_ count: Int) {
        start = min(storage.count, start + count)
        if start == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= Self.retainedCapacity)
            start = 0
        }
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        start = 0
    }

    /// The waiting bytes, valid only inside `body` (the next append may move them).
    func withUnsentBytes<Result>(_ body: (RawSpan) -> Result) -> Result {
        body(storage.span.extracting(start...).bytes)
    }

    /// Moves the unsent bytes to the front when the sent prefix is large and growing would otherwise reallocate.
    private mutating func compactIfWorthwhile(adding extra: Int) {
        guard start > 0, storage.count + extra > storage.capacity, start >= count else { return }
        storage.removeFirst(start)
        start = 0
    }
}
