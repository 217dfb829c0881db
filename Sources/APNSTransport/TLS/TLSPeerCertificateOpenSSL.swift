import APNSCrypto
import COpenSSL

extension TLSPeerCertificate {
    /// Decodes `certificate` (an `X509 *`, borrowed for the call).
    init?(x509 certificate: OpaquePointer) {
        guard let der = Self.encode({ i2d_X509(certificate, $0) }),
              let publicKey = X509_get_X509_PUBKEY(certificate),  // borrowed from the certificate
              let spki = Self.encode({ i2d_X509_PUBKEY(publicKey, $0) }),
              let pin = try? SPKIPin(subjectPublicKeyInfoDER: spki) else { return nil }
        self.der = der
        spkiSHA256Base64 = pin.base64
        let subjectName = X509_get_subject_name(certificate)
        subject = Self.text(of: subjectName)
        issuer = Self.text(of: X509_get_issuer_name(certificate))
        subjectCommonName = Self.attribute(NID_commonName, in: subjectName)
        subjectUserID = Self.attribute(NID_userId, in: subjectName)
        var extensions: [String: [UInt8]] = [:]
        for index in 0..<X509_get_ext_count(certificate) {
            guard let item = X509_get_ext(certificate, index),  // borrowed
                  let object = X509_EXTENSION_get_object(item), let data = X509_EXTENSION_get_data(item) else { continue }
            var oid = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&oid, Int32(oid.count), object, 1)
            guard length > 0, Int(length) < oid.count else { continue }
            let name = String(decoding: oid[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            extensions[name] = Self.bytes(of: data)
        }
        self.extensions = extensions
    }

    /// Runs an `i2d_*` function twice: once for the length, once into a buffer of that length.
    static func encode(_ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
        let length = i2d(nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        return written == length ? bytes : nil
    }

    private static func text(of name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, apns_XN_FLAG_RFC2253_UTF8()) >= 0 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = apns_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    private static func attribute(_ nid: Int32, in name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),  // borrowed
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return nil }
        defer { apns_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    private static func bytes(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        guard let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }
}
