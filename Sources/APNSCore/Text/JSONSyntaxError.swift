/// Where and why a byte buffer is not valid JSON: the 0-based byte offset into the scanned buffer and a short message.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    public let offset: Int
    public let message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at byte \(offset + 1)" }
}
