/// The `apns-expiration` header: UNIX epoch seconds after which APNs stops trying; `0` means deliver once, never store.
public struct Expiration: Hashable, Sendable, CustomStringConvertible {
    /// Deliver once, do not store.
    public static let immediately = Expiration(uncheckedEpochSeconds: 0)
    /// The largest value accepted: the header is a 32-bit epoch in practice.
    public static let maximumEpochSeconds: Int64 = 4_294_967_295

    public let epochSeconds: Int64
    public var description: String { String(epochSeconds) }

    /// Validates epoch seconds (0 allowed).
    public init(epochSeconds: Int64) throws(InputError) {
        guard epochSeconds >= 0, epochSeconds <= Self.maximumEpochSeconds else {
            throw InputError(.expirationInvalid, "expiration \(epochSeconds) is not epoch seconds between 0 and \(Self.maximumEpochSeconds)")
        }
        self.epochSeconds = epochSeconds
    }

    /// Parses epoch seconds written as decimal digits.
    public init(parsing text: some StringProtocol) throws(InputError) {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let value = Int64(text)
        else {
            throw InputError(.expirationInvalid, "expiration '\(text)' is not epoch seconds")
        }
        try self.init(epochSeconds: value)
    }

    private init(uncheckedEpochSeconds: Int64) {
        self.epochSeconds = uncheckedEpochSeconds
    }
}
