/// One pass over a request's regular headers: where each APNs header is (an index into `MockRequest.headers`) and
/// whether any APNs header (`apns-*` or `authorization`) appears more than once.
struct RequestHeaderFields {
    var authorization: Int?
    var apnsID: Int?
    var pushType: Int?
    var priority: Int?
    var expiration: Int?
    var topic: Int?
    var collapseID: Int?
    var hasDuplicates = false

    init(scanning headers: [MockRequest.Header]) {
        for index in headers.indices {
            let name = headers[index].name
            switch name.count {
            case 7 where Self.equals(name, "apns-id"): Self.place(&apnsID, index, &hasDuplicates)
            case 10 where Self.equals(name, "apns-topic"): Self.place(&topic, index, &hasDuplicates)
            case 13 where Self.equals(name, "authorization"): Self.place(&authorization, index, &hasDuplicates)
            case 13 where Self.equals(name, "apns-priority"): Self.place(&priority, index, &hasDuplicates)
            case 14 where Self.equals(name, "apns-push-type"): Self.place(&pushType, index, &hasDuplicates)
            case 15 where Self.equals(name, "apns-expiration"): Self.place(&expiration, index, &hasDuplicates)
            case 16 where Self.equals(name, "apns-collapse-id"): Self.place(&collapseID, index, &hasDuplicates)
            default:
                if !hasDuplicates, Self.isOtherAPNSHeader(name), headers[..<index].contains(where: { $0.name == name }) {
                    hasDuplicates = true
                }
            }
        }
    }

    @inline(__always)
    private static func place(_ slot: inout Int?, _ index: Int, _ duplicates: inout Bool) {
        if slot != nil { duplicates = true } else { slot = index }
    }

    /// An `apns-` header this scanner has no slot for (for example one Apple adds later).
    private static func isOtherAPNSHeader(_ name: [UInt8]) -> Bool {
        name.count > 5 && name[0] == UInt8(ascii: "a") && name[1] == UInt8(ascii: "p") && name[2] == UInt8(ascii: "n")
            && name[3] == UInt8(ascii: "s") && name[4] == UInt8(ascii: "-")
    }

    /// Whether `bytes` equals the ASCII literal exactly.
    @inline(__always)
    static func equals(_ bytes: [UInt8], _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in
            for index in 0..<expected.count where bytes[index] != expected[index] { return false }
            return true
        }
    }
}
