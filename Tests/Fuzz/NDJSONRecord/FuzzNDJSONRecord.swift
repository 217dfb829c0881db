import APNSCore
import APNSPipeline
import FuzzDriver
import Glibc
import PipelineTestSupport

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzNDJSONRecord))

/// libFuzzer target for the NDJSON campaign reader: lines (in chunks whose size comes from the input's length,
/// some too long) through `NDJSONRecordParser` with a payload template, so `vars` records are filled too. Every
/// line that is not blank becomes exactly one record, valid or not.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNDJSONRecord(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let chunkSize = bytes.count % 2 == 0 ? max(1, bytes.count) : 1 + bytes.count % 13
    let lines = LineReader(source: MemoryByteSource(bytes, chunkSize: chunkSize), maximumLineLength: 512)
    var parser = NDJSONRecordParser(defaults: FuzzNDJSONRecordSetup.defaults, template: FuzzNDJSONRecordSetup.template)
    do {
        while let line = try lines.next() {
            guard !line.isTooLong else { continue }
            let record = parser.parse(lines.buffer, range: line.range, key: RecordKey(fileIndex: 0, line: line.number))
            precondition(record.key.line == line.number)
            precondition((record.notification == nil) != (record.error == nil), "a record is neither valid nor invalid")
        }
    } catch {
        preconditionFailure("reading memory failed: \(error)")
    }
    return 0
}

/// The campaign settings every input is read with.
enum FuzzNDJSONRecordSetup {
    static let defaults = CampaignDefaults(topic: try? Topic(validating: "com.example.app"))
    static let template = try? PayloadTemplate(
        bytes: Array(#"{"aps":{"alert":"Hi {{name}}","badge":{{badge}}},"extra":{{extra}}}"#.utf8))
}
