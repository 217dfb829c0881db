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

    @Test("with 0- and 2-bit fingerprints every lookup collides: distinct pairs are all new, true copies all duplicates",
          arguments: [0, 2])
    func forcedCollisions(fingerprintBits: Int) throws {
        var filter = DuplicateFilter(
            scratchDirectory: try Support.temporaryDirectory().path, fingerprintBits: fingerprintBits)
        let topics = try ["com.example.app", "com.example.app.voip", "com.example.other"].map { try Topic(validating: $0) }
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
                        #expect(Array(bytes[1...length]) == expected && bytes[0] == 0xEE && bytes[length + 1] == 0xEE,
                                "\(String(decoding: hex, as: UTF8.self))")
                    }
                }
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

    @Test("the table keeps every entry across many growth steps, with colliding and distinct fingerprints",
          arguments: [0, 3, 24])
    func growth(fingerprintBits: Int) throws {
        var table = FingerprintTable(fingerprintBits: fingerprintBits)
        let count = fingerprintBits == 0 ? 3_000 : 60_000  // all in one probe run with no fingerprint: keep it small
        // Without a fingerprint, all in segment 0 (top byte 0), so that one segment grows from 16 cells in ~60 steps.
        let hashes = (0..<count).map { StableHash.mix(UInt64($0) &+ 1) >> (fingerprintBits == 0 ? 8 : 0) }
        let startBytes = table.memoryBytes
        for (index, hash) in hashes.enumerated() {
            let stored = try table.insert(hash: hash, location: UInt64(index) + 1) { hashes[Int($0) - 1] == hash }
            #expect(stored, "entry \(index)")
        }
        #expect(table.memoryBytes - startBytes >= count * 8, "the table grew to hold every entry")
        #expect(table.count == count)
        var found = 0
        for (index, hash) in hashes.enumerated() {
            if try !table.insert(hash: hash, location: UInt64(count + index) + 1, isStored: { hashes[Int($0) - 1] == hash }) {
                found += 1
            }
        }
        #expect(found == count)
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
        let key = [UInt8](repeating: 7, count: 100)[...]
        #expect {
            for _ in 0...(ScratchKeyFile.bufferBytes / key.count + 1) { _ = try keys.append(key) }
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
