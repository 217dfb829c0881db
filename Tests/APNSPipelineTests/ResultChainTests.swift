import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

/// `ResultChain`: which result files form a chain (a replay names the files it replays), and which line of a record
/// stands among them.
@Suite("Result chain")
struct ResultChainTests {
    typealias Support = PipelineTestSupport

    private func send(_ path: String, startedAt: Double) -> ResultChain.File {
        ResultChain.File(
            path: path,
            identity: CampaignIdentity(
                command: "send", inputs: [.init(path: "c.ndjson", fingerprint: "c")],
                settings: [:]), startedAt: startedAt)
    }

    private func replay(_ path: String, of inputs: [String], startedAt: Double) -> ResultChain.File {
        ResultChain.File(
            path: path,
            identity: CampaignIdentity(
                command: "replay", inputs: inputs.map { .init(path: $0, fingerprint: "print of \($0)") }, settings: [:]),
            startedAt: startedAt)
    }

    private func key(_ line: Int) -> RecordKey { RecordKey(fileIndex: 0, line: line) }

    /// r1 (a send), r2 (replays r1), r3 (replays r1 and r2): each line a record's outcome in r1, r2, r3 (nil: no line).
    private let lines: [(Int, RecordOutcome?, RecordOutcome?, RecordOutcome?)] = [
        (1, .retryable, .delivered, nil),  // the 131-twice bug: r3 must not send it again
        (2, .retryable, .retryable, .delivered),
        (3, .inDoubt, .retryable, nil),  // the latest line says what is left
        (4, .delivered, nil, nil),
        (5, .inputError, .delivered, nil),  // BadTopic, then replay --topic delivered it
        (6, .retryable, .delivered, .retryable),  // out of order: delivered anywhere stands
        (7, .retryable, .prune, nil),
        (8, .inputError, .retryable, nil),  // BadTopic, then replay --topic answered 500: left to replay again
    ]

    /// The file (0, 1, 2 for r1, r2, r3) whose line stands, per line number, with the files given in `order`.
    private func standing(order: [Int]) -> [Int: Int] {
        let all = [
            send("r1", startedAt: 10), replay("r2", of: ["r1"], startedAt: 20),
            replay("r3", of: ["r1", "r2"], startedAt: 30),
        ]
        var chain = ResultChain(files: order.map { all[$0] })
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        for file in chain.readingOrder {
            let original = order[file]
            for line in lines {
                let outcome = [line.1, line.2, line.3][original]
                if let outcome { chain.offer(key(line.0), outcome: outcome, file: file) }
            }
        }
        var result: [Int: Int] = [:]
        for line in lines {
            let holders = [line.1, line.2, line.3].indices.filter { [line.1, line.2, line.3][$0] != nil }
            let standing = holders.filter { chain.stands(key(line.0), file: position[$0]!) }
            #expect(standing.count == 1, "line \(line.0): \(standing.count) lines stand")
            result[line.0] = standing.first
        }
        return result
    }

    @Test(
        "a delivered line stands wherever it is; otherwise the latest file's line, whatever order the files are given in"
    )
    func latestOutcomeWins() {
        let expected = [1: 1, 2: 2, 3: 1, 4: 0, 5: 1, 6: 1, 7: 1, 8: 1]
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            #expect(standing(order: order) == expected, "files given as \(order)")
        }
    }

    @Test("a replay is later than the files it replays, and deeper; files no replay joins stand alone")
    func chainsAndDepth() {
        let chain = ResultChain(files: [
            replay("r3", of: ["r1", "r2"], startedAt: 1),  // a clock set back: the replay still comes after its inputs
            send("r1", startedAt: 10), replay("r2", of: ["r1"], startedAt: 20), send("other", startedAt: 15),
        ])
        #expect(chain.depth == [2, 0, 1, 0])
        #expect(chain.chain == [0, 0, 0, 3])
        #expect(chain.rank[0] > chain.rank[2] && chain.rank[2] > chain.rank[1])
        #expect(chain.isChained(0) && !chain.isChained(3))
        #expect(chain.readingOrder == [0, 2, 1])
        // Unchained files keep every line: the same key in two campaigns of one input counts in each.
        var alone = ResultChain(files: [send("a", startedAt: 1), send("b", startedAt: 2)])
        alone.offer(key(1), outcome: .delivered, file: 1)
        alone.offer(key(1), outcome: .retryable, file: 0)
        #expect(alone.stands(key(1), file: 0) && alone.stands(key(1), file: 1))
    }

    @Test("a replay's input named by another path is matched by its content; two replays of one file by their start")
    func matchedByContentAndSiblingsByStart() {
        var moved = send("/srv/results/r1", startedAt: 10)
        moved.fingerprint = "print of r1"
        var chain = ResultChain(files: [
            replay("r2b", of: ["r1"], startedAt: 40), moved, replay("r2a", of: ["r1"], startedAt: 30),
        ])
        #expect(chain.chain == [0, 0, 0])
        for file in chain.readingOrder {
            chain.offer(key(1), outcome: file == 1 ? .retryable : .inDoubt, file: file)
            chain.offer(key(2), outcome: file == 2 ? .delivered : .retryable, file: file)
        }
        #expect(chain.stands(key(1), file: 0) && !chain.stands(key(1), file: 2) && !chain.stands(key(1), file: 1))
        #expect(chain.stands(key(2), file: 2) && !chain.stands(key(2), file: 0))
    }

    @Test("replay, report and prune read a campaign and its replay as one chain")
    func readFromFiles() throws {
        let directory = try Support.temporaryDirectory()
        let first = directory.appendingPathComponent("r1.ndjson").path
        let second = directory.appendingPathComponent("r2.ndjson").path
        let payload: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        func notification(_ line: Int) throws -> PushNotification {
            PushNotification(
                token: try DeviceToken(parsing: Support.token(line)), topic: try Topic(validating: "com.example"),
                pushType: .alert, priority: nil, expiration: nil, collapseID: nil, apnsID: nil, payload: payload)
        }
        func write(_ path: String, _ outcomes: [(Int, RecordOutcome)]) throws {
            let writer = try ResultWriter(
                path: path, format: .ndjson, mode: .create, inputFiles: InputFileList(["c.ndjson"]))
            for (line, outcome) in outcomes {
                try writer.write(
                    ResultRecord(
                        key: key(line), outcome: outcome, status: outcome == .delivered ? 200 : 500,
                        reason: outcome == .prune ? "Unregistered" : nil, attempts: 1,
                        notification: try notification(line)))
            }
            try writer.flush()
        }
        try write(first, [(1, .delivered), (2, .retryable), (3, .retryable), (4, .retryable)])
        try write(second, [(2, .delivered), (3, .retryable), (4, .prune)])
        try CampaignManifest(
            identity: CampaignIdentity(
                command: "send", inputs: [.init(path: "c.ndjson", fingerprint: "c")], settings: [:]),
            arguments: [], startedAt: 10
        ).write(forResults: first)
        // The replay named its input by another path (run from another folder): joined by the file's content.
        let input = CampaignIdentity.Input(
            path: "elsewhere/r1.ndjson", fingerprint: try CampaignIdentity.Input.reading(first).fingerprint)
        try CampaignManifest(
            identity: CampaignIdentity(command: "replay", inputs: [input], settings: [:]),
            arguments: [], startedAt: 20
        ).write(forResults: second)

        for paths in [[first, second], [second, first]] {
            let reader = try ReplayReader(resultPaths: paths, includeInDoubt: true)
            var replayed: [Int] = []
            while let record = try reader.nextRecord() { replayed.append(record.key.line) }
            #expect(replayed == [3], "replaying \(paths.map { ($0 as NSString).lastPathComponent })")

            var report = CampaignReport()
            try report.addResults(atPaths: paths)
            #expect(
                report.records == 4 && report.count(.delivered) == 2 && report.count(.retryable) == 1
                    && report.tokensToPrune == 1)
            let names = paths.map { ($0 as NSString).lastPathComponent == "r1.ndjson" ? "r1" : "r2" }
            #expect(
                report.replayCommand()?.contains(paths.joined(separator: " ")) == true,
                "\(names): \(report.replayCommand() ?? "")")

            var prune = PruneList()
            try prune.add(resultsAt: paths)
            #expect(prune.entries.map(\.token) == [Support.token(4)])
        }
        // Without the campaign records, nothing joins the files: each line counts, as for shards.
        POSIXFile.remove(CampaignManifest.path(forResults: second))
        var report = CampaignReport()
        try report.addResults(atPaths: [first, second])
        #expect(report.records == 7)
    }

    @Test("the report's replay writes to a name no result file read has")
    func replayResultsName() {
        var report = CampaignReport()
        report.add(ResultRecord(key: key(1), outcome: .retryable, status: 500), resultFile: "out/replay.ndjson")
        report.addResultFile("results.ndjson")
        #expect(report.replayResults == "replay-2.ndjson")
        report.addResultFile("replay-2.ndjson")
        #expect(report.replayCommand() == "apns-bulk replay out/replay.ndjson --results replay-3.ndjson")
    }
}
