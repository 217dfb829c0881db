import Dispatch
internal import Glibc

/// An IPv4 or IPv6 socket address (the raw `sockaddr_in`/`sockaddr_in6` bytes), with its printable host and port.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The numeric host, IPv6 without brackets ("127.0.0.1", "::1").
    public let host: String
    /// The TCP port.
    public let port: Int
    /// `AF_INET` or `AF_INET6`.
    let family: Int32
    /// The `sockaddr` bytes handed to connect/bind.
    let raw: [UInt8]

    /// Whether the address is IPv6.
    public var isIPv6: Bool { family == AF_INET6 }

    /// "127.0.0.1:443" or "[::1]:443".
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// An address from a numeric IPv4 or IPv6 literal (IPv6 with or without brackets); nil for host names.
    public init?(ipAddress text: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var literal = text
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        guard
            let address = Self(literal, port: port, as: sockaddr_in.self)
                ?? Self(literal, port: port, as: sockaddr_in6.self)
        else { return nil }
        self = address
    }

    /// The address `literal` names in the family of `Address`; nil when it is no such literal.
    private init?<Address: IPSocketAddressStorage>(_ literal: String, port: Int, as _: Address.Type) {
        var address = Address()
        guard address.setIP(literal) else { return nil }
        address.family = sa_family_t(Address.family)
        address.port = in_port_t(UInt16(port).bigEndian)
        self.init(family: Address.family, raw: SocketSystemCalls.bytes(of: address), host: literal, port: port)
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

    /// The address in a `sockaddr_in` or `sockaddr_in6`.
    init?<Address: IPSocketAddressStorage>(_ storage: Address) {
        guard let host = storage.ipText else { return nil }
        self.init(
            family: Address.family, raw: SocketSystemCalls.bytes(of: storage), host: host,
            port: Int(UInt16(bigEndian: storage.port)))
    }
}

// MARK: - IPSocketAddressStorage

/// What `SocketAddress` reads and writes in a `sockaddr_in` or a `sockaddr_in6`, so one piece of code serves both:
/// the two differ only in their family's constants and in where they keep the family, the address and the port
/// (`IPSocketAddressLayout`).
protocol IPSocketAddressStorage {
    /// `in_addr` or `in6_addr`.
    associatedtype IP
    static var layout: IPSocketAddressLayout<Self, IP> { get }
    init()
}

/// A family's constants and the fields of its `sockaddr_in`/`sockaddr_in6`.
struct IPSocketAddressLayout<Storage, IP> {
    /// `AF_INET` or `AF_INET6`.
    let family: Int32
    /// The longest text `inet_ntop` makes of an address of the family.
    let textLength: Int32
    let familyField: WritableKeyPath<Storage, sa_family_t>
    let ipField: WritableKeyPath<Storage, IP>
    /// Network byte order.
    let portField: WritableKeyPath<Storage, in_port_t>
}

extension IPSocketAddressStorage {
    static var family: Int32 { layout.family }
    static var textLength: Int32 { layout.textLength }
    var family: sa_family_t {
        get { self[keyPath: Self.layout.familyField] }
        set { self[keyPath: Self.layout.familyField] = newValue }
    }
    /// Network byte order.
    var port: in_port_t {
        get { self[keyPath: Self.layout.portField] }
        set { self[keyPath: Self.layout.portField] = newValue }
    }

    /// Sets the address to the one `literal` names (`inet_pton`); false when it names none of this family.
    mutating func setIP(_ literal: String) -> Bool {
        SocketSystemCalls.parseIP(literal, family: Self.family, into: &self[keyPath: Self.layout.ipField])
    }

    /// The address as text (`inet_ntop`); nil on failure.
    var ipText: String? {
        SocketSystemCalls.ipText(
            self[keyPath: Self.layout.ipField], family: Self.family, maximumLength: Self.textLength)
    }
}

extension sockaddr_in: IPSocketAddressStorage {
    static var layout: IPSocketAddressLayout<Self, in_addr> {
        IPSocketAddressLayout(
            family: AF_INET, textLength: INET_ADDRSTRLEN,
            familyField: \.sin_family, ipField: \.sin_addr, portField: \.sin_port)
    }
}

extension sockaddr_in6: IPSocketAddressStorage {
    static var layout: IPSocketAddressLayout<Self, in6_addr> {
        IPSocketAddressLayout(
            family: AF_INET6, textLength: INET6_ADDRSTRLEN,
            familyField: \.sin6_family, ipField: \.sin6_addr, portField: \.sin6_port)
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
    public func resolve(
        host: String, port: Int,
        completion: @escaping (Result<[SocketAddress], TransportError>) -> Void
    ) {
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
