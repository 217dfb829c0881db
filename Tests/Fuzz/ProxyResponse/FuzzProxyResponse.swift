import APNSTransport
import FuzzDriver
import Glibc

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzProxyResponse))

/// libFuzzer target for `ProxyResponseParser`: the bytes arrive in chunks (their size taken from the input's
/// length); the parser ends with exactly one final answer, and an open tunnel consumed only bytes it was given.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProxyResponse(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let chunkSize = bytes.count % 2 == 0 ? max(1, bytes.count) : 1 + bytes.count % 7
    var parser = ProxyResponseParser(maximumHeaderBytes: 1024)
    var offset = 0
    while offset < bytes.count {
        let chunk = Array(bytes[offset..<min(bytes.count, offset + chunkSize)])
        offset += chunk.count
        switch parser.parse(chunk) {
        case .needMoreBytes:
            continue
        case .established(let consumed):
            precondition(consumed > 0 && consumed <= chunk.count, "consumed \(consumed) of a \(chunk.count)-byte chunk")
        case .refused(let status, _):
            precondition((100...999).contains(status) && !(200...299).contains(status), "refused with status \(status)")
        case .invalid:
            break
        }
        guard case .invalid = parser.parse([0x48]) else { preconditionFailure("a finished parser took more bytes") }
        return 0
    }
    return 0
}
