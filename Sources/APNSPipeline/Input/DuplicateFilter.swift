import APNSCore

/// Remembers which (device token, topic) pairs a run has already taken, as 64-bit hashes in a compact
/// open-addressing table (8 bytes a table cell, 11 to 21 bytes a pair), never as strings.
///
/// The hash is `StableHash.hash(token hex bytes, 0x00, topic bytes)`. Two different pairs share a hash with
/// probability about n² / 2⁶⁵ over a run of n distinct pairs: below 3 in a million for 10 million pairs, below
/// 3 in ten thousand for 100 million. A collision reports a new pair as a duplicate (it is never sent twice).
/// `--allow-duplicates` simply does not use the filter.
public struct DuplicateFilter: Sendable {
    private var table: PackedUInt64Table

    /// - Parameter expectedCount: pairs to size the table for up front (it grows as needed anyway).
    public init(expectedCount: Int = 0) {
        table = PackedUInt64Table(minimumCapacity: expectedCount)
    }

    /// Records the pair; true the first time it is seen, false for a later copy.
    public mutating func insert(token: DeviceToken, topic: Topic) -> Bool {
        var hash = Self.hash(token: token, topic: topic)
        if hash == 0 { hash = 1 }  // 0 marks an empty table cell
        return table.store(hash) == nil
    }

    /// Records the notification's (token, topic) pair; true the first time it is seen.
    public mutating func insert(_ notification: PushNotification) -> Bool {
        insert(token: notification.token, topic: notification.topic)
    }

    /// Whether the pair has been recorded.
    public func contains(token: DeviceToken, topic: Topic) -> Bool {
        let hash = Self.hash(token: token, topic: topic)
        return table.entry(forKey: hash == 0 ? 1 : hash) != nil
    }

    /// How many distinct pairs are recorded.
    public var count: Int { table.count }
    /// Bytes the filter holds.
    public var memoryBytes: Int { table.memoryBytes }

    /// The pair's stable 64-bit hash.
    public static func hash(token: DeviceToken, topic: Topic) -> UInt64 {
        var state = StableHash.fnv1a(token.hexBytes)
        state = StableHash.fnv1a(byte: 0, state: state)
        state = StableHash.fnv1a(topic.value.utf8, state: state)
        return StableHash.mix(state)
    }
}
