internal import COpenSSL

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
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// The bytes written so far, as text (PEM output is ASCII).
    func text() -> String {
        String(decoding: contents(), as: UTF8.self)
    }
}
