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
