import FuzzDriver
import Glibc
import PipelineTestSupport

@testable import APNSPipeline

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzResultLine))

/// libFuzzer target for the result-line parser (`ResultRecord.swift`, "Parsing", through `ResultReader`, NDJSON or CSV by
/// the first byte): reading never crashes, and every record read, written again as an NDJSON line, reads back
/// equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResultLine(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let chunkSize = bytes.count % 2 == 0 ? max(1, bytes.count) : 1 + bytes.count % 13
    guard let reader = try? ResultReader(source: MemoryByteSource(bytes, chunkSize: chunkSize), name: "fuzz") else {
        return 0
    }
    while true {
        guard let record = try? reader.next() else { return 0 }
        var line: [UInt8] = []
        record.appendNDJSON(file: reader.inputFiles.path(at: record.key.fileIndex), to: &line)
        var files = reader.inputFiles
        guard let again = try? ResultRecord(ndjson: line, range: 0..<(line.count - 1), inputFiles: &files) else {
            preconditionFailure("a record read does not read back: \(String(decoding: line, as: UTF8.self))")
        }
        precondition(again == record, "a record read back differs: \(String(decoding: line, as: UTF8.self))")
    }
}
