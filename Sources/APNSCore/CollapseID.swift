/// The `apns-collapse-id` header: a non-empty identifier of at most 64 bytes; the device shows only the latest per id.
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
        guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw InputError(.collapseIDInvalid, "collapse id contains a control character")
        }
        self.value = value
    }
}
