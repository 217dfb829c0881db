/// Where the pushes go: APNs production, APNs development (sandbox), or an explicit `https://host:port`
/// (a mock, a staging proxy). Ports 443 and 2197 are both APNs ports.
public struct APNSEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// APNs's production server.
    public static let production = APNSEndpoint(host: "api.push.apple.com", port: 443, isApple: true)
    /// APNs's development (sandbox) server.
    public static let development = APNSEndpoint(host: "api.sandbox.push.apple.com", port: 443, isApple: true)

    /// The host name or IP literal (IPv6 without brackets).
    public let host: String
    /// The server's TCP port.
    public let port: Int
    /// Whether this is one of Apple's two environments.
    public let isApple: Bool

    /// The endpoint as `host:port`.
    public var description: String {
        host.contains(":") ? "https://[\(host)]:\(port)" : "https://\(host):\(port)"
    }

    /// The `:authority` header value.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }

    /// An endpoint at `host` and `port`, not one of Apple's.
    public init(host: String, port: Int) {
        self.init(host: host, port: port, isApple: false)
    }

    private init(host: String, port: Int, isApple: Bool) {
        self.host = host
        self.port = port
        self.isApple = isApple
    }

    /// Parses `production`, `development` (also `sandbox`), or `https://host[:port]` (IPv6 in brackets).
    public init(parsing text: String) throws(EndpointError) {
        switch text.lowercased() {
        case "production", "prod": self = .production
        case "development", "dev", "sandbox": self = .development
        default:
            let prefix = "https://"
            guard text.lowercased().hasPrefix(prefix) else {
                throw EndpointError("'\(text)' is not production, development or an https:// URL")
            }
            var rest = Substring(text.dropFirst(prefix.count))
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@") else {
                throw EndpointError("'\(text)' must be https://host or https://host:port, without a path")
            }
            let host: Substring
            var portText: Substring?
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { throw EndpointError("'\(text)' has an unclosed '['") }
                host = rest[rest.index(after: rest.startIndex)..<close]
                let after = rest[rest.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { throw EndpointError("'\(text)' has text after ']'") }
                    portText = after.dropFirst()
                }
            } else if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            guard !host.isEmpty else { throw EndpointError("'\(text)' has no host") }
            var port = 443
            if let portText {
                guard let number = Int(portText), (1...65535).contains(number) else {
                    throw EndpointError("'\(text)' has an invalid port '\(portText)'")
                }
                port = number
            }
            self.init(host: String(host), port: port)
        }
    }
}

/// Why an endpoint string could not be parsed.
public struct EndpointError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problem as one printable line.
    public let description: String
    init(_ description: String) { self.description = description }
}
