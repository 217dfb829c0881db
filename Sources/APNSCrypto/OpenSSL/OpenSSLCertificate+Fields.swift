internal import COpenSSL

/// What people and the mock read from a certificate: subject and issuer lines, single subject attributes, and
/// the raw values of its extensions by OID.
extension OpenSSLCertificate {
    /// The subject as one RFC 2253 line (`CN=api.example,O=Example`).
    package var subjectLine: String { Self.line(of: X509_get_subject_name(pointer)) }

    /// The issuer as one RFC 2253 line.
    package var issuerLine: String { Self.line(of: X509_get_issuer_name(pointer)) }

    /// The subject's first common name (CN), if any.
    package var subjectCommonName: String? { Self.attribute(NID_commonName, in: X509_get_subject_name(pointer)) }

    /// The subject's first user ID (UID, OID 0.9.2342.19200300.100.1.1), if any: an APNs certificate's topic.
    package var subjectUserID: String? { Self.attribute(NID_userId, in: X509_get_subject_name(pointer)) }

    /// Each extension's value (the contents of its OCTET STRING, DER) by dotted OID.
    package var extensions: [String: [UInt8]] {
        var extensions: [String: [UInt8]] = [:]
        for index in 0..<X509_get_ext_count(pointer) {
            guard let item = X509_get_ext(pointer, index),  // borrowed from the certificate
                  let object = X509_EXTENSION_get_object(item), let data = X509_EXTENSION_get_data(item) else { continue }
            var oid = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&oid, Int32(oid.count), object, 1)
            guard length > 0, Int(length) < oid.count else { continue }
            let name = String(decoding: oid[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard let bytes = ASN1_STRING_get0_data(data) else { continue }
            extensions[name] = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
        }
        return extensions
    }

    /// An `X509_NAME` (borrowed) as one RFC 2253 line; empty when it cannot be printed.
    private static func line(of name: OpaquePointer?) -> String {
        guard let name, let bio = try? OpenSSLMemoryBIO() else { return "" }
        guard X509_NAME_print_ex(bio.pointer, name, 0, apns_XN_FLAG_RFC2253_UTF8()) >= 0 else {
            OpenSSLError.clearQueue()
            return ""
        }
        return bio.text()
    }

    /// The first attribute `nid` of an `X509_NAME` (borrowed), as UTF-8.
    private static func attribute(_ nid: Int32, in name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),  // borrowed
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else {
            OpenSSLError.clearQueue()
            return nil
        }
        defer { apns_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }
}
