import Testing

@testable import APNSCore

/// `LiveActivityRules` through `PayloadRules` (docs/APNS.md, "Live Activity payloads"): each rule's own code, valid
/// payloads of each event accepted, other push types untouched.
@Suite("Live Activity payload rules")
struct LiveActivityRulesTests {
    private func code(_ aps: String, _ type: PushType = .liveactivity, payload: String? = nil) -> InputError.Code? {
        do {
            try PayloadRules.validate(Array((payload ?? #"{"aps":\#(aps)}"#).utf8), pushType: type, priority: nil)
            return nil
        } catch {
            return error.code
        }
    }

    static let update = #"{"timestamp":1767225600,"event":"update","content-state":{"score":3}}"#
    static let start =
        #"{"timestamp":1767225600,"event":"start","content-state":{"score":0},"attributes-type":"MatchAttributes","attributes":{"team":"A"},"alert":{"title":"Kick-off"}}"#
    static let end = #"{"timestamp":1767225600,"event":"end","dismissal-date":1767229200}"#

    @Test("valid start, update and end payloads pass, with stale-date and dismissal-date in seconds")
    func valid() {
        #expect(code(Self.update) == nil)
        #expect(code(Self.start) == nil)
        #expect(code(Self.end) == nil)
        #expect(code(#"{"timestamp":1,"event":"end","content-state":{"score":9}}"#) == nil)
        #expect(
            code(
                #"{"timestamp":1767225600,"event":"update","content-state":{},"stale-date":1767229200,"dismissal-date":0}"#
            ) == nil)
        #expect(code(#"{"timestamp":1,"event":"upd\u0061te","content-state":{}}"#) == nil, "escapes compare decoded")
    }

    @Test("timestamp: missing (also with no aps object) or not integer seconds")
    func timestamp() {
        #expect(code(#"{"event":"update","content-state":{}}"#) == .liveActivityTimestampMissing)
        #expect(code(#"{"timestamp":null,"event":"update","content-state":{}}"#) == .liveActivityTimestampMissing)
        #expect(code("", payload: #"{"data":1}"#) == .liveActivityTimestampMissing)
        #expect(code("", payload: #"{"aps":[1]}"#) == .liveActivityTimestampMissing)
        for bad in [#""1767225600""#, "1767225600.5", "1.7e9", "-1", "true", "{}"] {
            #expect(
                code(#"{"timestamp":\#(bad),"event":"update","content-state":{}}"#) == .liveActivityTimestampInvalid,
                "\(bad)")
        }
    }

    @Test("event: missing or not start, update, end")
    func event() {
        #expect(code(#"{"timestamp":1,"content-state":{}}"#) == .liveActivityEventMissing)
        for bad in [#""Update""#, #""stop""#, #""""#, "1", #"["update"]"#] {
            #expect(code(#"{"timestamp":1,"event":\#(bad),"content-state":{}}"#) == .liveActivityEventInvalid, "\(bad)")
        }
    }

    @Test("content-state: needed by start and update, an object whenever given")
    func contentState() {
        #expect(code(#"{"timestamp":1,"event":"update"}"#) == .liveActivityContentStateMissing)
        #expect(
            code(#"{"timestamp":1,"event":"start","attributes-type":"T","attributes":{}}"#)
                == .liveActivityContentStateMissing)
        #expect(code(#"{"timestamp":1,"event":"update","content-state":"x"}"#) == .liveActivityContentStateInvalid)
        #expect(code(#"{"timestamp":1,"event":"end","content-state":[1]}"#) == .liveActivityContentStateInvalid)
    }

    @Test("start needs attributes-type (a string) and attributes (an object); update does not")
    func attributes() {
        let base = #""timestamp":1,"event":"start","content-state":{}"#
        #expect(code("{\(base),\"attributes\":{}}") == .liveActivityAttributesTypeMissing)
        #expect(code("{\(base),\"attributes-type\":7,\"attributes\":{}}") == .liveActivityAttributesTypeInvalid)
        #expect(code("{\(base),\"attributes-type\":\"\",\"attributes\":{}}") == .liveActivityAttributesTypeInvalid)
        #expect(code("{\(base),\"attributes-type\":\"T\"}") == .liveActivityAttributesMissing)
        #expect(code("{\(base),\"attributes-type\":\"T\",\"attributes\":\"x\"}") == .liveActivityAttributesInvalid)
        #expect(code(#"{"timestamp":1,"event":"update","content-state":{},"attributes-type":7}"#) == nil)
    }

    @Test("stale-date and dismissal-date, when present, are integer seconds")
    func dates() {
        #expect(
            code(#"{"timestamp":1,"event":"update","content-state":{},"stale-date":"tomorrow"}"#)
                == .liveActivityStaleDateInvalid)
        #expect(
            code(#"{"timestamp":1,"event":"update","content-state":{},"stale-date":1.5}"#)
                == .liveActivityStaleDateInvalid)
        #expect(code(#"{"timestamp":1,"event":"end","dismissal-date":-5}"#) == .liveActivityDismissalDateInvalid)
        #expect(
            code(#"{"timestamp":1,"event":"end","dismissal-date":"2026-01-01"}"#) == .liveActivityDismissalDateInvalid)
    }

    @Test("the details name the field; other push types are not checked")
    func detailsAndOtherTypes() throws {
        do {
            try PayloadRules.validate(
                Array(#"{"aps":{"timestamp":1,"event":"update"}}"#.utf8), pushType: .liveactivity, priority: nil)
            Issue.record("accepted")
        } catch {
            #expect(error.detail.contains("aps.content-state"))
        }
        #expect(code(#"{"alert":"x"}"#, .alert) == nil)
        #expect(code(#"{"event":"nonsense"}"#, .widgets) == nil)
    }
}
