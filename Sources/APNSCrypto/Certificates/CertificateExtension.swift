/// An extra X.509v3 extension for a test certificate, given by OID and DER value; with the markers Apple puts in
/// APNs client certificates, so tests and the mock can make certificates that look like Apple's.
public struct CertificateExtension: Sendable, Hashable {
    /// Dotted decimal, for example `1.2.840.113635.100.6.3.1`.
    public let oid: String
    /// The DER encoding that goes inside the extension's OCTET STRING.
    public let derValue: [UInt8]
    /// Whether the extension is marked critical.
    public let isCritical: Bool

    /// Throws `invalidCertificateRequest` for an OID that is not dotted decimal or an empty value.
    public init(oid: String, derValue: [UInt8], isCritical: Bool = false) throws(CryptoError) {
        let arcs = oid.split(separator: ".", omittingEmptySubsequences: false)
        guard arcs.count >= 2, arcs.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else {
            throw CryptoError.invalidCertificateRequest.with(context: "extension OID \"\(oid)\" is not dotted decimal")
        }
        guard !derValue.isEmpty else {
            throw CryptoError.invalidCertificateRequest.with(context: "extension \(oid) has an empty value")
        }
        self.oid = oid
        self.derValue = derValue
        self.isCritical = isCritical
    }

    private init(known oid: String, derValue: [UInt8]) {
        self.oid = oid
        self.derValue = derValue
        isCritical = false
    }

    /// Apple's "development (sandbox) APNs" marker, 1.2.840.113635.100.6.3.1, value NULL.
    public static let appleDevelopment = CertificateExtension(
        known: "1.2.840.113635.100.6.3.1", derValue: [0x05, 0x00])

    /// Apple's topics extension, 1.2.840.113635.100.6.3.6: a SEQUENCE alternating each topic (UTF8String) and the
    /// SEQUENCE of UTF8String push kinds allowed for it (`kinds`, the same for every topic here).
    public static func appleTopics(_ topics: [String], kinds: [String] = ["app"]) -> CertificateExtension {
        let kindList = DER.sequence(kinds.flatMap { DER.utf8String($0) })
        let body = topics.flatMap { DER.utf8String($0) + kindList }
        return CertificateExtension(known: "1.2.840.113635.100.6.3.6", derValue: DER.sequence(body))
    }

    /// The extension in OpenSSL's configuration syntax: `critical,DER:05:00`.
    var configurationValue: String {
        let hex = derValue.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        return (isCritical ? "critical," : "") + "DER:" + hex.joined(separator: ":")
    }
}

/// Just enough DER to build extension values: definite-length TLVs.
enum DER {
    static func sequence(_ content: [UInt8]) -> [UInt8] { tlv(tag: 0x30, content) }
    static func utf8String(_ text: String) -> [UInt8] { tlv(tag: 0x0C, Array(text.utf8)) }

    static func tlv(tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var remaining = content.count
            while remaining > 0 {
                length.insert(UInt8(truncatingIfNeeded: remaining), at: 0)
                remaining >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }
}
