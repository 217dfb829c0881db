/// The `apns-collapse-id` header: a non-empty identifier of at most 64 bytes; the device shows only the latest per id.
///
/// Any Unicode text that `HeaderFieldValue` allows: no blank at either end, no control character.
public struct CollapseID: Hashable, Sendable, CustomStringConvertible {
    public static let maximumBytes = 64

    public let value: String
    public var description: String { value }

    public init(validating value: String) throws(InputError) {
        guard !value.isEmpty else { throw InputError(.collapseIDInvalid, "collapse id is empty") }
        let bytes = value.utf8.count
        guard bytes <= Self.maximumBytes else {
            throw InputError(.collapseIDTooLong, "collapse id is \(bytes) bytes: longer than \(Self.maximumBytes)")
        }
        if let problem = HeaderFieldValue.problem(in: value) {
            throw InputError(.collapseIDInvalid, "collapse id '\(value)' \(problem): not allowed in an HTTP/2 header value")
        }
        self.value = value
    }

    /// Validates a collapse id given as bytes (a header as received, a CSV cell): they must also be valid UTF-8.
    public init(validatingBytes bytes: [UInt8]) throws(InputError) {
        if let bad = UTF8Validation.firstInvalidByte(bytes, in: 0..<bytes.count) {
            throw InputError(.collapseIDInvalid, "collapse id is not valid UTF-8 (byte \(bad + 1))")
        }
        try self.init(validating: String(decoding: bytes, as: UTF8.self))
    }
}
