import APNSTransport

/// Reading what the validator needs from the client certificate of a TLS handshake (see `MockClientCertificate`):
/// the subject UID, the topics of Apple's multi-topic extension, and the environment extensions.
extension MockClientCertificate {
    /// Apple's extension listing the topics of a multi-topic ("universal") push certificate.
    static let topicsExtensionOID = "1.2.840.113635.100.6.3.6"
    /// Present on certificates valid against the development (sandbox) environment.
    static let developmentExtensionOID = "1.2.840.113635.100.6.3.1"
    /// Present on certificates valid against the production environment.
    static let productionExtensionOID = "1.2.840.113635.100.6.3.2"

    /// The certificate's topics and environments. Without a subject UID, a common name in Apple's form
    /// ("Apple Push Services: com.example.app") names the topic.
    init(peer certificate: TLSPeerCertificate) {
        var subjectTopic = certificate.subjectUserID
        if subjectTopic == nil, let commonName = certificate.subjectCommonName,
           let range = commonName.range(of: "Push Services: ") {
            subjectTopic = String(commonName[range.upperBound...])
        }
        let extensionTopics = certificate.extensions[Self.topicsExtensionOID].map(Self.topics(inExtension:)) ?? []
        self.init(
            subjectUID: subjectTopic,
            extensionTopics: extensionTopics,
            hasDevelopmentExtension: certificate.extensions[Self.developmentExtensionOID] != nil,
            hasProductionExtension: certificate.extensions[Self.productionExtensionOID] != nil
        )
    }

    /// The topics in the DER value of Apple's topics extension: a SEQUENCE alternating a UTF8String topic and a
    /// SEQUENCE of push kinds. Returns the top-level strings; malformed DER yields what was read before it.
    static func topics(inExtension der: [UInt8]) -> [String] {
        var outer = DERReader(der[...])
        guard let sequence = outer.next(), sequence.tag == 0x30 else { return [] }
        var inner = DERReader(sequence.content)
        var topics: [String] = []
        while let element = inner.next() {
            // UTF8String, PrintableString or IA5String.
            if element.tag == 0x0C || element.tag == 0x13 || element.tag == 0x16 {
                topics.append(String(decoding: element.content, as: UTF8.self))
            }
        }
        return topics
    }
}

/// Walks DER elements (tag, definite length, content) in a byte range, stopping at the first malformed one.
private struct DERReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    mutating func next() -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        var index = bytes.startIndex
        guard index < bytes.endIndex else { return nil }
        let tag = bytes[index]
        index += 1
        guard index < bytes.endIndex else { return nil }
        let first = bytes[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4, bytes.endIndex - index >= count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        guard bytes.endIndex - index >= length else { return nil }
        let content = bytes[index..<index + length]
        bytes = bytes[(index + length)...]
        return (tag, content)
    }
}
