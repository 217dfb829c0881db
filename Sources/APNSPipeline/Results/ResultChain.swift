import APNSCore

/// The result files of a campaign read together with its replays, and which line of each record stands: the one
/// rule `replay`, `report` and `prune` share, so that given an original and its replays (in any order, by a glob)
/// they send nothing already delivered and count each record once (docs/RUNNING.md, "Replaying failed batches").
///
/// Files form a chain through their campaign records: a replay's record names the result files it replays (its
/// `identity.inputs`), and an input names a given file when the paths are the same string or the fingerprints are
/// the same bytes. Files joined that way, directly or through others, are one chain; files no replay joins (the
/// shards of a campaign, unrelated campaigns, files without a campaign record) each stand alone, and their lines
/// are all kept, as before.
///
/// A record is named by its original input file and line (`RecordKey`, which a replay keeps). Among the lines of
/// one record in one chain, the one that stands is:
///   1. a `delivered` line, wherever it is: APNs accepted the notification, so sending it again notifies twice;
///   2. otherwise the line of the latest file: a replay is later than every file it replays, directly or through
///      other replays; files that neither replays are ordered by when their campaign started (`startedAt`), a
///      file without a campaign record first, then by the order given.
///
///     send ──▶ results-1 ◀── replays ── results-2 ◀── replays ── results-3 (replays results-1 and results-2)
///     depth        0                        1                        2
///
/// Use: `init(files:)`, then `offer` every line of the files `readingOrder` names (in that order), then ask
/// `stands` of each line read again. Only lines of chained files are kept, and lines of a chain's first files
/// (depth 0, the big send) only for records a later file also holds, so memory follows the replays' size.
public struct ResultChain: Sendable {
    /// What the chain knows of one result file, from its campaign record (`<results>.campaign`).
    public struct File: Sendable, Equatable {
        /// The result file's path.
        public var path: String
        /// The fingerprint of the file's bytes now (`ContentFingerprint`), to match a replay's inputs named by
        /// another path; nil when not computed.
        public var fingerprint: String?
        /// The campaign record's identity; nil for a file without one.
        public var identity: CampaignIdentity?
        /// When its campaign started (seconds since the epoch).
        public var startedAt: Double?

        /// A file of a chain from its parts.
        public init(
            path: String, fingerprint: String? = nil, identity: CampaignIdentity? = nil, startedAt: Double? = nil
        ) {
            self.path = path
            self.fingerprint = fingerprint
            self.identity = identity
            self.startedAt = startedAt
        }

        /// Whether this file is a replay one of whose inputs is `other`.
        func replays(_ other: File) -> Bool {
            guard let identity, identity.command == "replay" else { return false }
            return identity.inputs.contains { input in
                input.path == other.path || (input.fingerprint != nil && input.fingerprint == other.fingerprint)
            }
        }
    }

    /// A record in one chain.
    struct ChainKey: Hashable {
        var chain: Int
        var key: RecordKey
    }

    /// The line that stands so far for a record: the file that holds it (an index into `files`) and its outcome.
    struct Line {
        var file: Int
        var outcome: RecordOutcome
    }

    /// The chain's files: the original first, then its replays.
    public let files: [File]
    /// Per file: the chain it belongs to (the smallest file index in it).
    public let chain: [Int]
    /// Per file: how many replays deep it is in its chain (0: no file given is replayed by it).
    public let depth: [Int]
    /// Per file: its place in the chain order (later files higher); unique.
    public let rank: [Int]
    /// Per file: whether it shares its chain with another file (only then can its lines be superseded).
    private let chained: [Bool]
    private var standing: [ChainKey: Line] = [:]

    /// A chain of `files`.
    public init(files: [File]) {
        self.files = files
        let count = files.count
        var replayed = [[Int]](repeating: [], count: count)
        for later in 0..<count {
            for earlier in 0..<count where earlier != later && files[later].replays(files[earlier]) {
                replayed[later].append(earlier)
            }
        }
        // Chains: files joined by a replay, directly or through others.
        var chain = Array(0..<count)
        func root(_ file: Int) -> Int {
            var file = file
            while chain[file] != file { file = chain[file] }
            return file
        }
        for later in 0..<count {
            for earlier in replayed[later] {
                let (a, b) = (root(later), root(earlier))
                chain[max(a, b)] = min(a, b)
            }
        }
        let roots = (0..<count).map(root)
        self.chain = roots
        // Depth: one more than the deepest file it replays (a cycle, which no real chain has, counts as depth 0).
        var depth = [Int?](repeating: nil, count: count)
        var visiting = Set<Int>()
        func depthOf(_ file: Int) -> Int {
            if let known = depth[file] { return known }
            guard visiting.insert(file).inserted else { return 0 }
            let value = replayed[file].map { depthOf($0) + 1 }.max() ?? 0
            visiting.remove(file)
            depth[file] = value
            return value
        }
        let depths = (0..<count).map(depthOf)
        self.depth = depths
        let order = (0..<count).sorted { a, b in
            (depths[a], files[a].startedAt ?? -Double.infinity, a) < (
                depths[b], files[b].startedAt ?? -Double.infinity, b
            )
        }
        var rank = [Int](repeating: 0, count: count)
        for (place, file) in order.enumerated() { rank[file] = place }
        self.rank = rank
        var members: [Int: Int] = [:]
        for id in roots { members[id, default: 0] += 1 }
        chained = roots.map { members[$0, default: 0] > 1 }
    }

    /// Whether a file shares its chain with another: only then can its lines be superseded.
    public func isChained(_ file: Int) -> Bool { chained[file] }

    /// The chained files, latest first: the order in which to `offer` their lines.
    public var readingOrder: [Int] {
        files.indices.filter(isChained).sorted { rank[$0] > rank[$1] }
    }

    /// Whether line `a` stands over line `b` of the same record: a delivered line over any other, else the later.
    func prevails(_ a: Line, over b: Line) -> Bool {
        let (aDelivered, bDelivered) = (a.outcome == .delivered, b.outcome == .delivered)
        if aDelivered != bDelivered { return aDelivered }
        return rank[a.file] > rank[b.file]
    }

    /// Takes one line of `file` into account. A line of an unchained file is ignored (it always stands), and a
    /// line of a depth-0 file is kept only when a later file holds the same record (read in `readingOrder`).
    public mutating func offer(_ key: RecordKey, outcome: RecordOutcome, file: Int) {
        guard isChained(file) else { return }
        let chainKey = ChainKey(chain: chain[file], key: key)
        let line = Line(file: file, outcome: outcome)
        guard let kept = standing[chainKey] else {
            if depth[file] > 0 { standing[chainKey] = line }
            return
        }
        if prevails(line, over: kept) { standing[chainKey] = line }
    }

    /// Whether the line of `file` for `key` is its record's outcome: false when another file's line stands.
    public func stands(_ key: RecordKey, file: Int) -> Bool {
        guard let kept = standing[ChainKey(chain: chain[file], key: key)] else { return true }
        return kept.file == file
    }
}
