/// The pins a connection accepts (seed 003): a chain is acceptable when any of its certificates (leaf,
/// intermediate or root) has a public key in the set. Pin more than one key so that a rotation does not lock
/// clients out. An empty set matches nothing: "no pinning" is the absence of a `PinSet`, not an empty one.
public struct PinSet: Sendable, Hashable {
    public let pins: Set<SPKIPin>

    public init(_ pins: some Sequence<SPKIPin>) {
        self.pins = Set(pins)
    }

    /// Parses each text with `SPKIPin.init(_:)`; throws `invalidPin` naming the first bad one.
    public init(parsing texts: some Sequence<String>) throws(CryptoError) {
        var pins: Set<SPKIPin> = []
        for text in texts { pins.insert(try SPKIPin(text)) }
        self.pins = pins
    }

    public var isEmpty: Bool { pins.isEmpty }

    public func contains(_ pin: SPKIPin) -> Bool {
        pins.contains(pin)
    }

    /// Whether the public key of this DER certificate is pinned; bytes that are not a certificate do not match.
    public func matches(certificateDER: [UInt8]) -> Bool {
        guard !pins.isEmpty, let pin = try? SPKIPin(certificateDER: certificateDER) else { return false }
        return pins.contains(pin)
    }

    /// Whether any of these DER certificates (a peer's chain, in any order) has a pinned public key.
    public func matches(anyOf certificateDERs: [[UInt8]]) -> Bool {
        certificateDERs.contains { matches(certificateDER: $0) }
    }
}
