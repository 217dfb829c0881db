import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// The duplicate filter stays exact when fingerprints collide, keeps every pair across growth, holds at most
/// 10 bytes a pair above its flat base, and fails loudly when its scratch file does.
@Suite("Duplicate filter: exactness, growth, memory, scratch file")
struct DuplicateFilterExactnessTests {
    typealias Support = PipelineTestSupport

    private func token(_ index: Int) throws -> DeviceToken { try DeviceToken(parsing: Support.token(index)) }

    @Test(
        "with 0- and 2-bit fingerprints every lookup collides: distinct pairs are all new, true copies all duplicates",
        arguments: [0, 2])
    func forcedCollisions(fingerprintBits: Int) throws {
        var filter = DuplicateFilter(
            scratchDirectory: try Support.temporaryDirectory().path, fingerprintBits: fingerprintBits)
        let topics = try ["com.example.app", "com.example.app.voip", "com.example.other"].map {
            try Topic(validating: $0)
        }
        // 70k keys of scratch file: well past the 64 KiB write buffer, so candidates are read back from the disk.
        let tokens = try (0..<700).map { try token($0) }
        var new = 0
        for topic in topics {
            for token in tokens where try filter.insert(token: token, topic: topic) { new += 1 }
        }
        #expect(new == tokens.count * topics.count)
        var copies = 0
        for topic in topics.reversed() {
            for token in tokens.reversed() where try !filter.insert(token: token, topic: topic) { copies += 1 }
        }
        #expect(copies == tokens.count * topics.count)
        #expect(filter.count == tokens.count * topics.count)
    }

    @Test("the key holds the bytes the hex digits spell, for every digit pair, at every length and offset")
    func hexDecoding() {
        let digits = Array("0123456789abcdef".utf8)
        for high in 0..<16 {
            for low in 0..<16 {
                for length in [1, 3, 4, 5, 8, 9, 32, 33] {
                    // The pair under test at every place of a token of `length` bytes; the other bytes vary too.
                    for place in 0..<length {
                        var expected = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ high) }
                        expected[place] = UInt8(high << 4 | low)
                        let hex = expected.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }
                        var bytes = [UInt8](repeating: 0xEE, count: length + 3)
                        DuplicateFilter.decodeHex(hex.span, into: &bytes, at: 1)
                        #expect(
                            Array(bytes[1...length]) == expected && bytes[0] == 0xEE && bytes[length + 1] == 0xEE,
                            "\(String(decoding: hex, as: UTF8.self))")
                    }
                }
            }
        }
    }

    @Test("the pair hash reads exactly the token's bytes at every length: not one past it, and each of them counts")
    func hashCoverage() {
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 200] {
            for offset in [0, 3] {
                let token = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 1) }
                // The bytes around the token differ between the two buffers; the hash must not see them.
                let left = [UInt8](repeating: 0x11, count: offset) + token + [UInt8](repeating: 0xA5, count: 9)
                let right = [UInt8](repeating: 0x77, count: offset) + token + [UInt8](repeating: 0x5A, count: 9)
                let hash = DuplicateFilter.hash(tokenBytes: left.span, from: offset, count: count, topicID: 3)
                #expect(DuplicateFilter.hash(tokenBytes: right.span, from: offset, count: count, topicID: 3) == hash)
                // Every single byte changed, the count, and the topic id each give another hash.
                var hashes: Set<UInt64> = [hash]
                for place in 0..<count {
                    var changed = left
                    changed[offset + place] ^= 0x80
                    hashes.insert(
                        DuplicateFilter.hash(tokenBytes: changed.span, from: offset, count: count, topicID: 3))
                }
                hashes.insert(DuplicateFilter.hash(tokenBytes: left.span, from: offset, count: count, topicID: 4))
                if count > 0 {
                    hashes.insert(
                        DuplicateFilter.hash(tokenBytes: left.span, from: offset, count: count - 1, topicID: 3))
                }
                #expect(hashes.count == count + (count > 0 ? 3 : 2), "count \(count), offset \(offset)")
            }
        }
    }

    @Test("tokens of different lengths with the same leading bytes are different pairs")
    func tokenLengths() throws {
        var filter = DuplicateFilter(scratchDirectory: try Support.temporaryDirectory().path, fingerprintBits: 0)
        let short = try DeviceToken(parsing: String(repeating: "ab", count: 16))
        let long = try DeviceToken(parsing: String(repeating: "ab", count: 17))
        #expect(try filter.insert(token: long, topic: Support.defaultTopic))
        #expect(try filter.insert(token: short, topic: Support.defaultTopic))
        #expect(try !filter.insert(token: long, topic: Support.defaultTopic))
        #expect(try !filter.insert(token: short, topic: Support.defaultTopic))
    }

    @Test(
        "the table keeps every entry across many growth steps, with colliding and distinct fingerprints",
        arguments: [0, 3, 24])
    func growth(fingerprintBits: Int) throws {
        var table = FingerprintTable(fingerprintBits: fingerprintBits)
        let count = fingerprintBits == 0 ? 3_000 : 60_000  // all in one probe run with no fingerprint: keep it small
        // Without a fingerprint, all in segment 0 (top byte 0), so that one segment grows from 16 cells in ~60 steps.
        let hashes = (0..<count).map { StableHash.mix(UInt64($0) &+ 1) >> (fingerprintBits == 0 ? 8 : 0) }
        let startBytes = table.memoryBytes
        for (index, hash) in hashes.enumerated() {
            let stored = table.insert(hash: hash, location: UInt64(index) + 1) { hashes[Int($0) - 1] == hash }
            #expect(stored, "entry \(index)")
        }
        #expect(table.memoryBytes - startBytes >= count * 8, "the table grew to hold every entry")
        #expect(table.count == count)
        var found = 0
        for (index, hash) in hashes.enumerated() {
            if !table.insert(hash: hash, location: UInt64(count + index) + 1, isStored: { hashes[Int($0) - 1] == hash })
            {
                found += 1
            }
        }
        #expect(found == count)
    }

    @Test(
        "staged pairs get the verdicts one-at-a-time inserts give: copies within a batch, across batches, colliding",
        arguments: [0, 2, 24])
    func stagedInserts(fingerprintBits: Int) throws {
        let directory = try Support.temporaryDirectory().path
        var staged = DuplicateFilter(scratchDirectory: directory, fingerprintBits: fingerprintBits)
        var single = DuplicateFilter(scratchDirectory: directory, fingerprintBits: fingerprintBits)
        let topics = try ["com.example.app", "com.example.other"].map { try Topic(validating: $0) }
        var generator = SplitMix64(seed: 7)
        var stagedSeen = 0
        var singleSeen = 0
        var batches = 0
        for _ in 0..<40 {
            let size = Int.random(in: 1...50, using: &generator)
            for _ in 0..<size {
                // Few enough tokens that copies land in the same batch and in later ones.
                let notification = PushNotification(
                    token: try token(Int.random(in: 0..<300, using: &generator)),
                    topic: topics[Int.random(in: 0..<2, using: &generator)], pushType: .alert, payload: [])
                staged.stage(hex: notification.token.hex.utf8.span, topic: notification.topic)
                if try !single.insert(notification) { singleSeen += 1 }
            }
            #expect(staged.stagedCount == size)
            stagedSeen += try staged.insertStaged()
            #expect(staged.stagedCount == 0)
            #expect(stagedSeen == singleSeen && staged.count == single.count, "batch \(batches)")
            batches += 1
        }
        #expect(singleSeen > 0 && single.count > 0)
        #expect(try staged.insertStaged() == 0)  // nothing staged: nothing counted
    }

    @Test(
        "a table sized up front keeps every entry already in it, and holds the rest without growing",
        arguments: [3, 24])
    func reservedCapacity(fingerprintBits: Int) throws {
        var table = FingerprintTable(fingerprintBits: fingerprintBits)
        let count = 40_000
        let hashes = (0..<count).map { StableHash.mix(UInt64($0) &+ 1) }
        for index in 0..<1_000 {
            #expect(
                table.insert(hash: hashes[index], location: UInt64(index) + 1) { hashes[Int($0) - 1] == hashes[index] })
        }
        table.reserveCapacity(count)
        let reserved = table.memoryBytes
        #expect(reserved >= count * 8 * 10 / 9, "room for every pair at nine tenths full")
        for index in 1_000..<count {
            #expect(
                table.insert(hash: hashes[index], location: UInt64(index) + 1) { hashes[Int($0) - 1] == hashes[index] })
        }
        #expect(
            table.memoryBytes <= reserved + FingerprintTable.segmentCount * 16 * 8, "at most a few spilled cells more")
        #expect(
            Double(table.memoryBytes) / Double(count) <= 10, "\(Double(table.memoryBytes) / Double(count)) bytes a pair"
        )
        for (index, hash) in hashes.enumerated() {
            #expect(
                !table.insert(hash: hash, location: UInt64(count + index) + 1) { hashes[Int($0) - 1] == hash },
                "entry \(index)")
        }
        table.reserveCapacity(10)  // never shrinks
        #expect(table.memoryBytes >= reserved)
    }

    @Test(
        "sized for the input: after the sample, the pairs-per-byte rate times the input's size; standard input is left alone"
    )
    func sizedForInput() throws {
        let directory = try Support.temporaryDirectory().path
        var known = DuplicateFilter(scratchDirectory: directory)
        var unknown = DuplicateFilter(scratchDirectory: directory)
        let tokens = try (0..<DuplicateFilter.sizingSample).map { try token($0) }
        for (index, token) in tokens.enumerated() {
            _ = try known.insert(token: token, topic: Support.defaultTopic)
            _ = try unknown.insert(token: token, topic: Support.defaultTopic)
            if index == DuplicateFilter.sizingSample - 2 {
                // One pair short of the sample: nothing happens yet.
                let before = known.memoryBytes
                known.sizeForInput(ReadProgress(bytesRead: 1_000, bytesTotal: 4_000))
                #expect(known.memoryBytes == before)
            }
        }
        let grown = known.memoryBytes
        var asked = 0
        known.sizeForInput(
            {
                asked += 1
                return ReadProgress(bytesRead: 1_000, bytesTotal: 4_000)
            }())
        unknown.sizeForInput(nil)
        // A quarter read: room for four times the pairs so far, each a cell at no more than nine tenths full.
        #expect(known.memoryBytes >= 4 * DuplicateFilter.sizingSample * 8 * 10 / 9)
        #expect(known.memoryBytes < 4 * DuplicateFilter.sizingSample * 10 + grown)
        #expect(unknown.memoryBytes <= grown)
        let sized = known.memoryBytes
        known.sizeForInput(
            {
                asked += 1
                return ReadProgress(bytesRead: 1_000, bytesTotal: 400_000)
            }())
        #expect(known.memoryBytes == sized && asked == 1, "sized once, the progress asked for once")
    }

    @Test("memory per pair above the flat base stays at most 10 bytes at several sizes", arguments: [20_000, 120_000])
    func memoryPerPair(pairs: Int) throws {
        let directory = try Support.temporaryDirectory().path
        var filter = DuplicateFilter(scratchDirectory: directory)
        var one = DuplicateFilter(scratchDirectory: directory)
        _ = try one.insert(token: try token(0), topic: Support.defaultTopic)
        for index in 0..<pairs { _ = try filter.insert(token: try token(index), topic: Support.defaultTopic) }
        let perPair = Double(filter.memoryBytes - one.memoryBytes) / Double(pairs)
        #expect(perPair <= 10, "\(perPair) bytes a pair")
        #expect(filter.memoryBytes >= pairs * 8, "one 8-byte cell a pair at least")
    }

    @Test("the scratch file is unlinked at once: the directory stays empty while the filter is in use")
    func scratchFileUnlinked() throws {
        let directory = try Support.temporaryDirectory().path
        var filter = DuplicateFilter(scratchDirectory: directory)
        for index in 0..<3_000 { _ = try filter.insert(token: try token(index), topic: Support.defaultTopic) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(try !filter.insert(token: try token(1), topic: Support.defaultTopic))
    }

    @Test("a scratch directory that cannot be written is a run error naming it, never an answer")
    func scratchFileError() throws {
        let directory = try Support.temporaryDirectory().path + "/missing"
        var filter = DuplicateFilter(scratchDirectory: directory)
        #expect {
            _ = try filter.insert(token: try token(1), topic: Support.defaultTopic)
        } throws: { error in
            let failure = error as? PipelineError
            return failure?.kind == .openFailed && failure?.detail.contains(directory) == true
        }
    }

    @Test("a write failure of the scratch file is thrown, naming the directory")
    func scratchWriteError() throws {
        let keys = ScratchKeyFile(directory: "/dev/full-test", file: try POSIXFile.openForReplacing("/dev/full"))
        let key = [UInt8](repeating: 7, count: 100)
        #expect {
            for _ in 0...(ScratchKeyFile.bufferBytes / key.count + 1) { try keys.append(key, key.indices) }
        } throws: { error in
            let failure = error as? PipelineError
            return failure?.kind == .writeFailed && failure?.detail.contains("/dev/full-test") == true
        }
    }

    @Test("the scratch directory of send is the result file's directory, the temporary one for standard output")
    func scratchDirectoryOfSend() {
        #expect(DuplicateFilter.scratchDirectory(forResults: "out/results.ndjson") == "out")
        #expect(DuplicateFilter.scratchDirectory(forResults: "results.ndjson") == ".")
        #expect(DuplicateFilter.scratchDirectory(forResults: "/results.ndjson") == "/")
        #expect(DuplicateFilter.scratchDirectory(forResults: "/a/b/r.csv") == "/a/b")
        #expect(DuplicateFilter.scratchDirectory(forResults: "-") == DuplicateFilter.temporaryDirectory)
    }
}

extension FingerprintTable {
    /// One lookup and insert as the filter makes them: stores the pair hashed to `hash` at `location` unless a cell
    /// with its fingerprint passes `isStored`; true when it was stored (a new pair).
    mutating func insert(hash: UInt64, location: UInt64, isStored: (UInt64) throws -> Bool) rethrows -> Bool {
        var probe = probe(hash: hash)
        while let stored = nextCandidate(&probe) {
            if try isStored(stored) { return false }
        }
        insert(location: location, at: probe)
        return true
    }
}
