import APNSCore

/// A run of (device token, topic) pairs on their way to a `DuplicateFilter` on another thread, in input order: each
/// token's stored hex digits one after another, where each ends, and its topic's id (`TopicIDs`). Plain bytes and
/// integers: handing a batch over moves no reference that both threads would count, and no token's storage is
/// freed on the other thread.
struct PairBatch: Sendable {
    private(set) var hex: [UInt8] = []
    private(set) var hexEnds: [Int] = []
    private(set) var topicIDs: [Int] = []
    /// How far the reader had read when the batch was handed over (for `DuplicateFilter.sizeForInput`).
    var progress: ReadProgress?

    init(capacity: Int) {
        hex.reserveCapacity(capacity * 64)
        hexEnds.reserveCapacity(capacity)
        topicIDs.reserveCapacity(capacity)
    }

    var count: Int { hexEnds.count }

    /// Appends the pair of the token whose stored form (`DeviceToken.hex`) is the bytes `tokenHex`.
    mutating func append(hex tokenHex: ArraySlice<UInt8>, topicID: Int) {
        hex.append(contentsOf: tokenHex)
        hexEnds.append(hex.count)
        topicIDs.append(topicID)
    }

    /// Empties the batch, keeping its storage for the next one.
    mutating func removeAll() {
        hex.removeAll(keepingCapacity: true)
        hexEnds.removeAll(keepingCapacity: true)
        topicIDs.removeAll(keepingCapacity: true)
        progress = nil
    }

    /// Stages the pairs `first..<last` in `filter`, in order.
    func stage(in filter: inout DuplicateFilter, from first: Int, to last: Int) {
        var start = first == 0 ? 0 : hexEnds[first - 1]
        for index in first..<last {
            let end = hexEnds[index]
            filter.stage(hex: hex.span.extracting(start..<end), topicID: topicIDs[index])
            start = end
        }
    }
}
