import APNSCore

/// `--shard K/N`: which records this process handles when N processes (machines, Kubernetes Indexed Job pods)
/// split one campaign. K is 0-based, like `JOB_COMPLETION_INDEX`: `0/3`, `1/3`, `2/3`.
///
/// The rule, fixed forever so that shards computed by different versions never overlap or leave gaps:
/// a record with a valid token belongs to shard `StableHash.mix(FNV-1a-64(lowercase hex token)) mod N`
/// (the token's normalised hex: `<AB CD>` and `abcd` are the same token and land in the same shard).
/// A record whose token cannot be read belongs to shard 0, which reports it. So every record is handled by
/// exactly one shard, and copies of a token always meet in the same shard (duplicate detection still works).
public struct ShardSelector: Sendable, Hashable, CustomStringConvertible {
    /// K: this process's shard, 0 ≤ K < N.
    public let index: Int
    /// N: how many shards there are.
    public let count: Int

    /// Every record: no sharding.
    public static let all = ShardSelector(uncheckedIndex: 0, count: 1)

    /// Shard `index` of `count`; throws when the index is not below the count.
    public init(index: Int, count: Int) throws(PipelineError) {
        guard count >= 1 else { throw PipelineError(.shardInvalid, "shard count must be at least 1, not \(count)") }
        guard index >= 0, index < count else {
            throw PipelineError(.shardInvalid, "shard index \(index) is not between 0 and \(count - 1) (K is 0-based)")
        }
        self.init(uncheckedIndex: index, count: count)
    }

    /// Parses `K/N` (0-based K).
    public init(parsing spec: String) throws(PipelineError) {
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2,
            let index = Int(parts[0].trimmingSpaces()), let count = Int(parts[1].trimmingSpaces())
        else {
            throw PipelineError(.shardInvalid, "'\(spec)' is not K/N (for example 0/4; K is 0-based)")
        }
        try self.init(index: index, count: count)
    }

    private init(uncheckedIndex: Int, count: Int) {
        self.index = uncheckedIndex
        self.count = count
    }

    /// The shard as `index/count`.
    public var description: String { "\(index)/\(count)" }

    /// The shard a token belongs to among `count`.
    public static func shard(of token: DeviceToken, count: Int) -> Int {
        shard(ofStoredForm: token.hex.utf8, count: count)
    }

    /// The shard of the token whose stored form (`DeviceToken.hex`) is the bytes `hex`.
    static func shard(ofStoredForm hex: some Sequence<UInt8>, count: Int) -> Int {
        guard count > 1 else { return 0 }
        return Int(StableHash.hash(hex) % UInt64(count))
    }

    /// Whether a record with this token is handled here.
    public func contains(_ token: DeviceToken) -> Bool {
        Self.shard(of: token, count: count) == index
    }

    /// Whether a record with the token whose stored form is the bytes `hex` is handled here.
    func contains(storedForm hex: some Sequence<UInt8>) -> Bool {
        Self.shard(ofStoredForm: hex, count: count) == index
    }

    /// Whether a record whose token could not be read is handled here (shard 0 reports those).
    public var handlesUnreadableTokens: Bool { index == 0 }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
