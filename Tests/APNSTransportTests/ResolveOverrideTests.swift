import Testing

@testable import APNSTransport

/// `--resolve HOST:PORT:ADDR[,ADDR…]` (curl's convention) parsed, and looked up by the host and port dialed.
@Suite("--resolve entries")
struct ResolveOverrideTests {
    @Test("host, port and addresses, IPv6 in brackets or not, duplicates dropped, order kept")
    func parses() throws {
        let entry = try ResolveOverride(parsing: "LocalHost:8443:10.9.9.2,[::1],127.0.0.1,::2,127.0.0.1")
        #expect(entry.host == "localhost")
        #expect(entry.port == 8443)
        #expect(entry.addresses.map(\.description) == ["10.9.9.2:8443", "[::1]:8443", "127.0.0.1:8443", "[::2]:8443"])
        #expect(entry.description == "localhost:8443:10.9.9.2,[::1],127.0.0.1,[::2]")
        let literal = try ResolveOverride(parsing: "[2001:db8::1]:443:192.0.2.1")
        #expect(literal.host == "2001:db8::1")
        #expect(literal.addresses == [addressOn443("192.0.2.1")])
    }

    @Test(
        "malformed entries are refused, saying what is wrong",
        arguments: [
            ("localhost", "expected HOST:PORT:ADDR"),
            ("localhost:443", "expected HOST:PORT:ADDR"),
            ("localhost:443:", "no address"),
            ("localhost:0:127.0.0.1", "'0' is not a port"),
            ("localhost:https:127.0.0.1", "'https' is not a port"),
            ("localhost:443:127.0.0.1,", "'' is not an IPv4 or IPv6 address"),
            ("localhost:443:api.example.com", "'api.example.com' is not an IPv4 or IPv6 address"),
            ("localhost:443:127.0.0.300", "'127.0.0.300' is not"),
            (":443:127.0.0.1", "'' is not a host name"),
            ("+localhost:443:127.0.0.1", "'+localhost' is not a host name"),
            ("[::1:443:127.0.0.1", "unclosed '['"),
            ("[example]:443:127.0.0.1", "'[example]' is not an IPv6 address"),
        ])
    func refuses(text: String, message: String) {
        #expect {
            _ = try ResolveOverride(parsing: text)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test("looked up by host (any case, IPv6 with or without brackets) and port; one HOST:PORT given twice is refused")
    func table() throws {
        let overrides = try ResolveOverrides([
            ResolveOverride(parsing: "api.push.apple.com:443:192.0.2.1"),
            ResolveOverride(parsing: "[::1]:8443:127.0.0.1"),
        ])
        #expect(overrides.addresses(host: "API.push.apple.com", port: 443) == [addressOn443("192.0.2.1")])
        #expect(overrides.addresses(host: "api.push.apple.com", port: 2197) == nil)
        #expect(overrides.addresses(host: "[::1]", port: 8443)?.first?.host == "127.0.0.1")
        #expect(overrides.addresses(host: "::1", port: 8443) != nil)
        #expect(throws: ResolveOverrideError.self) {
            try ResolveOverrides([
                ResolveOverride(parsing: "h:443:192.0.2.1"), ResolveOverride(parsing: "H:443:192.0.2.2"),
            ])
        }
    }
}
