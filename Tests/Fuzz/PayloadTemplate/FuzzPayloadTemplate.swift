import APNSCore
import APNSPipeline
import FuzzDriver
import Glibc

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzPayloadTemplate))

/// libFuzzer target for the payload template filler: the input is a template, then a NUL byte, then values
/// separated by NUL bytes, given to the template's variables in order. A template that loads renders every
/// set of valid UTF-8 values to a JSON object (or reports a missing variable, or a value that is no JSON scalar
/// where a placeholder stands outside quotes), never to broken JSON.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPayloadTemplate(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let parts = bytes.split(separator: 0, omittingEmptySubsequences: false)
    guard let templateBytes = parts.first, let template = try? PayloadTemplate(bytes: Array(templateBytes)) else {
        return 0
    }
    var values: [String: String] = [:]
    for (name, value) in zip(template.variableNames, parts.dropFirst()) {
        guard let text = String(validating: value, as: UTF8.self) else { return 0 }
        values[name] = text
    }
    let rendered: [UInt8]
    do {
        rendered = try template.render(values)
    } catch {
        // A value that is no JSON scalar where the placeholder stands outside quotes is the record's error.
        precondition(
            values.count < template.variableNames.count || error.code == .templateValueInvalid,
            "rendering failed with every variable set: \(error)")
        return 0
    }
    let scanner = JSONScanner(rendered)
    guard let object = try? scanner.scanDocument(in: 0..<rendered.count), object.kind == .object else {
        preconditionFailure("the template rendered something other than a JSON object")
    }
    return 0
}
