import APNSCore
import Foundation

@testable import APNSPipeline

/// Helpers shared by the pipeline's file-side tests: deterministic tokens, temporary files, fixtures.
enum PipelineTestSupport {
    /// A deterministic 32-byte token (64 lowercase hex digits) for `index`.
    static func token(_ index: Int) -> String {
        (0..<4).map { part -> String in
            let word = StableHash.mix(UInt64(truncatingIfNeeded: index) &* 4 &+ UInt64(part) &+ 0x9E37)
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    static let defaultTopic: Topic = {
        guard let topic = try? Topic(validating: "com.example.app") else { fatalError("test topic must be valid") }
        return topic
    }()

    static let defaults = CampaignDefaults(topic: defaultTopic)

    /// A fresh empty directory for one test, inside this test process's own folder under the system's temporary
    /// directory (`apns-pipeline-tests-<uuid>`), which is removed with everything in it when the process exits.
    static func temporaryDirectory() throws -> URL {
        let url = processDirectory.appendingPathComponent(UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The folder of this test process's temporary directories; created on first use, removed at exit.
    private static let processDirectory: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-pipeline-tests-\(UUID().uuidString)", isDirectory: true)
        atexit { try? FileManager.default.removeItem(at: PipelineTestSupport.processDirectory) }
        return url
    }()

    /// Writes `bytes` to `name` in `directory` and returns the path.
    @discardableResult
    static func write(_ bytes: [UInt8], to name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    @discardableResult
    static func write(_ text: String, to name: String, in directory: URL) throws -> String {
        try write(Array(text.utf8), to: name, in: directory)
    }

    /// The directory of this suite's fixture files.
    static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/pipeline", isDirectory: true)
    }

    /// Reads every record of some inputs.
    static func readAll(
        _ inputs: [CampaignInput], options: CampaignReaderOptions = CampaignReaderOptions(defaults: defaults)
    ) throws -> [CampaignRecord] {
        let reader = CampaignReader(inputs: inputs, options: options)
        var records: [CampaignRecord] = []
        while let record = try reader.nextRecord() { records.append(record) }
        return records
    }

    /// Parses one NDJSON line with a fresh parser.
    static func parseLine(
        _ text: String, defaults: CampaignDefaults = defaults, template: PayloadTemplate? = nil, line: Int = 1
    ) -> CampaignRecord {
        var parser = NDJSONRecordParser(defaults: defaults, template: template)
        let bytes = Array(text.utf8)
        return parser.parse(bytes, range: 0..<bytes.count, key: RecordKey(fileIndex: 0, line: line))
    }

    static func parseLine(bytes: [UInt8], defaults: CampaignDefaults = defaults) -> CampaignRecord {
        var parser = NDJSONRecordParser(defaults: defaults)
        return parser.parse(bytes, range: 0..<bytes.count, key: RecordKey(fileIndex: 0, line: 1))
    }

    /// All lines a reader yields, as (number, text or nil when too long, terminated).
    static func lines(of reader: LineReader) throws -> [(Int, String?, Bool)] {
        var out: [(Int, String?, Bool)] = []
        while let line = try reader.next() {
            out.append(
                (
                    line.number, line.isTooLong ? nil : String(decoding: reader.buffer[line.range], as: UTF8.self),
                    line.isTerminated
                ))
        }
        return out
    }

    /// Compresses a file with `gzip -k` (the machine has gzip, as compressed input requires) and returns the
    /// compressed file's path.
    static func gzipFile(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-k", "-f", path]
        try process.run()
        process.waitUntilExit()
        return path + ".gz"
    }
}

extension CampaignRecord {
    /// The error code, for compact expectations.
    var code: InputError.Code? { error?.code }
}
