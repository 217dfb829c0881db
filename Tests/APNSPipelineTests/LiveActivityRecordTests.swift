import APNSCore
import Testing

@testable import APNSPipeline

/// Live Activity rules as the readers apply them (docs/FILES.md, "Live Activity payloads"): an NDJSON record's
/// `payload` member (checked from the line's one scan) and a filled template give the same reasons as
/// `PayloadRules` on the bytes.
@Suite("Live Activity records")
struct LiveActivityRecordTests {
    typealias Support = PipelineTestSupport

    static let defaults = CampaignDefaults(topic: Support.defaultTopic, pushType: .liveactivity)

    @Test(
        "an NDJSON record's payload member: valid accepted with the derived topic, each broken rule its reason",
        arguments: [
            (#"{"timestamp":1,"event":"update","content-state":{"s":1}}"#, nil as InputError.Code?),
            (#"{"timestamp":1,"event":"st\u0061rt","content-state":{},"attributes-type":"T","attributes":{}}"#, nil),
            (#"{"event":"update","content-state":{}}"#, .liveActivityTimestampMissing),
            (#"{"timestamp":1.0,"event":"update","content-state":{}}"#, .liveActivityTimestampInvalid),
            (#"{"timestamp":1,"event":"pause","content-state":{}}"#, .liveActivityEventInvalid),
            (#"{"timestamp":1,"event":"update"}"#, .liveActivityContentStateMissing),
            (
                #"{"timestamp":1,"event":"start","content-state":{},"attributes":{}}"#,
                .liveActivityAttributesTypeMissing
            ),
            (#"{"timestamp":1,"event":"end","stale-date":"x"}"#, .liveActivityStaleDateInvalid),
        ])
    func ndjsonMember(aps: String, code: InputError.Code?) throws {
        let line = #"{"token":"\#(Support.token(1))","payload":{"aps":\#(aps),"x":[1]},"vars":{}}"#
        let record = Support.parseLine(line, defaults: Self.defaults)
        #expect(record.error?.code == code, "\(aps): \(String(describing: record.error))")
        if code == nil {
            #expect(record.notification?.topic.value == Support.defaultTopic.value + ".push-type.liveactivity")
        }
        let bytes = Array(#"{"aps":\#(aps)}"#.utf8)
        #expect(Self.code(of: bytes) == code, "the same reason on the bytes")
    }

    static func code(of bytes: [UInt8]) -> InputError.Code? {
        do {
            try PayloadRules.validate(bytes, pushType: .liveactivity, priority: nil)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("a filled template is checked too")
    func template() throws {
        let template = try PayloadTemplate(
            bytes: Array(#"{"aps":{"timestamp":{{ts}},"event":"update","content-state":{"s":{{s}}}}}"#.utf8))
        let good = Support.parseLine(
            #"{"token":"\#(Support.token(2))","vars":{"ts":1767225600,"s":3}}"#, defaults: Self.defaults,
            template: template)
        #expect(good.error == nil, "\(String(describing: good.error))")
        let bad = Support.parseLine(
            #"{"token":"\#(Support.token(3))","vars":{"ts":"soon","s":3}}"#, defaults: Self.defaults, template: template
        )
        #expect(bad.error?.code == .liveActivityTimestampInvalid)
    }
}
