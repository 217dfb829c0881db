import APNSCore
import APNSPipeline
import FuzzDriver
import Glibc
import PipelineTestSupport

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzCSVRecord))

/// libFuzzer target for the CSV campaign reader: `CSVReader` over chunks whose size comes from the input's
/// length, its header turned into a `CSVRecordParser` (with a payload template that uses every other column, so
/// rows are filled in), then every row parsed into exactly one record, valid or not.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSVRecord(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let chunkSize = bytes.count % 2 == 0 ? max(4, bytes.count) : 4 + bytes.count % 13
    // Every third input has its delimiter detected from its header (`,` `;` or tab), the others read with commas.
    let reader = CSVReader(
        source: MemoryByteSource(bytes, chunkSize: chunkSize), maximumRecordLength: 512, chunkSize: chunkSize,
        delimiter: bytes.count % 3 == 0 ? nil : .comma)
    do {
        guard let header = try reader.next(), header.problem == nil else { return 0 }
        let names = (0..<header.fieldCount).map { reader.fieldText($0) }
        let defaults = CampaignDefaults(topic: try? Topic(validating: "com.example.app"))
        guard
            var parser = (try? CSVRecordParser(header: names, defaults: defaults, template: template(for: names)))
                ?? (try? CSVRecordParser(header: names, defaults: defaults, template: nil))
        else { return 0 }
        var previousLine = header.line
        while let row = try reader.next() {
            precondition(row.line > previousLine, "rows went backwards: line \(row.line) after \(previousLine)")
            previousLine = row.line
            let record = parser.parse(reader, record: row, fileIndex: 0)
            precondition((record.notification == nil) != (record.error == nil), "a record is neither valid nor invalid")
        }
    } catch {
        preconditionFailure("reading memory failed: \(error)")
    }
    return 0
}

/// A template with every column but the token as a variable, alternately inside and outside a string.
private func template(for names: [String]) -> PayloadTemplate? {
    var text = #"{"aps":{"alert":"hello"}"#
    for (index, name) in names.enumerated() where name.lowercased() != "token" {
        text += index % 2 == 0 ? #","v\#(index)":"{{\#(name)}}""# : #","v\#(index)":{{\#(name)}}"#
    }
    return try? PayloadTemplate(bytes: Array((text + "}").utf8))
}
