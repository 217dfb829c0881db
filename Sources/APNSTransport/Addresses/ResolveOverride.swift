/// One `--resolve HOST:PORT:ADDR[,ADDR…]` entry (curl's convention): the addresses dialed for HOST on PORT instead
/// of resolving the name (docs/CONNECTING.md, "Addresses"). IPv6 in brackets (`[::1]`), the host too when it is
/// one. The addresses keep their order; duplicates are dropped.
public struct ResolveOverride: Hashable, Sendable, CustomStringConvertible {
    /// Lowercase; an IPv6 literal without brackets.
    public let host: String
    /// The port the override applies to.
    public let port: Int
    /// The addresses to connect to instead of resolving the host.
    public let addresses: [SocketAddress]

    /// Whether the entry is the one for `host` (any letter case, an IPv6 literal with or without brackets) on
    /// `port`.
    public func matches(host name: String, port number: Int) -> Bool {
        var name = name.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        return host == name && port == number
    }

    /// "host:port", "[::1]:port".
    public static func hostPort(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The override as `host:port:addresses`.
    public var description: String {
        Self.hostPort(host, port) + ":" + addresses.map { $0.isIPv6 ? "[\($0.host)]" : $0.host }.joined(separator: ",")
    }

    /// Parses `HOST:PORT:ADDR[,ADDR…]`.
    public init(parsing text: String) throws(ResolveOverrideError) {
        var rest = Substring(text)
        let host: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw ResolveOverrideError("the host has an unclosed '['")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ResolveOverrideError("expected HOST:PORT:ADDR[,ADDR…]") }
            guard SocketAddress.isIPLiteral(String(host)) else {
                throw ResolveOverrideError("'[\(host)]' is not an IPv6 address")
            }
        } else {
            guard let colon = rest.firstIndex(of: ":") else {
                throw ResolveOverrideError("expected HOST:PORT:ADDR[,ADDR…]")
            }
            host = rest[..<colon]
            rest = rest[colon...]
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) })
            else { throw ResolveOverrideError("'\(host)' is not a host name") }
        }
        rest = rest.dropFirst()  // the ':' after the host
        guard let colon = rest.firstIndex(of: ":") else {
            throw ResolveOverrideError("expected HOST:PORT:ADDR[,ADDR…]")
        }
        let portText = rest[..<colon]
        guard portText.allSatisfy(\.isASCII), let port = Int(portText), (1...65535).contains(port) else {
            throw ResolveOverrideError("'\(portText)' is not a port (1 to 65535)")
        }
        let list = rest[rest.index(after: colon)...]
        guard !list.isEmpty else { throw ResolveOverrideError("no address after \(host):\(port):") }
        var addresses: [SocketAddress] = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let address = SocketAddress(ipAddress: String(item), port: port) else {
                throw ResolveOverrideError("'\(item)' is not an IPv4 or IPv6 address")
            }
            if !addresses.contains(address) { addresses.append(address) }
        }
        self.host = host.lowercased()
        self.port = port
        self.addresses = addresses
    }
}

/// Why a `--resolve` entry could not be used.
public struct ResolveOverrideError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problem as one printable line.
    public let description: String
    init(_ description: String) { self.description = description }
}
