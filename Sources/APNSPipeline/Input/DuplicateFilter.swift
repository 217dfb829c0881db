import APNSCore
import Foundation

/// Remembers which (device token, topic) pairs a run has already taken, exactly, in about 9 to 10 bytes of memory
/// a pair: a `FingerprintTable` of 64-bit cells (a 24-bit fingerprint and the key's place in the scratch file) in
/// memory, and each pair's exact key in a `ScratchKeyFile` on the disk (the token's bytes after a length byte,
/// then a small interned topic id: 34 bytes for a 32-byte token). A fingerprint match is confirmed by reading the
/// exact key back, so a new pair is never reported as a duplicate and a copy always is.
///
/// The scratch file is unlinked as soon as it is created in `scratchDirectory`; a scratch file error throws.
/// `--allow-duplicates` simply does not use the filter.
public struct DuplicateFilter {
    private var table: FingerprintTable
    private let keys: ScratchKeyFile
    private var topicIDs = TopicIDs()
    /// Staged pairs' keys one after another in `stagedBytes[..<stagedLength]`, where each ends, and their hashes.
    /// The array is never shorter than `stagedLength + Self.keyRoom`: room to encode one more key, and for the
    /// hash's last word load. A pair inserted alone is encoded there too, without being staged.
    private var stagedBytes = [UInt8](repeating: 0, count: 4 * DuplicateFilter.keyRoom)
    private var stagedLength = 0
    private var stagedKeyEnds: [Int] = []
    private var stagedHashes: [UInt64] = []
    /// What the read-ahead of staged pairs' home cells saw; kept so the reads are not optimised away.
    private var readAhead: UInt64 = 0
    /// Pairs offered so far, and whether `sizeForInput` has sized the table.
    private var offered = 0
    private var isSized = false
    /// Pairs offered before `sizeForInput` extrapolates: enough input read (megabytes) that the reader's buffered
    /// lead barely moves the estimate.
    static let sizingSample = 65_536
    /// Room for the longest key (a length byte, the token's bytes, a topic id of up to ten varint bytes), and eight
    /// bytes more for the hash's last word load.
    static let keyRoom = 1 + DeviceToken.maximumByteCount + 10 + 8

    /// - Parameters:
    ///   - scratchDirectory: where the unlinked scratch file of exact keys goes (a directory the run can write).
    ///   - expectedCount: pairs to size the table for up front (it grows as needed anyway).
    public init(scratchDirectory: String, expectedCount: Int = 0) {
        self.init(scratchDirectory: scratchDirectory, expectedCount: expectedCount, fingerprintBits: 24)
    }

    /// `fingerprintBits` below 24 make fingerprints collide, for tests.
    init(scratchDirectory: String, expectedCount: Int = 0, fingerprintBits: Int) {
        table = FingerprintTable(fingerprintBits: fingerprintBits, minimumCapacity: expectedCount)
        keys = ScratchKeyFile(directory: scratchDirectory)
    }

    /// Records the pair; true the first time it is seen, false for a later copy.
    public mutating func insert(token: DeviceToken, topic: Topic) throws(PipelineError) -> Bool {
        offered &+= 1
        let (end, hash) = encodeKey(hex: token.hex.utf8.span, topicID: topicIDs.id(of: topic))
        return try insert(key: stagedLength..<end, hash: hash)
    }

    /// Stages the pair of `topic` and the token whose stored form (`DeviceToken.hex`) is `hex` for
    /// `insertStaged()`, which records staged pairs as `insert` would, one after another in the order staged, but
    /// reads all their home cells first: at a million pairs the table is far larger than the caches, and one pair's
    /// cache miss at a time was a sixth of `validate`'s time.
    mutating func stage(hex: Span<UInt8>, topic: Topic) {
        stage(hex: hex, topicID: topicIDs.id(of: topic))
    }

    /// Stages the pair of a token whose stored form (`DeviceToken.hex`) is `hex`, and of the topic that
    /// `TopicIDs` numbers `topicID`: the same pair `stage(hex:topic:)` stages for that topic.
    mutating func stage(hex: Span<UInt8>, topicID: Int) {
        offered &+= 1
        let (end, hash) = encodeKey(hex: hex, topicID: topicID)
        stagedHashes.append(hash)
        stagedKeyEnds.append(end)
        stagedLength = end
        if stagedLength + Self.keyRoom > stagedBytes.count {
            stagedBytes.append(contentsOf: repeatElement(0, count: stagedBytes.count))
        }
    }

    /// Pairs staged and not yet inserted.
    public var stagedCount: Int { stagedHashes.count }

    /// Records the staged pairs in the order they were staged; returns how many were already seen (a pair staged
    /// twice counts its second copy).
    public mutating func insertStaged() throws(PipelineError) -> Int {
        var cells: UInt64 = 0
        for hash in stagedHashes { cells ^= table.homeCell(hash: hash) }
        readAhead ^= cells
        var seen = 0
        var start = 0
        for index in stagedHashes.indices {
            let end = stagedKeyEnds[index]
            if try !insert(key: start..<end, hash: stagedHashes[index]) { seen += 1 }
            start = end
        }
        stagedLength = 0
        stagedKeyEnds.removeAll(keepingCapacity: true)
        stagedHashes.removeAll(keepingCapacity: true)
        return seen
    }

    /// Records the pair whose key is `stagedBytes[key]`; true when it is new.
    private mutating func insert(key: Range<Int>, hash: UInt64) throws(PipelineError) -> Bool {
        var probe = table.probe(hash: hash)
        while let stored = table.nextCandidate(&probe) {
            if try keys.holds(stagedBytes, key, at: Int(stored - 1)) { return false }
        }
        let location = UInt64(keys.length) + 1
        guard location <= table.maximumLocation else {
            throw PipelineError(
                .writeFailed,
                "duplicate filter scratch file in \(keys.directory): more than \(table.maximumLocation) bytes")
        }
        table.insert(location: location, at: probe)
        try keys.append(stagedBytes, key)
        return true
    }

    /// Records the notification's (token, topic) pair; true the first time it is seen.
    public mutating func insert(_ notification: PushNotification) throws(PipelineError) -> Bool {
        try insert(token: notification.token, topic: notification.topic)
    }

    /// Once `sizingSample` pairs have been offered, sizes the table for the whole input at the rate seen so far
    /// (pairs offered per byte read, times the input's size), so a large campaign file does not make it grow one
    /// segment at a time. Call it as records come; `progress` (the reader's) is asked for once, and a nil (standard
    /// input) leaves the table to grow as it goes. More input than foreseen still just grows the table; fewer
    /// distinct pairs (duplicates) leave it emptier, by at most 9 bytes a record.
    public mutating func sizeForInput(_ progress: @autoclosure () -> ReadProgress?) {
        guard !isSized, offered >= Self.sizingSample else { return }
        isSized = true
        guard let progress = progress(), progress.bytesRead > 0, progress.bytesTotal > progress.bytesRead else {
            return
        }
        let expected = Double(offered) * Double(progress.bytesTotal) / Double(progress.bytesRead)
        table.reserveCapacity(Int(min(expected, Double(Int32.max))))
    }

    /// How many distinct pairs are recorded.
    public var count: Int { table.count }
    /// Bytes the filter holds in memory (the table and the scratch file's write buffer).
    public var memoryBytes: Int { table.memoryBytes + keys.memoryBytes }

    /// `$TMPDIR`, else `/tmp`: the scratch directory of `validate`, and of `send` writing results to stdout.
    public static var temporaryDirectory: String {
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// The scratch directory of `send`: the result file's directory (`temporaryDirectory` for `-`, stdout).
    public static func scratchDirectory(forResults path: String) -> String {
        if path == "-" { return temporaryDirectory }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Writes the pair's key at `stagedBytes[stagedLength...]`: the token's byte count, its bytes (which the
    /// lowercase hex digits `hex` spell), then the topic's id as a LEB128 varint, so no two pairs share a key.
    /// Returns where the key ends, and the pair's hash.
    private mutating func encodeKey(hex: Span<UInt8>, topicID: Int) -> (end: Int, hash: UInt64) {
        let byteCount = hex.count / 2
        let start = stagedLength
        Self.decodeHex(hex, into: &stagedBytes, at: start + 1)
        var span = stagedBytes.mutableSpan  // bounds-checked, without a uniqueness check per byte
        span[start] = UInt8(truncatingIfNeeded: byteCount)
        let hash = Self.hash(tokenBytes: span.span, from: start + 1, count: byteCount, topicID: topicID)
        var end = start + 1 + byteCount
        var id = topicID
        while id >= 0x80 {
            span[end] = UInt8(truncatingIfNeeded: id & 0x7F) | 0x80
            end += 1
            id >>= 7
        }
        span[end] = UInt8(truncatingIfNeeded: id)
        return (end + 1, hash)
    }

    /// The hash of a pair, for this run's table only (nothing outside the run's memory keeps it, so it need not be
    /// a `StableHash`): the token's `count` bytes at `bytes[offset...]` sixteen at a time, each sixteen multiplied
    /// with the state into 128 bits and folded back to 64 (wyhash's step), the byte count and topic id first and
    /// `StableHash.mix` last. A few multiplies a pair instead of one a byte. `bytes` must reach at least 8 bytes
    /// past the token: its last word is loaded whole, then masked.
    static func hash(tokenBytes bytes: Span<UInt8>, from offset: Int, count: Int, topicID: Int) -> UInt64 {
        precondition(offset >= 0 && count >= 0 && offset + count + 8 <= bytes.count, "hash past its bytes")
        let raw = bytes.bytes
        @inline(__always) func word(_ index: Int) -> UInt64 {  // inside `bytes`: checked above
            UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset &+ index, as: UInt64.self))
        }
        let lane: UInt64 = 0x8EBC_6AF0_9C88_C6E3
        var state = fold(
            UInt64(truncatingIfNeeded: count) ^ 0xA076_1D64_78BD_642F,
            UInt64(truncatingIfNeeded: topicID) ^ 0xE703_7ED1_A0B4_28DB)
        var index = 0
        while index &+ 16 <= count {
            state = fold(word(index) ^ state, word(index &+ 8) ^ lane)
            index &+= 16
        }
        // The last 0 to 15 bytes, zero-padded to two words.
        let left = count &- index
        let first = left == 0 ? 0 : word(index) & (left >= 8 ? ~0 : ~0 &>> UInt64(truncatingIfNeeded: 64 &- 8 &* left))
        let second = left <= 8 ? 0 : word(index &+ 8) & (~0 &>> UInt64(truncatingIfNeeded: 128 &- 8 &* left))
        return StableHash.mix(fold(first ^ state, second ^ lane))
    }

    /// The two halves of `x × y`'s 128-bit product, exclusive-or'ed.
    @inline(__always)
    private static func fold(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let product = x.multipliedFullWidth(by: y)
        return product.high ^ product.low
    }

    /// Writes the bytes that the lowercase hex digits `hex` (as `DeviceToken` stores them) spell into `bytes` from
    /// `offset`: sixteen digits at a time as one vector (a digit's value is its low four bits, plus 9 for a letter;
    /// each even digit's value shifted over the odd one's after it), then eight (one 4-byte store), then two.
    static func decodeHex(_ hex: Span<UInt8>, into bytes: inout [UInt8], at offset: Int) {
        let raw = hex.bytes
        var span = bytes.mutableSpan
        var out = span.mutableBytes
        var index = 0  // the loads stay inside `hex` (the loop bounds), and check it
        while index &+ 16 <= hex.count {
            let digits = raw.unsafeLoadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
            let values = (digits & 0x0F) &+ ((digits &>> 6) & 1) &* 9
            let packed = values.evenHalf &<< 4 | values.oddHalf
            out.storeBytes(of: packed, toByteOffset: offset &+ index &>> 1, as: SIMD8<UInt8>.self)
            index &+= 16
        }
        if index &+ 8 <= hex.count {
            let value = decodeEightDigits(raw.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self))
            out.storeBytes(of: value.littleEndian, toByteOffset: offset &+ index &>> 1, as: UInt32.self)
            index &+= 8
        }
        while index &+ 2 <= hex.count {
            let value = nibble(hex[index]) << 4 | nibble(hex[index &+ 1])
            out.storeBytes(of: value, toByteOffset: offset &+ index &>> 1, as: UInt8.self)
            index &+= 2
        }
    }

    /// The four bytes that eight lowercase hex digits (loaded as a word, the first digit in its lowest byte) spell,
    /// the first in the lowest byte: a digit's value is its low four bits, plus 9 for a letter (bit 6 set).
    @inline(__always)
    private static func decodeEightDigits(_ word: UInt64) -> UInt32 {
        let digits = UInt64(littleEndian: word)
        let values = (digits & 0x0F0F_0F0F_0F0F_0F0F) &+ ((digits >> 6) & 0x0101_0101_0101_0101) &* 9
        // In each 16-bit lane: the first digit (low byte) is the high nibble, the second the low one.
        var pairs = ((values << 4) & 0x00F0_00F0_00F0_00F0) | ((values >> 8) & 0x000F_000F_000F_000F)
        // The lanes' low bytes, packed together: two by two, then the two halves.
        pairs = (pairs | pairs >> 8) & 0x0000_FFFF_0000_FFFF
        pairs = (pairs | pairs >> 16) & 0x0000_0000_FFFF_FFFF
        return UInt32(truncatingIfNeeded: pairs)
    }

    /// The value of a lowercase hex digit (`DeviceToken` stores only those).
    @inline(__always)
    private static func nibble(_ digit: UInt8) -> UInt8 {
        digit <= UInt8(ascii: "9") ? digit &- UInt8(ascii: "0") : digit &- UInt8(ascii: "a") &+ 10
    }
}

// MARK: - TopicIDs

/// Small numbers for the topics a run has seen, in order of first sight (0, 1, 2, …): the duplicate filter's key
/// ends with one instead of the topic's text. A run's records nearly always share one topic, so the last one is
/// compared first.
struct TopicIDs {
    private var ids: [String: Int] = [:]
    private var last: (topic: String, id: Int)?

    /// The topic's id, given on first sight.
    mutating func id(of topic: Topic) -> Int {
        if let last, last.topic == topic.value { return last.id }
        let id: Int
        if let known = ids[topic.value] {
            id = known
        } else {
            id = ids.count
            ids[topic.value] = id
        }
        last = (topic.value, id)
        return id
    }
}
