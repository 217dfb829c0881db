import APNSCore
import Testing

@testable import APNSPipeline

@Suite("Duplicate filter and shards")
struct DuplicateAndShardTests {
    typealias Support = PipelineTestSupport

    private func token(_ index: Int) throws -> DeviceToken { try DeviceToken(parsing: Support.token(index)) }

    @Test(
        "a (token, topic) pair is new once; the same token with another topic is new; case and grouping do not matter")
    func duplicates() throws {
        var filter = DuplicateFilter(scratchDirectory: try Support.temporaryDirectory().path)
        let topic = Support.defaultTopic
        let other = try Topic(validating: "com.example.app.voip")
        let first = try filter.insert(token: try token(1), topic: topic)
        let copy = try filter.insert(token: try token(1), topic: topic)
        let otherTopic = try filter.insert(token: try token(1), topic: other)
        #expect(first && !copy && otherTopic)
        let grouped =
            "<"
            + Support.token(2).uppercased().enumerated().map {
                $0.offset > 0 && $0.offset % 8 == 0 ? " \($0.element)" : "\($0.element)"
            }.joined() + ">"
        let second = try filter.insert(token: try token(2), topic: topic)
        let groupedCopy = try filter.insert(token: try DeviceToken(parsing: grouped), topic: topic)
        #expect(second && !groupedCopy)
        #expect(filter.count == 3)
    }

    @Test("50k distinct pairs are all new, all their copies are duplicates, at 8 to 10 bytes a pair above the base")
    func manyPairs() throws {
        var filter = DuplicateFilter(scratchDirectory: try Support.temporaryDirectory().path)
        var empty = DuplicateFilter(scratchDirectory: try Support.temporaryDirectory().path)
        _ = try empty.insert(token: try token(0), topic: Support.defaultTopic)
        let base = empty.memoryBytes  // the flat base: the smallest table and the scratch file's write buffer
        let topic = Support.defaultTopic
        let tokens = try (0..<50_000).map { try token($0) }
        var new = 0
        for token in tokens where try filter.insert(token: token, topic: topic) { new += 1 }
        #expect(new == tokens.count)
        var seenAgain = 0
        for token in tokens where try !filter.insert(token: token, topic: topic) { seenAgain += 1 }
        #expect(seenAgain == tokens.count)
        #expect(filter.count == 50_000)
        #expect(filter.memoryBytes - base <= 50_000 * 10)
        #expect(filter.memoryBytes >= 50_000 * 8)
    }

    @Test("the pair hash is stable: fixed values that must never change between versions")
    func stableHashes() throws {
        #expect(StableHash.fnv1a(Array("".utf8)) == 0xCBF2_9CE4_8422_2325)
        #expect(StableHash.fnv1a(Array("a".utf8)) == 0xAF63_DC4C_8601_EC8C)
        #expect(StableHash.fnv1a(Array("foobar".utf8)) == 0x8594_4171_F739_67E8)
        let token = try DeviceToken(parsing: String(repeating: "ab", count: 32))
        #expect(ShardSelector.shard(of: token, count: 7) == Int(StableHash.mix(StableHash.fnv1a(token.hex.utf8)) % 7))
        #expect(ShardSelector.shard(of: token, count: 1) == 0)
    }

    @Test("K/N parsing: 0-based K, 0 <= K < N", arguments: [("0/1", 0, 1), ("2/3", 2, 3), (" 6 / 7 ", 6, 7)])
    func parsing(spec: String, index: Int, count: Int) throws {
        let shard = try ShardSelector(parsing: spec)
        #expect(shard.index == index && shard.count == count)
    }

    @Test("invalid shard specs are rejected", arguments: ["3/3", "-1/3", "1/0", "1", "a/b", "1/2/3", ""])
    func invalidSpecs(spec: String) {
        #expect(throws: PipelineError.self) { try ShardSelector(parsing: spec) }
    }

    @Test("10k tokens over 7 shards: every token in exactly one shard, balanced within 15%")
    func coverageAndBalance() throws {
        let shards = try (0..<7).map { try ShardSelector(index: $0, count: 7) }
        var sizes = [Int](repeating: 0, count: 7)
        for index in 0..<10_000 {
            let token = try token(index)
            let owners = shards.filter { $0.contains(token) }
            #expect(owners.count == 1)
            if let owner = owners.first { sizes[owner.index] += 1 }
        }
        #expect(sizes.reduce(0, +) == 10_000)
        let mean = 10_000.0 / 7
        #expect(sizes.allSatisfy { abs(Double($0) - mean) < mean * 0.15 }, "\(sizes)")
    }

    @Test("sharded reads of one file cover every record once, invalid ones in shard 0, copies of a token together")
    func shardedFile() throws {
        let directory = try Support.temporaryDirectory()
        var lines: [String] = []
        for index in 0..<500 {
            lines.append(#"{"token":"\#(Support.token(index % 400))","payload":{"n":\#(index)}}"#)
            if index % 50 == 0 { lines.append("garbage \(index)") }
            if index % 70 == 0 { lines.append(#"{"token":"\#(Support.token(index))","payload":[]}"#) }
        }
        let path = try Support.write(lines.joined(separator: "\n"), to: "s.ndjson", in: directory)
        let all = try Support.readAll([CampaignInput(path: path)])
        var seen: [Int: Int] = [:]
        for index in 0..<4 {
            var options = CampaignReaderOptions(defaults: Support.defaults)
            options.shard = try ShardSelector(index: index, count: 4)
            for record in try Support.readAll([CampaignInput(path: path)], options: options) {
                seen[record.key.line, default: 0] += 1
                if record.code == .recordInvalidJSON { #expect(index == 0) }
                if let token = record.notification?.token { #expect(ShardSelector.shard(of: token, count: 4) == index) }
                if record.code == .payloadNotObject, let text = record.tokenText {
                    #expect(ShardSelector.shard(of: try DeviceToken(parsing: text), count: 4) == index)
                }
            }
        }
        #expect(seen.count == all.count)
        #expect(seen.values.allSatisfy { $0 == 1 })
    }
}
