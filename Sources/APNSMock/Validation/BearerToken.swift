/// The `authorization` header of token-based trust as APNs reads it: `bearer` (any case), spaces, the JWT.
enum BearerToken {
    /// Why a header value holds no usable JWT: nothing after `bearer` (`MissingProviderToken`), or another scheme
    /// or shape (`InvalidProviderToken`).
    enum Failure: Error {
        case missing
        case malformed
    }

    /// The JWT bytes of an `authorization` value, without the scheme and surrounding spaces.
    static func jwt(in value: [UInt8]) throws(Failure) -> [UInt8] {
        let space = UInt8(ascii: " ")
        var start = 0
        var end = value.count
        while start < end, value[start] == space { start += 1 }
        while end > start, value[end - 1] == space { end -= 1 }
        guard start < end else { throw .missing }
        let scheme: StaticString = "bearer"
        let length = scheme.utf8CodeUnitCount
        let isBearer =
            end - start >= length
            && scheme.withUTF8Buffer { expected in
                (0..<length).allSatisfy { value[start + $0] | 0x20 == expected[$0] }
            }
        guard isBearer else { throw .malformed }
        start += length
        guard start == end || value[start] == space else { throw .malformed }
        while start < end, value[start] == space { start += 1 }
        guard start < end else { throw .missing }
        return Array(value[start..<end])
    }
}
