import Testing

@testable import APNSCore

@Suite("Payload rules")
struct PayloadRulesTests {
    private func code(_ payload: String, _ type: PushType = .alert, _ priority: Priority? = nil) -> InputError.Code? {
        do {
            try PayloadRules.validate(Array(payload.utf8), pushType: type, priority: priority)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("accepts JSON objects")
    func accepts() {
        #expect(code(#"{"aps":{"alert":"Hi"}}"#) == nil)
        #expect(code(#"  {"aps":{"alert":{"title":"T","body":"B"},"badge":3},"custom":[1,2,{"x":null}]} "#) == nil)
        #expect(code("{}") == nil)
        #expect(code(#"{"aps":{"content-available":1}}"#, .background, .powerAware) == nil)
        #expect(code(#"{"aps":{"content-available":1,"alert":"x"}}"#, .alert, .immediate) == nil)
    }

    @Test("rejects empty, non-object and invalid JSON")
    func rejectsShape() {
        #expect(code("") == .payloadEmpty)
        #expect(code("   ") == .payloadEmpty)
        #expect(code("[1]") == .payloadNotObject)
        #expect(code(#""text""#) == .payloadNotObject)
        #expect(code("{") == .payloadInvalidJSON)
        #expect(code(#"{"a":1,}"#) == .payloadInvalidJSON)
        #expect(code(#"{"a":1} {}"#) == .payloadInvalidJSON)
    }

    @Test("size limits: 4096 bytes, 5120 for voip, counted in bytes")
    func sizes() {
        func payload(bytes: Int) -> String {
            let frame = #"{"aps":{"alert":""}}"#
            return #"{"aps":{"alert":""# + String(repeating: "x", count: bytes - frame.utf8.count) + #""}}"#
        }
        #expect(payload(bytes: 4096).utf8.count == 4096)
        #expect(code(payload(bytes: 4096)) == nil)
        #expect(code(payload(bytes: 4097)) == .payloadTooLarge)
        #expect(code(payload(bytes: 5120), .voip) == nil)
        #expect(code(payload(bytes: 5121), .voip) == .payloadTooLarge)
        #expect(code(payload(bytes: 4097), .voip) == nil)
    }

    @Test("priority 10 with a content-available-only payload is rejected, as APNs does")
    func contentAvailableOnly() {
        let background = #"{"aps":{"content-available":1},"data":"x"}"#
        #expect(code(background, .background, .immediate) == .priorityForbiddenForBackground)
        #expect(code(background, .alert, nil) == .priorityForbiddenForBackground, "no header means 10")
        #expect(code(background, .background, .powerAware) == nil)
        #expect(code(background, .background, .powerFirst) == nil)
        #expect(
            code(#"{"aps":{"content\u002davailable":1}}"#, .background, .immediate) == .priorityForbiddenForBackground)
    }

    @Test("background pushes default to priority 5")
    func backgroundDefault() {
        #expect(PushNotification.defaultPriority(for: .background) == .powerAware)
        #expect(PushNotification.defaultPriority(for: .alert) == nil)
    }
}
