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
    private var topicIDs: [String: Int] = [:]
    private var lastTopic: (value: String, id: Int)?
    /// The key being looked up, in `key[..<keyLength]`; the array is reused between inserts.
    private var key = [UInt8](repeating: 0, count: 1 + DeviceToken.maximumByteCount + 10)
    private var keyLength = 0
    /// Pairs staged for `insertStaged`: their keys one after another, where each ends, and their hashes.
    private var stagedKeys: [UInt8] = []
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
        encodeKey(token: token, topic: topic)
        let key = self.key[..<keyLength]
        return try insert(key: key, hash: StableHash.hash(key))
    }

    /// Stages the notification's pair for `insertStaged()`, which records staged pairs as `insert` would, one
    /// after another in the order staged, but reads all their home cells first: at a million pairs the table is
    /// far larger than the caches, and one pair's cache miss at a time was a sixth of `validate`'s time.
    public mutating func stage(_ notification: PushNotification) {
        offered &+= 1
        encodeKey(token: notification.token, topic: notification.topic)
        let key = self.key[..<keyLength]
        stagedHashes.append(StableHash.hash(key))
        stagedKeys.append(contentsOf: key)
        stagedKeyEnds.append(stagedKeys.count)
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
            if try !insert(key: stagedKeys[start..<end], hash: stagedHashes[index]) { seen += 1 }
            start = end
        }
        stagedKeys.removeAll(keepingCapacity: true)
        stagedKeyEnds.removeAll(keepingCapacity: true)
        stagedHashes.removeAll(keepingCapacity: true)
        return seen
    }

    private mutating func insert(key: ArraySlice<UInt8>, hash: UInt64) throws(PipelineError) -> Bool {
        let location = UInt64(keys.length) + 1
        guard location <= table.maximumLocation else {
            throw PipelineError(.writeFailed, "duplicate filter scratch file in \(keys.directory): more than \(table.maximumLocation) bytes")
        }
        let keys = self.keys
        let isNew = try table.insert(hash: hash, location: location) { (stored: UInt64) throws(PipelineError) -> Bool in
            try keys.holds(key, at: Int(stored - 1))
        }
        if isNew { _ = try keys.append(key) }
        return isNew
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

    /// `key` = the token's byte count, its bytes, then the topic's id as a LEB128 varint: no two pairs share it.
    private mutating func encodeKey(token: DeviceToken, topic: Topic) {
        var id = topicID(topic.value)
        let byteCount = token.byteCount
        key[0] = UInt8(truncatingIfNeeded: byteCount)
        Self.decodeHex(token.hex.utf8.span, into: &key, at: 1)
        var span = key.mutableSpan  // bounds-checked, without a uniqueness check per byte
        var length = 1 + byteCount
        while id >= 0x80 {
            span[length] = UInt8(truncatingIfNeeded: id & 0x7F) | 0x80
            length += 1
            id >>= 7
        }
        span[length] = UInt8(truncatingIfNeeded: id)
        keyLength = length + 1
    }

    /// Writes the bytes that the lowercase hex digits `hex` (as `DeviceToken` stores them) spell into `bytes` from
    /// `offset`, sixteen digits (one 8-byte store) at a time, then eight (one 4-byte store), then two.
    static func decodeHex(_ hex: Span<UInt8>, into bytes: inout [UInt8], at offset: Int) {
        let raw = hex.bytes
        var span = bytes.mutableSpan
        var out = span.mutableBytes
        var index = 0  // the word loads stay inside `hex` (the loop bounds), unchecked
        while index &+ 16 <= hex.count {
            let first = decodeEightDigits(raw.unsafeLoadUnaligned(fromUncheckedByteOffset: index, as: UInt64.self))
            let second = decodeEightDigits(raw.unsafeLoadUnaligned(fromUncheckedByteOffset: index &+ 8, as: UInt64.self))
            let value = UInt64(first) | UInt64(second) << 32
            out.storeBytes(of: value.littleEndian, toByteOffset: offset &+ index &>> 1, as: UInt64.self)
            index &+= 16
        }
        if index &+ 8 <= hex.count {
            let value = decodeEightDigits(raw.unsafeLoadUnaligned(fromUncheckedByteOffset: index, as: UInt64.self))
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

    private mutating func topicID(_ topic: String) -> Int {
        if let lastTopic, lastTopic.value == topic { return lastTopic.id }
        let id: Int
        if let known = topicIDs[topic] {
            id = known
        } else {
            id = topicIDs.count
            topicIDs[topic] = id
        }
        lastTopic = (topic, id)
        return id
    }

    /// The value of a lowercase hex digit (`DeviceToken` stores only those).
    @inline(__always)
    private static func nibble(_ digit: UInt8) -> UInt8 {
        digit <= UInt8(ascii: "9") ? digit &- UInt8(ascii: "0") : digit &- UInt8(ascii: "a") &+ 10
    }
}
