import Glibc

/// An IPv4 or IPv6 socket address (the raw `sockaddr_in`/`sockaddr_in6` bytes), with its printable host and port.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The numeric host, IPv6 without brackets ("127.0.0.1", "::1").
    public let host: String
    public let port: Int
    /// `AF_INET` or `AF_INET6`.
    let family: Int32
    /// The `sockaddr` bytes handed to connect/bind.
    let raw: [UInt8]

    public var isIPv6: Bool { family == AF_INET6 }

    /// "127.0.0.1:443" or "[::1]:443".
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// An address from a numeric IPv4 or IPv6 literal (IPv6 with or without brackets); nil for host names.
    public init?(ipAddress text: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var literal = text
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            self.init(family: AF_INET, raw: withUnsafeBytes(of: &v4) { Array($0) }, host: literal, port: port)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self.init(family: AF_INET6, raw: withUnsafeBytes(of: &v6) { Array($0) }, host: literal, port: port)
            return
        }
        return nil
    }

    /// Whether `text` is an IPv4 or IPv6 literal (then no SNI is sent and the certificate must name the IP).
    public static func isIPLiteral(_ text: String) -> Bool {
        SocketAddress(ipAddress: text, port: 0) != nil
    }

    private init(family: Int32, raw: [UInt8], host: String, port: Int) {
        self.family = family
        self.raw = raw
        self.host = host
        self.port = port
    }

    /// Reads a `sockaddr` (from getaddrinfo, accept, getsockname); nil for families other than IPv4/IPv6.
    init?(sockaddr pointer: UnsafeRawPointer, length: Int) {
        let family = Int32(pointer.load(as: sockaddr.self).sa_family)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch family {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            var v4 = pointer.load(as: sockaddr_in.self)
            guard inet_ntop(AF_INET, &v4.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
            self.init(family: family, raw: Array(UnsafeRawBufferPointer(start: pointer, count: MemoryLayout<sockaddr_in>.size)),
                      host: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                      port: Int(UInt16(bigEndian: v4.sin_port)))
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            var v6 = pointer.load(as: sockaddr_in6.self)
            guard inet_ntop(AF_INET6, &v6.sin6_addr, &text, socklen_t(text.count)) != nil else { return nil }
            self.init(family: family, raw: Array(UnsafeRawBufferPointer(start: pointer, count: MemoryLayout<sockaddr_in6>.size)),
                      host: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                      port: Int(UInt16(bigEndian: v6.sin6_port)))
        default:
            return nil
        }
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        raw.withUnsafeBytes { bytes in
            // `raw` was copied from a sockaddr_in/sockaddr_in6, so its start is a valid sockaddr.
            body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
    }
}
