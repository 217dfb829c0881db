import APNSCore
import FuzzDriver
import Glibc

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzJSONScanner))

/// libFuzzer target for `JSONScanner`: any bytes either fail to scan or yield a value whose members, elements
/// and strings can be walked; every member value scanned on its own is the same value again; the scan that reports
/// members agrees with the plain one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONScanner(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let scanner = JSONScanner(bytes)
    let plain = Result { () throws(JSONSyntaxError) in try scanner.scanDocument(in: 0..<bytes.count) }
    // The scan that reports members gives the same verdict, and its content-available check the reference answer.
    var check = ContentAvailableOnlyCheck(payloadDepth: 1)
    let reporting = Result { () throws(JSONSyntaxError) in
        try scanner.scanDocument(in: 0..<bytes.count, reportingMembersTo: check.reportedDepth) { depth, key, value in
            precondition(depth >= 1 && depth <= check.reportedDepth, "a member reported at depth \(depth)")
            check.member(depth: depth, key: key, value: value, in: scanner)
        }
    }
    precondition(plain == reporting, "the reporting scan differs: \(plain) vs \(reporting)")
    guard case .success(let document) = plain else { return 0 }
    precondition(document.range.lowerBound >= 0 && document.range.upperBound <= bytes.count)
    if document.kind == .object {
        let reference = PayloadRules.isContentAvailableOnly(scanner, object: document)
        precondition(
            check.isContentAvailableOnly == reference, "the content-available check differs from the reference")
    }
    walk(document, in: scanner)
    return 0
}

private func walk(_ value: JSONScanner.Value, in scanner: JSONScanner) {
    guard let again = try? scanner.scanDocument(in: value.range) else {
        preconditionFailure("a scanned value does not scan on its own: \(value)")
    }
    precondition(again == value, "a value scanned on its own differs: \(again) vs \(value)")
    switch value.kind {
    case .string:
        _ = scanner.decodeString(value)
        _ = scanner.string(value, equals: "token")
    case .object:
        scanner.forEachMember(of: value) { key, member in
            precondition(key.kind == .string, "an object key is not a string")
            precondition(value.range.lowerBound < key.range.lowerBound, "a key starts before its object")
            precondition(member.range.upperBound < value.range.upperBound, "a member ends after its object")
            walk(key, in: scanner)
            walk(member, in: scanner)
        }
    default:
        break
    }
}
