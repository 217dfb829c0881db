import Testing

@testable import APNSTransport

@Suite("Proxy CONNECT response parser and configuration")
struct ProxyParsingTests {
    @Test("200 opens the tunnel; the bytes after the header are not consumed")
    func established() {
        var parser = ProxyResponseParser()
        let header = Array("HTTP/1.1 200 Connection established\r\nVia: 1.1 proxy\r\n\r\n".utf8)
        #expect(parser.parse(header + [0x16, 0x03, 0x03]) == .established(consumed: header.count))
        #expect(parser.parse([0x16]) == .invalid("response already complete"))
    }

    @Test("a header split anywhere, down to single bytes, parses the same")
    func splitFeeding() {
        let header = Array("HTTP/1.0 200 OK\r\n\r\n".utf8)
        for split in 1..<header.count {
            var parser = ProxyResponseParser()
            #expect(parser.parse(Array(header[..<split])) == .needMoreBytes)
            #expect(parser.parse(Array(header[split...]) + [1, 2]) == .established(consumed: header.count - split))
        }
        var parser = ProxyResponseParser()
        var results: [ProxyResponseParser.Action] = []
        for byte in header { results.append(parser.parse([byte])) }
        #expect(results.dropLast().allSatisfy { $0 == .needMoreBytes })
        #expect(results.last == .established(consumed: 1))
    }

    @Test(
        "non-2xx answers are refusals with status and reason",
        arguments: [
            (
                "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n",
                407, "Proxy Authentication Required"
            ),
            ("HTTP/1.1 403 Forbidden\r\n\r\n", 403, "Forbidden"),
            ("HTTP/1.1 502 Bad Gateway\n\n", 502, "Bad Gateway"),
            ("HTTP/1.1 503\r\n\r\n", 503, ""),
        ])
    func refused(text: String, status: Int, reason: String) {
        var parser = ProxyResponseParser()
        #expect(parser.parse(Array(text.utf8)) == .refused(status: status, reason: reason))
    }

    @Test(
        "garbage is rejected early, without waiting for a full header",
        arguments: [
            "SSH-2.0-OpenSSH_9.2\r\n", "\u{16}\u{03}\u{01}\u{00}\u{05}", "<html>",
        ])
    func garbage(text: String) {
        var parser = ProxyResponseParser()
        guard case .invalid(let why) = parser.parse(Array(text.utf8)) else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
        #expect(why.contains("not an HTTP response"))
    }

    @Test(
        "malformed status or header lines are rejected",
        arguments: [
            "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
            "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "HTTP/1.1\r\n\r\n",
        ])
    func malformed(text: String) {
        var parser = ProxyResponseParser()
        guard case .invalid = parser.parse(Array(text.utf8)) else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
    }

    @Test("an oversized header is rejected at the bound")
    func oversized() {
        var parser = ProxyResponseParser(maximumHeaderBytes: 1024)
        let line = Array("X-Padding: \(String(repeating: "a", count: 100))\r\n".utf8)
        #expect(parser.parse(Array("HTTP/1.1 200 OK\r\n".utf8)) == .needMoreBytes)
        var result = ProxyResponseParser.Action.needMoreBytes
        for _ in 0..<20 where result == .needMoreBytes { result = parser.parse(line) }
        #expect(result == .invalid("response header larger than 1024 bytes"))

        var fits = ProxyResponseParser(maximumHeaderBytes: 1024)
        let small = Array("HTTP/1.1 200 OK\r\n".utf8) + line + line + Array("\r\n".utf8)
        #expect(fits.parse(small) == .established(consumed: small.count))
        #expect(ProxyResponseParser().maximumHeaderBytes == 16 * 1024)
    }

    @Test("proxy URLs parse; credentials are percent-decoded and never shown")
    func configuration() throws {
        let proxy = try ProxyConfiguration(parsing: "http://user:p%40ss@proxy.example.com:3128/")
        #expect(proxy.host == "proxy.example.com" && proxy.port == 3128)
        #expect(proxy.username == "user" && proxy.password == "p@ss")
        #expect(proxy.description == "http://user@proxy.example.com:3128")
        #expect(
            try ProxyConfiguration(parsing: "proxy.local:8080") == ProxyConfiguration(host: "proxy.local", port: 8080))
        #expect(try ProxyConfiguration(parsing: "http://[::1]:3128").host == "::1")
        #expect(try ProxyConfiguration(parsing: "http://proxy").port == ProxyConfiguration.defaultPort)
        for bad in [
            "https://proxy:443", "socks5://proxy:1080", "http://", "http://proxy:0", "http://proxy:abc",
            "http://proxy:3128/path", "http://[::1:3128",
        ] {
            let error = #expect(throws: TransportError.self, "\(bad)") { try ProxyConfiguration(parsing: bad) }
            #expect(error?.kind == .invalidConfiguration)
        }
        let error = #expect(throws: TransportError.self) { try ProxyConfiguration(parsing: "https://u:secret@proxy") }
        #expect(error?.description.contains("secret") == false)
    }

    @Test("HTTPS_PROXY is used unless NO_PROXY exempts the host")
    func environment() throws {
        let environment = ["HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "localhost, .internal.example"]
        #expect(try ProxyConfiguration.fromEnvironment(environment, targetHost: "api.push.apple.com")?.port == 3128)
        #expect(try ProxyConfiguration.fromEnvironment(environment, targetHost: "localhost") == nil)
        #expect(try ProxyConfiguration.fromEnvironment(environment, targetHost: "mock.internal.example") == nil)
        #expect(try ProxyConfiguration.fromEnvironment(environment, targetHost: "internal.example") == nil)
        #expect(try ProxyConfiguration.fromEnvironment(environment, targetHost: "notinternal.example") != nil)
        #expect(try ProxyConfiguration.fromEnvironment(["https_proxy": "proxy:1"], targetHost: "x")?.host == "proxy")
        #expect(
            try ProxyConfiguration.fromEnvironment(["HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"], targetHost: "x")
                == nil)
        #expect(try ProxyConfiguration.fromEnvironment([:], targetHost: "x") == nil)
    }

    @Test("the CONNECT request names the target, with Basic credentials when set")
    func connectRequest() {
        let plain = ProxyConfiguration(host: "proxy", port: 3128)
        #expect(
            String(decoding: plain.connectRequest(host: "api.push.apple.com", port: 443), as: UTF8.self)
                == "CONNECT api.push.apple.com:443 HTTP/1.1\r\nHost: api.push.apple.com:443\r\n\r\n")
        let authenticated = ProxyConfiguration(host: "proxy", port: 3128, username: "user", password: "p@ss")
        #expect(
            String(decoding: authenticated.connectRequest(host: "::1", port: 2197), as: UTF8.self)
                == "CONNECT [::1]:2197 HTTP/1.1\r\nHost: [::1]:2197\r\nProxy-Authorization: Basic dXNlcjpwQHNz\r\n\r\n")
    }
}
