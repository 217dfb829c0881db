import Dispatch

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
