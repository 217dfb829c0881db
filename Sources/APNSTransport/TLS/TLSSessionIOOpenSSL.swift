/// `TLSSessionOpenSSL`'s reads and writes for Swift buffers: where the loop's `[UInt8]` read buffer and the
/// output buffer's `RawSpan` become the pointers `SSL_read_ex`/`SSL_write_ex` take, without a copy.
extension TLSSessionOpenSSL {
    /// Decrypts what is available into the start of `buffer` (at most `buffer.count` bytes).
    func read(into buffer: inout [UInt8]) -> TLSSessionResult {
        buffer.withUnsafeMutableBytes { read(into: $0) }
    }

    /// Encrypts and sends from `bytes` (see `write(_:)` on the raw buffer: the same bytes again after a want).
    func write(_ bytes: RawSpan) -> TLSSessionResult {
        bytes.withUnsafeBytes { write($0) }
    }
}
