/// What the mock needs from a client certificate presented in the TLS handshake (certificate-based trust): the
/// topics it may push to and the APNs environments it is valid for. The glue extracts these with OpenSSL:
///
/// - the subject's UID attribute (OID 0.9.2342.19200300.100.1.1): the bundle id (the certificate's topic);
/// - the topics of Apple's extension 1.2.840.113635.100.6.3.6 (multi-topic "universal" certificates: a DER
///   SEQUENCE alternating a UTF8String topic and a SEQUENCE of UTF8String push kinds);
/// - whether the extensions 1.2.840.113635.100.6.3.1 (development / sandbox) and 1.2.840.113635.100.6.3.2
///   (production) are present.
///
/// A certificate with neither environment extension (a generated test certificate) is valid for both.
public struct MockClientCertificate: Sendable, Hashable {
    /// The topics, subject UID first, without duplicates.
    public let topics: [String]
    /// Valid against the development (sandbox) environment.
    public let allowsDevelopment: Bool
    /// Valid against the production environment.
    public let allowsProduction: Bool

    /// A client certificate's facts, as the mock checks them.
    public init(
        subjectUID: String?,
        extensionTopics: [String] = [],
        hasDevelopmentExtension: Bool = false,
        hasProductionExtension: Bool = false
    ) {
        var topics: [String] = []
        for topic in [subjectUID].compactMap({ $0 }) + extensionTopics where !topic.isEmpty && !topics.contains(topic) {
            topics.append(topic)
        }
        self.topics = topics
        let neither = !hasDevelopmentExtension && !hasProductionExtension
        allowsDevelopment = neither || hasDevelopmentExtension
        allowsProduction = neither || hasProductionExtension
    }
}
