internal import COpenSSL

/// One block of PEM text: its label (`CERTIFICATE`, `PRIVATE KEY`, ...), whether its headers mark it encrypted
/// (legacy `Proc-Type: 4,ENCRYPTED`), and its DER body.
struct PEMBlock {
    let label: String
    let isEncrypted: Bool
    let der: [UInt8]
}

/// Splits PEM text into its blocks with OpenSSL's own reader (`PEM_read_bio`), so every later step works on DER.
enum OpenSSLPEM {
    /// Every block, in order. Text around and between blocks is ignored; a block with broken framing or base64
    /// throws `malformedPEM`.
    static func blocks(in pem: [UInt8]) throws(CryptoError) -> [PEMBlock] {
        let bio = try OpenSSLMemoryBIO(copying: pem)
        var blocks: [PEMBlock] = []
        while true {
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard PEM_read_bio(bio.pointer, &name, &header, &data, &length) == 1 else {
                let last = ERR_peek_last_error()
                if ERR_GET_LIB(last) == ERR_LIB_PEM, ERR_GET_REASON(last) == PEM_R_NO_START_LINE { break }
                throw OpenSSLError.failure("PEM block \(blocks.count + 1)", kind: .malformedPEM)
            }
            defer {
                apns_OPENSSL_free(name)
                apns_OPENSSL_free(header)
                apns_OPENSSL_free(data)
            }
            let label = name.map { String(cString: $0) } ?? ""
            let headers = header.map { String(cString: $0) } ?? ""
            let der = data.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
            blocks.append(PEMBlock(label: label, isEncrypted: headers.contains("ENCRYPTED"), der: der))
        }
        OpenSSLError.clearQueue()  // the reader ends with "no start line" at the end of the text
        return blocks
    }

    /// `der` wrapped as a PEM block with `label`, 64 base64 characters a line (`PEM_write_bio`).
    static func encode(label: String, der: [UInt8]) throws(CryptoError) -> String {
        let bio = try OpenSSLMemoryBIO()
        let written = der.withUnsafeBufferPointer { buffer in
            PEM_write_bio(bio.pointer, label, "", buffer.baseAddress, buffer.count)
        }
        guard written > 0 else { throw OpenSSLError.failure("PEM_write_bio") }
        return bio.text()
    }
}

// MARK: - OpenSSLMemoryBIO

/// Owns one OpenSSL memory `BIO`: a growable in-memory buffer that the PEM readers read from and writers write to.
final class OpenSSLMemoryBIO {
    /// The `BIO *`, freed with `BIO_free` in `deinit`.
    let pointer: OpaquePointer

    /// An empty BIO to write into.
    init() throws(CryptoError) {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError.failure("BIO_new") }
        pointer = bio
    }

    /// A BIO holding a copy of `bytes`, to read from.
    convenience init(copying bytes: [UInt8]) throws(CryptoError) {
        try self.init()
        guard !bytes.isEmpty else { return }
        let written = bytes.withUnsafeBytes { BIO_write(pointer, $0.baseAddress, Int32(clamping: $0.count)) }
        guard written == Int32(clamping: bytes.count) else { throw OpenSSLError.failure("BIO_write") }
    }

    deinit {
        BIO_free(pointer)
    }

    /// The bytes written so far (and not yet read).
    func contents() -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = apns_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The bytes written so far, as text (PEM output is ASCII).
    func text() -> String {
        String(decoding: contents(), as: UTF8.self)
    }
}
