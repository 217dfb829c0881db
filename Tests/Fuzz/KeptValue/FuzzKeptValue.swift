import APNSCore
import FuzzDriver
import Glibc
import PipelineTestSupport

@testable import APNSPipeline

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzKeptValue))

/// libFuzzer target for how a kept value (user data) is written (`KeptValues`, `JSONText.appendStringContents`,
/// `CSVText.appendUserCell`): the input, as text, is the value of a kept field of a result line written as NDJSON
/// and as CSV, and of a prune row in both formats. No output holds a raw control character (C0 but the line
/// feed, DEL, C1, separators, bidi controls); the NDJSON line reads back with exactly the value; the CSV line reads
/// back with its neutralised form (`'` before a formula's first character, controls escaped as `PrintableText`
/// does), which written and read again stays the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeptValue(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let value = String(decoding: bytes, as: UTF8.self)
    let kept = KeptValues(names: ["user_id", "device_id"], values: [value, "d"])
    var record = ResultRecord(
        key: RecordKey(fileIndex: 0, line: 1), outcome: .prune, token: String(repeating: "ab", count: 32),
        topic: "com.example.app", status: 410, reason: "Unregistered", timestamp: 1_767_225_600_123, attempts: 1)
    record.kept = kept

    let neutralised =
        (value.utf8.first.map(CSVText.formulaStarts.contains) == true ? "'" : "") + PrintableText.escaping(value)
    for format in ResultFormat.allCases {
        let written = write([record], format)
        checkPrintable(written, "\(format) result line")
        guard
            let reader = try? ResultReader(
                source: MemoryByteSource(written, chunkSize: 1 + bytes.count % 7), name: "fuzz"),
            let read = try? reader.next()
        else {
            preconditionFailure(
                "a \(format) result line does not read back: \(String(decoding: written, as: UTF8.self))")
        }
        switch format {
        case .ndjson:
            precondition(
                read == record, "NDJSON kept value read back differs: \(String(decoding: written, as: UTF8.self))")
        case .csv:
            precondition(
                read.kept?.values == [neutralised, "d"],
                "CSV kept value \(String(describing: read.kept)) is not \(neutralised)")
            let again = write([read], .csv)
            guard let rereader = try? ResultReader(source: MemoryByteSource(again), name: "fuzz"),
                let reread = try? rereader.next()
            else { preconditionFailure("a CSV line written again does not read back") }
            precondition(reread.kept == read.kept, "a neutralised value written again changed")
        }
    }

    var list = PruneList()
    list.add(record)
    for format in PruneList.OutputFormat.allCases {
        let sink = MemoryByteSink()
        guard (try? PruneList.write(list.entries, format: format, to: sink)) != nil else {
            preconditionFailure("prune write")
        }
        checkPrintable(sink.bytes, "\(format) prune row")
        if format == .ndjson {
            let line = sink.bytes.dropLast()  // its line feed
            let scanner = JSONScanner(Array(line))
            guard let object = try? scanner.scanDocument(in: 0..<line.count) else {
                preconditionFailure("prune NDJSON row is not JSON")
            }
            var found: String?
            scanner.forEachMember(of: object) { key, member in
                if scanner.decodeString(key) == "user_id" { found = scanner.decodeStringExactly(member) }
            }
            precondition(found == value, "prune NDJSON user_id \(String(describing: found)) is not the value")
        }
    }
    return 0
}

private func write(_ records: [ResultRecord], _ format: ResultFormat) -> [UInt8] {
    let sink = MemoryByteSink()
    let writer = ResultWriter(
        sink: sink, format: format, inputFiles: InputFileList(["c.ndjson"]), keptNames: ["user_id", "device_id"])
    for record in records { guard (try? writer.write(record)) != nil else { preconditionFailure("write") } }
    guard (try? writer.flush()) != nil else { preconditionFailure("flush") }
    return sink.bytes
}

private func checkPrintable(_ bytes: [UInt8], _ what: String) {
    for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars where scalar != "\n" {
        precondition(!PrintableText.needsEscaping(scalar), "\(what) holds U+\(String(scalar.value, radix: 16)) raw")
    }
}
