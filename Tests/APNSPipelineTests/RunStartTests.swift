import APNSCore
import Foundation
import Glibc
import PipelineTestSupport
import Synchronization
import Testing

@testable import APNSPipeline

/// Running again, without I/O where it can be: `RunStart`'s table, `CampaignIdentity`'s differences, the campaign
/// record's round trip and redaction, replay overrides, and the reader's start-up checks.
@Suite("running again: the decision, the identity, the record")
struct RunStartTests {
    typealias Support = PipelineTestSupport

    static let identity = CampaignIdentity(
        command: "send", inputs: [.init(path: "c.ndjson", fingerprint: "aa")],
        settings: ["--topic": "com.example.app", "--push-type": "alert"])

    static func manifest(_ state: CampaignManifest.State, identity: CampaignIdentity = identity) -> CampaignManifest {
        var manifest = CampaignManifest(identity: identity, arguments: ["send", "c.ndjson"], startedAt: 1)
        manifest.state = state
        return manifest
    }

    static func decide(
        manifest: CampaignManifest?, results: Bool = true, lines: Bool = true, journal: Bool = false,
        identity: CampaignIdentity = identity, resume: Bool = false, overwrite: Bool = false
    ) throws(PipelineError) -> RunStart {
        let facts = RunStart.Facts(
            manifest: manifest, resultsExist: results, resultsHoldLines: lines, journalHoldsEntries: journal)
        return try RunStart.decide(
            facts, resultsPath: "r.ndjson", identity: identity, resume: resume, overwrite: overwrite)
    }

    @Test("the table: nothing there runs; finished does nothing; unfinished continues; another campaign is refused")
    func decisions() throws {
        #expect(try Self.decide(manifest: nil, results: false, lines: false) == .fresh)
        #expect(try Self.decide(manifest: Self.manifest(.finished)) == .alreadyFinished(Self.manifest(.finished)))
        #expect(
            try Self.decide(manifest: Self.manifest(.finished), resume: true)
                == .alreadyFinished(Self.manifest(.finished)))
        #expect(try Self.decide(manifest: Self.manifest(.unfinished), journal: true) == .continueUnfinished)
        #expect(
            try Self.decide(manifest: Self.manifest(.unfinished), lines: false, journal: true) == .continueUnfinished)
        #expect(
            try Self.decide(manifest: Self.manifest(.unfinished), lines: false) == .fresh,
            "a record of a run that never sent")
        for state in [CampaignManifest.State.finished, .unfinished] {
            #expect(try Self.decide(manifest: Self.manifest(state), overwrite: true) == .fresh)
            var other = Self.identity
            other.settings["--priority"] = "5"
            let error = #expect(throws: PipelineError.self) {
                try Self.decide(manifest: Self.manifest(state), identity: other)
            }
            #expect(
                error?.kind == .campaignChanged && error?.detail.contains("--priority: 5 now, not given before") == true
            )
        }
    }

    @Test("a stopped campaign continues; the setting that stopped it may change, no other; a replayed one is finished")
    func stoppedDecisions() throws {
        func stopped(_ why: String, replayedInto: String? = nil, legacy: Bool = false) -> CampaignManifest {
            var manifest = Self.manifest(legacy ? .finished : .stopped)
            manifest.stoppedEarly = why
            manifest.replayedInto = replayedInto
            return manifest
        }
        let topicStop = stopped("TopicDisallowed on 5 requests in a row")
        #expect(try Self.decide(manifest: topicStop) == .continueStopped(topicStop))
        let legacy = stopped("BadTopic on 5 requests in a row", legacy: true)
        #expect(try Self.decide(manifest: legacy) == .continueStopped(legacy), "a record from before the stopped state")
        var fixedTopic = Self.identity
        fixedTopic.settings["--topic"] = "com.example.right"
        #expect(try Self.decide(manifest: topicStop, identity: fixedTopic) == .continueStopped(topicStop))
        var fixedPushType = Self.identity
        fixedPushType.settings["--push-type"] = "background"
        let refused = #expect(throws: PipelineError.self) {
            try Self.decide(manifest: topicStop, identity: fixedPushType)
        }
        #expect(refused?.kind == .campaignChanged && refused?.detail.contains("a stopped campaign") == true)
        let pushStop = stopped("InvalidPushType on 5 requests in a row")
        #expect(try Self.decide(manifest: pushStop, identity: fixedPushType) == .continueStopped(pushStop))
        let environment = stopped(
            TokenRejectionCheck.stopReason(reason: "BadDeviceToken", topic: "com.example.app", count: 20))
        #expect(throws: PipelineError.self) { try Self.decide(manifest: environment, identity: fixedTopic) }
        let replayed = stopped("BadTopic on 5 requests in a row", replayedInto: "fixed.ndjson")
        #expect(try Self.decide(manifest: replayed) == .alreadyFinished(replayed))
        let gone = #expect(throws: PipelineError.self) {
            try Self.decide(manifest: topicStop, results: false, lines: false)
        }
        #expect(gone?.detail.contains("stopped early") == true && gone?.detail.contains("is gone") == true)
        #expect(
            StoppedCampaign.Cause(
                reason: "DeviceTokenNotForTopic for every token of topic a (20 answers, none accepted)") == .topic)
        #expect(StoppedCampaign.Cause(reason: "transport failed: TLS handshake") == .transport)
        #expect(StoppedCampaign.Cause(reason: "ExpiredProviderToken on 5 requests in a row") == .credentials)
    }

    @Test("without a campaign record: a journal asks for --resume, result lines alone ask for --resume or --overwrite")
    func withoutRecord() throws {
        let journal = #expect(throws: PipelineError.self) { try Self.decide(manifest: nil, journal: true) }
        #expect(journal?.kind == .unfinishedRun)
        let lines = #expect(throws: PipelineError.self) { try Self.decide(manifest: nil) }
        #expect(lines?.kind == .campaignChanged && lines?.detail.contains("--overwrite") == true)
        #expect(try Self.decide(manifest: nil, resume: true) == .continueUnfinished)
        #expect(
            try Self.decide(manifest: nil, results: false, lines: false, resume: true) == .fresh,
            "--resume with nothing to continue starts")
        #expect(try Self.decide(manifest: nil, overwrite: true) == .fresh)
        let gone = #expect(throws: PipelineError.self) {
            try Self.decide(manifest: Self.manifest(.finished), results: false, lines: false)
        }
        #expect(gone?.detail.contains("is gone") == true)
    }

    @Test("identity: inputs compare by content, not path; standard input by name; every setting by value")
    func identityDifferences() {
        var moved = Self.identity
        moved.inputs = [.init(path: "/elsewhere/c.ndjson", fingerprint: "aa")]
        #expect(moved.differences(from: Self.identity).isEmpty)
        var changed = Self.identity
        changed.inputs = [.init(path: "c.ndjson", fingerprint: "bb")]
        #expect(changed.differences(from: Self.identity) == ["the input c.ndjson has changed since the earlier run"])
        let stdin = CampaignIdentity(command: "send", inputs: [.init(path: "-", fingerprint: nil)], settings: [:])
        #expect(stdin.differences(from: stdin).isEmpty)
        var flags = Self.identity
        flags.settings["--allow-duplicates"] = ""
        flags.settings["--topic"] = nil
        #expect(
            flags.differences(from: Self.identity) == [
                "--allow-duplicates: given now, not given before", "--topic: not given now, com.example.app before",
            ])
        var replay = Self.identity
        replay.command = "replay"
        #expect(replay.differences(from: Self.identity).first?.contains("send") == true)
    }

    @Test("a stream (a FIFO, /dev/null) is an input read once: not opened to be fingerprinted, not opened ahead")
    func streamsAreNotReadAhead() throws {
        let directory = try Support.temporaryDirectory()
        let fifo = directory.appendingPathComponent("campaign.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let file = try Support.write("{}\n", to: "c.ndjson", in: directory)
        #expect(CampaignInput(path: "-").isStream && CampaignInput(path: fifo).isStream)
        #expect(CampaignInput(path: "/dev/null").isStream)
        #expect(!CampaignInput(path: file).isStream && !CampaignInput(path: directory.path).isStream)

        // Opening a FIFO nobody writes to waits for a writer: reading it for a fingerprint would hang here, and with
        // a writer it would use up the campaign before the run reads it.
        let done = DispatchSemaphore(value: 0)
        let fingerprint = Mutex<String??>(nil)
        Thread.detachNewThread {
            let input = try? CampaignIdentity.Input.reading(fifo)
            fingerprint.withLock { $0 = .some(input?.fingerprint) }
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success else {
            Issue.record("the FIFO was opened to be fingerprinted")
            return
        }
        #expect(fingerprint.withLock { $0 } == .some(nil), "a stream has no fingerprint")
        #expect(try CampaignIdentity.Input.reading(file).fingerprint != nil)
    }

    @Test("the campaign record round-trips through its file, replaces it whole, and keeps no proxy password")
    func manifestFile() throws {
        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("r.ndjson").path
        #expect(try CampaignManifest.read(forResults: results) == nil)
        var manifest = CampaignManifest(
            identity: Self.identity,
            arguments: [
                "send", "c.ndjson", "--proxy", "http://user:secret@proxy:3128",
                "--proxy=http://u:p@h:1", "--topic", "it's",
            ], startedAt: 12)
        try manifest.write(forResults: results)
        #expect(try CampaignManifest.read(forResults: results) == manifest)
        #expect(manifest.arguments[3] == "http://proxy:3128" && manifest.arguments[4] == "--proxy=http://h:1")
        #expect(
            manifest.command
                == "apns-bulk send c.ndjson --proxy http://proxy:3128 --proxy=http://h:1 --topic 'it'\\''s'")
        manifest.state = .finished
        manifest.stoppedEarly = "TopicDisallowed on 5 requests in a row"
        try manifest.write(forResults: results)
        #expect(try CampaignManifest.read(forResults: results)?.state == .finished)
        let path = CampaignManifest.path(forResults: results)
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
        #expect(mode & 0o077 == 0, "readable by others: \(String(mode, radix: 8))")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains(".tmp-")
        }
        #expect(leftovers.isEmpty)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: PipelineError.self) { try CampaignManifest.read(forResults: results) }
    }

    @Test("prepareToStart: an empty campaign, no topic anywhere, a directory; the records read ahead come first")
    func readerStartChecks() throws {
        let directory = try Support.temporaryDirectory()
        func reader(_ text: String, topic: String? = "com.example.app", name: String = "c.ndjson") throws
            -> CampaignReader
        {
            let path = directory.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let defaults = CampaignDefaults(topic: try topic.map { try Topic(validating: $0) })
            return CampaignReader(
                inputs: [CampaignInput(path: path)], options: CampaignReaderOptions(defaults: defaults))
        }
        let empty = #expect(throws: PipelineError.self) { try reader("\n \n").prepareToStart() }
        #expect(empty?.kind == .campaignEmpty)
        let line = #"{"token":"\#(Support.token(1))","payload":{"aps":{"alert":"x"}}}"#
        let noTopic = #expect(throws: PipelineError.self) {
            try reader(line + "\n" + line + "\n", topic: nil).prepareToStart()
        }
        #expect(noTopic?.kind == .campaignSettingMissing && noTopic?.detail.contains("--topic") == true)
        // One record with its own topic is enough to start; the ones before it are still reported.
        let mixed = try reader(
            line + "\n" + #"{"token":"\#(Support.token(2))","topic":"com.example.app","payload":{"aps":{"alert":"x"}}}"#
                + "\n" + line + "\n", topic: nil)
        try mixed.prepareToStart()
        var keys: [Int] = []
        var errors: [InputError.Code?] = []
        while let record = try mixed.nextRecord() {
            keys.append(record.key.line)
            errors.append(record.error?.code)
        }
        #expect(keys == [1, 2, 3] && errors == [.topicMissing, nil, .topicMissing])
        let folder = directory.appendingPathComponent("folder.ndjson").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let directoryError = #expect(throws: PipelineError.self) {
            try CampaignReader(
                inputs: [CampaignInput(path: folder)], options: CampaignReaderOptions(defaults: CampaignDefaults())
            )
            .prepareToStart()
        }
        #expect(directoryError?.detail.contains("is a directory") == true)
    }

    @Test("replay overrides: a new topic on every record, and the requests APNs rejected for their topic come back")
    func replayOverrides() throws {
        let directory = try Support.temporaryDirectory()
        let path = directory.appendingPathComponent("stopped.ndjson").path
        let writer = try ResultWriter(
            path: path, format: .ndjson, mode: .create, inputFiles: InputFileList(["c.ndjson"]))
        func notification(_ index: Int) throws -> PushNotification {
            PushNotification(
                token: try DeviceToken(parsing: Support.token(index)), topic: try Topic(validating: "com.wrong.app"),
                pushType: .alert, payload: Array(#"{"aps":{"alert":"x"}}"#.utf8))
        }
        try writer.write(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 1), outcome: .inputError, status: 400,
                reason: "TopicDisallowed", attempts: 1, notification: try notification(1)))
        try writer.write(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 2), outcome: .inputError, status: 400,
                reason: "BadCollapseId", attempts: 1, notification: try notification(2)))
        try writer.write(
            ResultRecord(key: RecordKey(fileIndex: 0, line: 3), outcome: .notSent, notification: try notification(3)))
        try writer.write(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 4), outcome: .inputError, reason: "TopicMissing",
                detail: "no topic", attempts: 0))
        try writer.flush()

        func replayed(_ overrides: ReplayReader.Overrides) throws -> [(Int, String)] {
            let reader = try ReplayReader(resultPaths: [path], includeInDoubt: true, overrides: overrides)
            var out: [(Int, String)] = []
            while let record = try reader.nextRecord() {
                out.append((record.key.line, record.notification?.topic.value ?? "invalid"))
            }
            return out
        }
        #expect(try replayed(ReplayReader.Overrides()).map(\.0) == [3])
        let fixed = try replayed(ReplayReader.Overrides(topic: try Topic(validating: "com.example.app")))
        #expect(fixed.map(\.0) == [1, 3] && fixed.allSatisfy { $0.1 == "com.example.app" }, "\(fixed)")
    }

    @Test("content fingerprints: the same bytes however they are read, another for any change, length included")
    func fingerprints() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        func hex(_ chunks: [Int]) -> String {
            var fingerprint = ContentFingerprint()
            var start = 0
            for size in chunks {
                let chunk = Array(bytes[start..<min(bytes.count, start + size)])
                fingerprint.add(chunk + [9, 9], count: chunk.count)  // bytes past `count` are not read
                start += size
            }
            return fingerprint.hex
        }
        let whole = hex([5000])
        #expect(whole.count == 32)
        for split in [[1, 4999], [15, 17, 4968], [16, 16, 4968], [7, 3, 2000, 2990]] {
            #expect(hex(split) == whole, "\(split)")
        }
        var seen: Set<String> = [whole]
        for index in [0, 15, 16, 2500, 4999] {
            var changed = bytes
            changed[index] ^= 1
            var fingerprint = ContentFingerprint()
            fingerprint.add(changed, count: changed.count)
            #expect(seen.insert(fingerprint.hex).inserted, "a flipped bit at \(index) went unseen")
        }
        for extra in 1...17 {
            var fingerprint = ContentFingerprint()
            fingerprint.add(bytes + [UInt8](repeating: 0, count: extra), count: bytes.count + extra)
            #expect(seen.insert(fingerprint.hex).inserted, "\(extra) zero bytes more went unseen")
        }
        #expect(ContentFingerprint().hex != hex([1]))
        let directory = try Support.temporaryDirectory()
        let path = directory.appendingPathComponent("c.ndjson").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try ContentFingerprint.hex(ofFileAtPath: path) == whole)
    }
}
