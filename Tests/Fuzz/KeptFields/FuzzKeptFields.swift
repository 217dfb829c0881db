import APNSCore
import FuzzDriver
import Glibc

@testable import APNSPipeline

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzKeptFields))

/// libFuzzer target for taking kept fields out of a record (`KeptFields.values(ofJSONLine:range:)`, and the NDJSON
/// parser that calls it): the input is an NDJSON line, kept fields `user_id`, `device_id` and `a`. It never
/// crashes; there is one value per field; the parser's record carries exactly those values; and a line built from
/// the values (each as a JSON string) gives the same values back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeptFields(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let keep = KeptFields(checkedNames: ["user_id", "device_id", "a"])
    let values = keep.values(ofJSONLine: bytes, range: bytes.indices)
    precondition(values.names == keep.names && values.values.count == keep.names.count, "one value per field")

    var parser = NDJSONRecordParser(defaults: CampaignDefaults())
    parser.keep = keep
    let record = parser.parse(bytes, range: bytes.indices, key: RecordKey(fileIndex: 0, line: 1))
    precondition(record.kept == values, "the parser's record carries other values")

    var line: [UInt8] = [UInt8(ascii: "{")]
    for (index, name) in keep.names.enumerated() {
        if index > 0 { line.append(UInt8(ascii: ",")) }
        JSONText.appendString(name, to: &line)
        line.append(UInt8(ascii: ":"))
        JSONText.appendString(values.values[index], to: &line)
    }
    line.append(UInt8(ascii: "}"))
    let again = keep.values(ofJSONLine: line, range: line.indices)
    precondition(
        again == values, "values written as JSON strings read back differ: \(String(decoding: line, as: UTF8.self))")
    return 0
}
