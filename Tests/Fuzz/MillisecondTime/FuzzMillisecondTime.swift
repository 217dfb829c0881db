import FuzzDriver
import Glibc

@testable import APNSPipeline

// libFuzzer runs the target: arguments and corpus directories as for any libFuzzer binary.
exit(apns_fuzz_driver_run(CommandLine.argc, CommandLine.unsafeArgv, fuzzMillisecondTime))

/// libFuzzer target for `MillisecondTime.parse` (`prune --after`: epoch milliseconds or ISO 8601): parsing never
/// crashes, and every time it reads between 1970 and 9999, written as `MillisecondTime.iso8601` (the prune
/// list's `timestamp_iso`), reads back as the same millisecond, as do its digits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMillisecondTime(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    guard let milliseconds = MillisecondTime.parse(text) else { return 0 }
    precondition(
        MillisecondTime.parse(String(milliseconds)) == milliseconds || milliseconds < 0, "digits of \(milliseconds)")
    guard milliseconds >= 0, milliseconds < 253_402_300_800_000 else { return 0 }
    let iso = MillisecondTime.iso8601(milliseconds)
    precondition(
        MillisecondTime.parse(iso) == milliseconds,
        "\(text) -> \(milliseconds) -> \(iso) -> \(String(describing: MillisecondTime.parse(iso)))")
    return 0
}
