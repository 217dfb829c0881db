import APNSCore
import Testing

@testable import APNSMock

/// Shared builders for the mock tests: tokens, requests, certificate-authenticated validators.
enum MockTestSupport {
    static let goodToken = String(repeating: "ab", count: 32)
    static let topic = "com.example.app"
    static let payload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
    static let now: Int64 = 1_750_000_000

    static func token(endingIn suffix: String) -> String {
        String(repeating: "1", count: 64 - suffix.count) + suffix
    }

    /// A request that passes every check on a certificate connection for `topic`.
    static func request(
        streamID: Int32 = 1,
        method: String = "POST",
        path: String? = nil,
        headers: [(String, String)] = [("apns-topic", topic), ("apns-push-type", "alert")],
        body: [UInt8] = payload
    ) -> MockRequest {
        MockRequest(
            streamID: streamID, method: method, path: path ?? "/3/device/\(goodToken)", headers: headers, body: body)
    }

    static let certificate = MockClientCertificate(subjectUID: topic)

    /// A validator and a certificate-authenticated connection.
    static func certificateSetup(
        _ configuration: MockConfiguration = MockConfiguration(),
        certificate: MockClientCertificate? = certificate
    ) throws -> (MockValidator, MockConnectionState) {
        var validator = try MockValidator(configuration: configuration, clock: .fixed(epochSeconds: now))
        let connection = validator.openConnection(clientCertificate: certificate)
        return (validator, connection)
    }

    /// The status and reason of a decision's answer ("200" / "400 BadTopic"), or "none".
    static func outcome(_ decision: MockDecision) -> String {
        guard let response = decision.response else { return "none" }
        guard let reason = response.reason else { return "\(response.status)" }
        return "\(response.status) \(reason.rawValue)"
    }

    static func body(_ response: MockResponse?) -> String {
        String(decoding: response?.body ?? [], as: UTF8.self)
    }
}
