import Foundation

/// A push of a run's metrics to a Prometheus Pushgateway (`--pushgateway URL`, docs/RUNNING.md "Metrics"): the URL
/// read (`http://` or `https://`), the grouping key's path (job `apns-bulk`, the campaign, the shard; values the
/// gateway's base64 form when they are not plain), the HTTP/1.1 POST's bytes and the verdict on the answer. Pure:
/// the command does the I/O.
public struct PushgatewayPush: Sendable, Equatable {
    /// The URL as given: what a warning shows (it never holds a password: `init(url:)` refuses one).
    public var displayURL: String
    /// Whether the gateway speaks TLS (`https://`), verified against `trustedCAFile` or the system store.
    public var usesTLS: Bool
    /// The host to connect to, IPv6 without brackets.
    public var host: String
    /// The Pushgateway's TCP port.
    public var port: Int
    /// The path before `/metrics/…` (empty, or `/prefix` without a trailing slash) for a gateway behind a prefix.
    public var pathPrefix: String
    /// `user:password` for basic authentication (`--pushgateway-user` and its password); nil without.
    public var credentials: String?
    /// The CA certificates (PEM) an `https://` gateway's certificate must chain to (`--pushgateway-ca-file`); nil:
    /// the system store.
    public var trustedCAFile: String?

    /// Why a `--pushgateway` value cannot be used (one line, naming the option and the fix).
    public struct URLError: Error, CustomStringConvertible, Sendable {
        /// The problem as one printable line.
        public let description: String
    }

    /// Reads `http[s]://host[:port][/prefix]`; port 80 (443 for https) when none is given (the gateway's own
    /// default is 9091, so it is usually named). Credentials in the URL are refused: a command line is visible to
    /// every user of the machine (`ps`) and to whoever reads a pod's spec.
    public init(url: String) throws(URLError) {
        func refuse(_ why: String) -> URLError {
            URLError(
                description: "--pushgateway \(url): \(why); give http://host:port or https://host:port "
                    + "(e.g. http://127.0.0.1:9091)")
        }
        let lowered = url.lowercased()
        let scheme: String
        if lowered.hasPrefix("http://") {
            scheme = "http://"
        } else if lowered.hasPrefix("https://") {
            scheme = "https://"
        } else {
            throw refuse("not an http:// or https:// URL")
        }
        usesTLS = scheme == "https://"
        var rest = Substring(url.dropFirst(scheme.count))
        var path = ""
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            guard rest[slash] == "/", !rest[slash...].contains(where: { $0 == "?" || $0 == "#" }) else {
                throw refuse("a query or a fragment cannot be used")
            }
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        while path.hasSuffix("/") { path.removeLast() }
        let authority = rest
        guard !authority.contains("@") else {
            throw URLError(
                description: "--pushgateway: credentials in the URL are visible to every user of the machine "
                    + "(ps) and in the pod's spec; give the user with --pushgateway-user (or APNS_PUSHGATEWAY_USER) and "
                    + "the password in APNS_PUSHGATEWAY_PASSWORD or a file named by --pushgateway-password-file")
        }
        displayURL = scheme + authority + path
        credentials = nil
        trustedCAFile = nil
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("an IPv6 address needs its closing ]") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("no port after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw refuse("no host") }
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw refuse("the port must be 1 to 65535")
            }
            port = number
        } else {
            port = usesTLS ? 443 : 80
        }
        pathPrefix = path
    }

    /// The grouping key's path: `/metrics/job/apns-bulk/campaign/<value>/shard/<value>`, a value neither plain
    /// nor empty written `name@base64/<base64url>` (the Pushgateway's README, "URL").
    public func path(campaign: String, shard: String) -> String {
        pathPrefix + "/metrics/job/apns-bulk" + Self.segment("campaign", campaign) + Self.segment("shard", shard)
    }

    /// One label of the grouping key as a path part.
    static func segment(_ name: String, _ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.~".unicodeScalars.contains($0))
            }
        if plain { return "/\(name)/\(value)" }
        var encoded = Data(value.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        if encoded.isEmpty { encoded = "=" }  // the gateway's spelling of an empty value
        return "/\(name)@base64/\(encoded)"
    }

    /// The request: a POST (it replaces only the metric names pushed, so a run that did not finish, pushing no
    /// last-success gauge, keeps the one a finished run pushed), closing the connection after the answer.
    public func request(campaign: String, shard: String, body: String) -> [UInt8] {
        let bytes = Array(body.utf8)
        let defaultPort = usesTLS ? 443 : 80
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + (port == defaultPort ? "" : ":\(port)")
        var head =
            "POST \(path(campaign: campaign, shard: shard)) HTTP/1.1\r\n"
            + "Host: \(hostHeader)\r\n"
            + "User-Agent: apns-bulk\r\n"
            + "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            + "Content-Length: \(bytes.count)\r\n"
            + "Connection: close\r\n"
        if let credentials {
            head += "Authorization: Basic \(Data(credentials.utf8).base64EncodedString())\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + bytes
    }

    /// What the gateway's answer says.
    public enum Verdict: Equatable, Sendable {
        /// A 2xx status.
        case accepted
        /// Anything else, with why in a few words (status line and the first line of the body).
        case refused(String)
    }

    /// The verdict on `response`, the bytes read so far; nil while more is needed (`ended`: the peer closed, so
    /// what there is is all there will be).
    public static func verdict(_ response: [UInt8], ended: Bool) -> Verdict? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = firstIndex(of: separator, in: response) else {
            guard ended else { return nil }
            return .refused(response.isEmpty ? "the connection closed without an answer" : "an answer that is not HTTP")
        }
        let head = String(decoding: response[..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = (lines.first ?? "").split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            return .refused("an answer that is not HTTP")
        }
        let body = response[(headEnd + separator.count)...]
        var length: Int?
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == "content-length" {
                length = Int(pair[1].trimmingCharacters(in: .whitespaces))
            }
        }
        if !ended, status != 204, let length, body.count < length { return nil }
        if !ended, length == nil, status != 204, !(200..<300).contains(status) { return nil }
        if (200..<300).contains(status) { return .accepted }
        let text = String(decoding: body.prefix(300), as: UTF8.self)
        let firstLine = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first.map(String.init) ?? ""
        let reason = statusParts.count > 2 ? " " + statusParts[2] : ""
        return .refused("HTTP \(status)\(reason)" + (firstLine.isEmpty ? "" : ": \(firstLine)"))
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
