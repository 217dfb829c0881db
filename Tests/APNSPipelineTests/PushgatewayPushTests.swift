import Foundation
import Testing

@testable import APNSPipeline

/// `--pushgateway`: the URL read (port, prefix, credentials, refusals), the grouping key's path with the gateway's
/// base64 form for values that are not plain, the POST's bytes, and the verdict on answers whole and partial.
@Suite("Pushgateway push")
struct PushgatewayPushTests {
    @Test("URLs: host, port, prefix, IPv6, https and its port; credentials in the URL refused, naming the options")
    func urls() throws {
        let plain = try PushgatewayPush(url: "http://127.0.0.1:9091")
        #expect(plain.host == "127.0.0.1" && plain.port == 9091 && plain.pathPrefix == "" && plain.credentials == nil)
        let prefixed = try PushgatewayPush(url: "http://gw.example:8080/push/")
        #expect(prefixed.host == "gw.example" && prefixed.port == 8080 && prefixed.pathPrefix == "/push")
        let v6 = try PushgatewayPush(url: "http://[::1]:9091")
        #expect(v6.host == "::1" && v6.port == 9091)
        #expect(try PushgatewayPush(url: "http://gw").port == 80)
        #expect(!plain.usesTLS && plain.trustedCAFile == nil)
        let secure = try PushgatewayPush(url: "https://gw.example")
        #expect(
            secure.usesTLS && secure.port == 443 && secure.host == "gw.example"
                && secure.displayURL == "https://gw.example")
        #expect(try PushgatewayPush(url: "HTTPS://gw:9443/p").port == 9443)
        do {
            _ = try PushgatewayPush(url: "http://ops:p%40ss@gw:9091")
            Issue.record("credentials in the URL were accepted")
        } catch {
            #expect(
                !error.description.contains("p%40ss") && error.description.contains("--pushgateway-user")
                    && error.description.contains("APNS_PUSHGATEWAY_PASSWORD")
                    && error.description.contains("--pushgateway-password-file"))
        }
        for bad in [
            "gw:9091", "ftp://gw:9091", "http://:9091", "http://gw:0", "http://gw:x", "http://gw:9091/?a=1",
            "http://user@gw",
        ] {
            #expect(throws: PushgatewayPush.URLError.self, "\(bad)") { try PushgatewayPush(url: bad) }
        }
    }

    @Test("the grouping key: job, campaign, shard; unusual values in base64url, an empty one as =")
    func paths() throws {
        let gateway = try PushgatewayPush(url: "http://127.0.0.1:9091")
        #expect(gateway.path(campaign: "spring", shard: "all") == "/metrics/job/apns-bulk/campaign/spring/shard/all")
        // "0/2" is MC8y; "spring sale?" is c3ByaW5nIHNhbGU_ in base64url (the / of base64 becomes _).
        #expect(
            gateway.path(campaign: "spring sale?", shard: "0/2")
                == "/metrics/job/apns-bulk/campaign@base64/c3ByaW5nIHNhbGU_/shard@base64/MC8y")
        #expect(PushgatewayPush.segment("campaign", "") == "/campaign@base64/=")
        #expect(PushgatewayPush.segment("campaign", "été") == "/campaign@base64/w6l0w6k=")
        #expect(!gateway.path(campaign: "a", shard: "1/2").contains("instance"))
    }

    @Test("the request: a POST with length, type, Connection: close and basic authentication")
    func request() throws {
        var gateway = try PushgatewayPush(url: "http://127.0.0.1:9091/pfx")
        gateway.credentials = "ops:secret"
        let text = String(decoding: gateway.request(campaign: "c", shard: "all", body: "x 1\n"), as: UTF8.self)
        #expect(text.hasPrefix("POST /pfx/metrics/job/apns-bulk/campaign/c/shard/all HTTP/1.1\r\n"))
        #expect(text.contains("\r\nHost: 127.0.0.1:9091\r\n"))
        #expect(text.contains("\r\nContent-Length: 4\r\n"))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.contains("\r\nAuthorization: Basic b3BzOnNlY3JldA==\r\n"))
        #expect(text.hasSuffix("\r\n\r\nx 1\n"))
        let v6 = String(
            decoding: try PushgatewayPush(url: "http://[::1]:9091").request(campaign: "c", shard: "all", body: ""),
            as: UTF8.self)
        #expect(v6.contains("\r\nHost: [::1]:9091\r\n") && !v6.contains("Authorization"))
        let secure = String(
            decoding: try PushgatewayPush(url: "https://gw").request(campaign: "c", shard: "all", body: ""),
            as: UTF8.self)
        #expect(secure.contains("\r\nHost: gw\r\n"), "the default port is left out of Host")
    }

    @Test("answers: 2xx accepted, others refused with their reason, partial ones wait for more")
    func verdicts() {
        func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
        #expect(
            PushgatewayPush.verdict(bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), ended: false) == .accepted)
        #expect(PushgatewayPush.verdict(bytes("HTTP/1.1 202 Accepted\r\n\r\n"), ended: false) == .accepted)
        #expect(PushgatewayPush.verdict(bytes("HTTP/1.1 200 OK\r\nContent-Le"), ended: false) == nil)
        #expect(
            PushgatewayPush.verdict(
                bytes("HTTP/1.1 400 Bad Request\r\nContent-Length: 20\r\n\r\nbad metric"), ended: false) == nil)
        #expect(
            PushgatewayPush.verdict(
                bytes("HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nbad metric\nmore"), ended: false)
                == .refused("HTTP 400 Bad Request: bad metric"))
        #expect(
            PushgatewayPush.verdict(bytes("HTTP/1.1 401 Unauthorized\r\n\r\n"), ended: true)
                == .refused("HTTP 401 Unauthorized"))
        #expect(PushgatewayPush.verdict([], ended: true) == .refused("the connection closed without an answer"))
        #expect(
            PushgatewayPush.verdict(bytes("SSH-2.0-OpenSSH\r\n\r\n"), ended: true)
                == .refused("an answer that is not HTTP"))
    }
}
