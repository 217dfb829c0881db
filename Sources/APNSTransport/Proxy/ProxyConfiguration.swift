import Foundation

/// An HTTP proxy that tunnels with CONNECT (`--proxy http://[user:pass@]host:port`, or `HTTPS_PROXY`): where it
/// is and the credentials for `Proxy-Authorization: Basic`. `description` never shows the password.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// curl's default proxy port, used when the URL has none.
    public static let defaultPort = 1080

    /// The proxy's host name or address.
    public let host: String
    /// The proxy's TCP port.
    public let port: Int
    /// The user name for basic authentication; nil sends none.
    public let username: String?
    /// The password for basic authentication; nil sends none.
    public let password: String?

    /// A proxy at `host` and `port`, with optional credentials.
    public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// Parses `http://[user[:password]@]host[:port][/]` (user and password percent-decoded; IPv6 in brackets).
    /// A bare `host:port` is taken as http. HTTPS proxies (TLS to the proxy itself) are not supported.
    public init(parsing text: String) throws(TransportError) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if let scheme = rest.range(of: "://") {
            let name = rest[..<scheme.lowerBound].lowercased()
            guard name == "http" else {
                throw TransportError(
                    .invalidConfiguration, "proxy '\(Self.redacted(text))': only http:// proxies are supported")
            }
            rest = rest[scheme.upperBound...]
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            username = parts.first.flatMap { String($0).removingPercentEncoding }
            password = parts.count > 1 ? String(parts[1]).removingPercentEncoding : nil
            guard username != nil, parts.count < 2 || password != nil else {
                throw TransportError(
                    .invalidConfiguration, "proxy '\(Self.redacted(text))': bad percent-encoding in credentials")
            }
        }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?") else {
            throw TransportError(
                .invalidConfiguration, "proxy '\(Self.redacted(text))' must be http://[user:pass@]host[:port]")
        }
        var host = rest
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw TransportError(.invalidConfiguration, "proxy '\(Self.redacted(text))' has an unclosed '['")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw TransportError(.invalidConfiguration, "proxy '\(Self.redacted(text))' has text after ']'")
                }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty else {
            throw TransportError(.invalidConfiguration, "proxy '\(Self.redacted(text))' has no host")
        }
        var port = Self.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw TransportError(.invalidConfiguration, "proxy '\(Self.redacted(text))' has an invalid port")
            }
            port = number
        }
        self.init(host: String(host), port: port, username: username, password: password)
    }

    /// The proxy from `HTTPS_PROXY` (or `https_proxy`) for `targetHost`, unless `NO_PROXY` (or `no_proxy`)
    /// exempts it: `*`, an exact host, or a domain suffix (`.example.com` or `example.com`). Nil when none.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        targetHost: String
    ) throws(TransportError) -> ProxyConfiguration? {
        guard let value = environment["HTTPS_PROXY"] ?? environment["https_proxy"], !value.isEmpty else { return nil }
        let exemptions = (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        let host = targetHost.lowercased()
        for exemption in exemptions {
            if exemption == "*" { return nil }
            let domain = exemption.hasPrefix(".") ? String(exemption.dropFirst()) : exemption
            if host == domain || host.hasSuffix("." + domain) { return nil }
        }
        return try ProxyConfiguration(parsing: value)
    }

    /// "http://host:port", with "user@" when there is a user; never the password.
    public var description: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "http://\(username.map { "\($0)@" } ?? "")\(name):\(port)"
    }

    /// The CONNECT request for `host:port` (IPv6 literals in brackets), with Basic credentials when set.
    public func connectRequest(host targetHost: String, port targetPort: Int) -> [UInt8] {
        let name = targetHost.contains(":") ? "[\(targetHost)]" : targetHost
        let authority = "\(name):\(targetPort)"
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let username {
            let token = Data("\(username):\(password ?? "")".utf8).base64EncodedString()
            request += "Proxy-Authorization: Basic \(token)\r\n"
        }
        request += "\r\n"
        return Array(request.utf8)
    }

    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let prefix = text.range(of: "://").map { String(text[..<$0.upperBound]) } ?? ""
        return prefix + "***" + text[at...]
    }
}
