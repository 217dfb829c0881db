import APNSCore
import Testing

@testable import APNSPipeline

/// The payload of an NDJSON record is checked by the one scan of its line: it must get exactly the verdict (and the
/// message) that `PayloadRules.validate` gives the same bytes on their own, whatever surrounds it in the record.
@Suite("NDJSON payload checked in the line's scan")
struct NDJSONPayloadScanTests {
    typealias Support = PipelineTestSupport
    let token = PipelineTestSupport.token(1)

    static let payloads: [String] = [
        #"{"aps":{"content-available":1}}"#, #"{"aps":{"content-available":1,"alert":"x"}}"#, #"{"aps":{"alert":"x"}}"#,
        #"{"\u0061ps":{"content-available":1}}"#, #"{"aps":{"content-available":1},"aps":{"alert":"x"}}"#,
        #"{"aps":{"alert":"x"},"aps":{"content-available":1}}"#, #"{"aps":[{"content-available":1}]}"#,
        #"{"x":{"aps":{"content-available":1}}}"#, #"{"list":[{"aps":{"content-available":1}}]}"#, "{}",
        #"{"o":{"k":1},"aps":{"content-available":1},"p":{"a":1}}"#, #"{"aps":{"content-available":{"a":1}}}"#,
        "{" + String(repeating: #""k":"v","#, count: 700) + #""aps":{"content-available":1}}"#,
    ]

    /// Members around the payload that hold the shape the check looks for, at other places.
    static let layouts: [(before: String, after: String)] = [
        ("", ""),
        (#""vars":{"aps":{"content-available":1}},"#, ""),
        (#""x":[{"aps":{"content-available":1}}],"#, #","y":{"aps":{"content-available":1}}"#),
        (#""z":{"content-available":1},"#, #","vars":{"aps":{"alert":"x"},"k":{"content-available":1}}"#),
    ]

    @Test("verdict and message equal PayloadRules on the payload alone", arguments: [PushType.alert, .background])
    func sameVerdict(pushType: PushType) {
        for payload in Self.payloads {
            for priority in [nil, "10", "5"] as [String?] {
                let expected = Self.reference(payload, pushType: pushType, priority: priority.flatMap { Int($0) })
                for layout in Self.layouts {
                    var line = #"{"token":"\#(token)","push_type":"\#(pushType.rawValue)","#
                    if let priority { line += #""priority":\#(priority),"# }
                    line += layout.before + #""payload":"# + payload + layout.after + "}"
                    let record = Support.parseLine(line)
                    #expect(record.error?.code == expected?.code, "\(line)")
                    #expect(record.error?.detail == expected?.detail, "\(line)")
                    if expected == nil { #expect(record.notification?.payload == Array(payload.utf8)) }
                }
            }
        }
    }

    @Test("the reference rejects content-available-only at priority 10 (so the comparison is not vacuous)")
    func referenceSanity() {
        #expect(
            Self.reference(#"{"aps":{"content-available":1}}"#, pushType: .alert, priority: nil)?.code
                == .priorityForbiddenForBackground)
        #expect(Self.reference(#"{"aps":{"content-available":1}}"#, pushType: .alert, priority: 5) == nil)
    }

    /// What `PayloadRules.validate` says of the payload bytes on their own; the priority as the parser resolves it.
    static func reference(_ payload: String, pushType: PushType, priority: Int?) -> InputError? {
        let resolved =
            priority.flatMap { try? Priority(validating: $0) } ?? PushNotification.defaultPriority(for: pushType)
        do {
            try PayloadRules.validate(Array(payload.utf8), pushType: pushType, priority: resolved)
            return nil
        } catch {
            return error
        }
    }
}
