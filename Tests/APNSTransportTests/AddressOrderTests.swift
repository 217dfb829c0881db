import Testing

@testable import APNSTransport

/// The address literals these tests use, on port 443.
func addressOn443(_ text: String) -> SocketAddress {
    guard let address = SocketAddress(ipAddress: text, port: 443) else { fatalError("not an address: \(text)") }
    return address
}

/// `AddressOrder`: the families interleaved as RFC 8305 §4 asks, and connection `i` starting at address `i mod n`.
@Suite("address order")
struct AddressOrderTests {
    @Test("the families alternate, starting with the resolver's first, each in its own order")
    func interleaves() {
        let resolved = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2"].map(addressOn443)
        #expect(
            AddressOrder.interleaved(resolved).map(\.host)
                == ["2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3"])
        let ipv4First = ["192.0.2.1", "2001:db8::1", "192.0.2.2", "192.0.2.3"].map(addressOn443)
        #expect(
            AddressOrder.interleaved(ipv4First).map(\.host) == ["192.0.2.1", "2001:db8::1", "192.0.2.2", "192.0.2.3"])
    }

    @Test("one family keeps the resolver's order; nothing stays nothing")
    func oneFamily() {
        let resolved = ["10.9.9.2", "127.0.0.2", "127.0.0.1"].map(addressOn443)
        #expect(AddressOrder.interleaved(resolved) == resolved)
        #expect(AddressOrder.interleaved([]).isEmpty)
    }

    @Test("connection i starts at address i mod n, the ones before it moved to the end")
    func rotates() {
        let addresses = ["192.0.2.1", "192.0.2.2", "192.0.2.3"].map(addressOn443)
        #expect(AddressOrder.rotated(addresses, forConnection: 0) == addresses)
        #expect(
            AddressOrder.rotated(addresses, forConnection: 1).map(\.host) == ["192.0.2.2", "192.0.2.3", "192.0.2.1"])
        #expect(
            AddressOrder.rotated(addresses, forConnection: 5).map(\.host) == ["192.0.2.3", "192.0.2.1", "192.0.2.2"])
        let firsts = (0..<9).map { AddressOrder.rotated(addresses, forConnection: $0)[0] }
        #expect(Set(firsts).count == 3, "nine connections spread over the three addresses")
    }
}
