import Dispatch
internal import Glibc

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
            self.init(family: AF_INET, raw: SocketSystemCalls.bytes(of: v4), host: literal, port: port)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self.init(family: AF_INET6, raw: SocketSystemCalls.bytes(of: v6), host: literal, port: port)
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

    /// The address in a `sockaddr_in`.
    init?(_ v4: sockaddr_in) {
        var address = v4.sin_addr
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else { return nil }
        self.init(family: AF_INET, raw: SocketSystemCalls.bytes(of: v4), host: Self.string(text),
                  port: Int(UInt16(bigEndian: v4.sin_port)))
    }

    /// The address in a `sockaddr_in6`.
    init?(_ v6: sockaddr_in6) {
        var address = v6.sin6_addr
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return nil }
        self.init(family: AF_INET6, raw: SocketSystemCalls.bytes(of: v6), host: Self.string(text),
                  port: Int(UInt16(bigEndian: v6.sin6_port)))
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// MARK: - Resolve

extension SocketAddress {
    /// Resolves `host` (a name or an IP literal) to TCP addresses, blocking in `getaddrinfo`. IPv6 and IPv4
    /// addresses in the resolver's order. Do not call on a busy event loop: use `EventLoop.resolve`.
    public static func resolve(host: String, port: Int) throws(TransportError) -> [SocketAddress] {
        guard (0...65535).contains(port) else {
            throw TransportError(.nameResolutionFailed, "port \(port) is out of range")
        }
        if let literal = SocketAddress(ipAddress: host, port: port) { return [literal] }
        let addresses = try SocketSystemCalls.addresses(host: host, port: port)
        guard !addresses.isEmpty else { throw TransportError(.nameResolutionFailed, "\(host): no addresses") }
        return addresses
    }
}

extension EventLoop {
    /// Resolves `host` without blocking the loop: IP literals on the next turn, names with `getaddrinfo` on a
    /// background queue. `completion` runs on this loop.
    public func resolve(host: String, port: Int,
                        completion: @escaping (Result<[SocketAddress], TransportError>) -> Void) {
        if let literal = SocketAddress(ipAddress: host, port: port) {
            executeNextTurn { completion(.success([literal])) }
            return
        }
        let request = beginResolution(completion)
        let handle = self.handle
        DispatchQueue.global().async {
            let result: Result<[SocketAddress], TransportError>
            do throws(TransportError) {
                result = .success(try SocketAddress.resolve(host: host, port: port))
            } catch {
                result = .failure(error)
            }
            handle.execute { loop in loop.finishResolution(request, result) }
        }
    }
}
