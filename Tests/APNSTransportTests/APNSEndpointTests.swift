import Testing

@testable import APNSTransport

@Suite("APNSEndpoint")
struct APNSEndpointTests {
    @Test("Apple's environments by name")
    func named() throws {
        #expect(try APNSEndpoint(parsing: "production") == .production)
        #expect(try APNSEndpoint(parsing: "development") == .development)
        #expect(try APNSEndpoint(parsing: "sandbox") == .development)
        #expect(APNSEndpoint.production.host == "api.push.apple.com")
        #expect(APNSEndpoint.development.host == "api.sandbox.push.apple.com")
        #expect(APNSEndpoint.production.authority == "api.push.apple.com")
    }

    @Test(
        "explicit URLs",
        arguments: [
            ("https://127.0.0.1:2197", "127.0.0.1", 2197, "127.0.0.1:2197"),
            ("https://api.push.apple.com:2197/", "api.push.apple.com", 2197, "api.push.apple.com:2197"),
            ("https://localhost", "localhost", 443, "localhost"),
            ("https://[::1]:8443", "::1", 8443, "[::1]:8443"),
        ] as [(String, String, Int, String)])
    func explicit(text: String, host: String, port: Int, authority: String) throws {
        let endpoint = try APNSEndpoint(parsing: text)
        #expect(endpoint.host == host)
        #expect(endpoint.port == port)
        #expect(endpoint.authority == authority)
        #expect(!endpoint.isApple)
    }

    @Test(
        "rejects what is not an endpoint",
        arguments: [
            "http://127.0.0.1:2197", "https://", "https://host:0", "https://host:70000", "https://host/3/device",
            "https://user@host", "https://[::1", "staging", "https://host:abc",
        ])
    func rejects(text: String) {
        #expect(throws: EndpointError.self) { try APNSEndpoint(parsing: text) }
    }
}
