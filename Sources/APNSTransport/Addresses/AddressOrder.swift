/// The order one connection dials a host's addresses in (docs/CONNECTING.md, "Addresses"): the resolver's order
/// with the two families interleaved as RFC 8305 §4 asks (one address of the first family, then one of the other,
/// and so on), rotated so that connection `i` starts at the `i mod n`th address and the pool's connections spread
/// over every address the name returns.
enum AddressOrder {
    /// `addresses` (the resolver's order) with IPv6 and IPv4 alternating, starting with the family of the first;
    /// each family keeps its own order, and what is left of the longer family follows.
    static func interleaved(_ addresses: [SocketAddress]) -> [SocketAddress] {
        guard let first = addresses.first else { return [] }
        let leading = addresses.filter { $0.isIPv6 == first.isIPv6 }
        let other = addresses.filter { $0.isIPv6 != first.isIPv6 }
        var order: [SocketAddress] = []
        order.reserveCapacity(addresses.count)
        for index in 0..<max(leading.count, other.count) {
            if index < leading.count { order.append(leading[index]) }
            if index < other.count { order.append(other[index]) }
        }
        return order
    }

    /// `addresses` started at the `connection mod count`th one, the ones before it moved to the end.
    static func rotated(_ addresses: [SocketAddress], forConnection connection: Int) -> [SocketAddress] {
        guard addresses.count > 1 else { return addresses }
        let start = ((connection % addresses.count) + addresses.count) % addresses.count
        return Array(addresses[start...] + addresses[..<start])
    }
}
