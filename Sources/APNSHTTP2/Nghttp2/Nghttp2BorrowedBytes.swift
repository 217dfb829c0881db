/// Bytes nghttp2 lends a callback (a header name or value, a DATA chunk, GOAWAY debug data): valid only until
/// the callback returns, so the sessions copy what they keep. The safe face of a raw pointer, for the
/// `Nghttp2EventSink` methods.
struct Nghttp2BorrowedBytes {
    private let buffer: UnsafeRawBufferPointer

    init(_ start: UnsafeRawPointer?, count: Int) {
        self.buffer = UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count > 0 ? count : 0)
    }

    var count: Int { buffer.count }
    var isEmpty: Bool { buffer.isEmpty }

    subscript(index: Int) -> UInt8 { buffer[index] }

    /// Appends all the bytes to `array`, as typed bytes (nghttp2 hands out `uint8_t` arrays): the typed copy takes
    /// the array's contiguous-storage path, cheaper than the generic one a raw buffer gets.
    func append(to array: inout [UInt8]) {
        array.append(contentsOf: buffer.assumingMemoryBound(to: UInt8.self))
    }

    /// Appends `first`, then `second`, to `array` with one capacity check and no call per part (a received
    /// header field's name and value: most are a few bytes, where `append(contentsOf:)`'s fixed cost is most of it).
    static func append(_ first: Self, _ second: Self, to array: inout [UInt8]) {
        array.append(addingCapacity: first.count &+ second.count) { output in
            output.withUnsafeMutableBufferPointer { storage, initialized in
                let target = UnsafeMutableRawBufferPointer(storage)
                first.copy(into: target, at: &initialized)
                second.copy(into: target, at: &initialized)
            }
        }
    }

    @inline(__always)
    private func copy(into target: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        guard let source = buffer.baseAddress, let base = target.baseAddress, buffer.count > 0 else { return }
        (base + offset).copyMemory(from: source, byteCount: buffer.count)
        offset &+= buffer.count
    }

    /// Appends at most `limit` bytes to `array`, the same way.
    func append(to array: inout [UInt8], limit: Int) {
        guard limit > 0 else { return }
        array.append(
            contentsOf: UnsafeRawBufferPointer(rebasing: buffer.prefix(limit)).assumingMemoryBound(to: UInt8.self))
    }

    /// Whether the bytes equal an ASCII literal.
    func equals(_ literal: StaticString) -> Bool {
        guard buffer.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in
            for index in 0..<expected.count where buffer[index] != expected[index] { return false }
            return true
        }
    }

    /// The bytes as a non-negative decimal number, or nil when they are not one (or are longer than 9 digits).
    var decimalValue: Int? {
        guard !buffer.isEmpty, buffer.count <= 9 else { return nil }
        var value = 0
        for byte in buffer {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The bytes as text (lossy UTF-8), for error descriptions.
    var text: String { String(decoding: buffer, as: UTF8.self) }
}

/// The buffer nghttp2 hands a data-source read callback to fill with body bytes; valid only inside the callback.
struct Nghttp2OutputWindow {
    private let buffer: UnsafeMutableRawBufferPointer

    init(_ start: UnsafeMutableRawPointer?, count: Int) {
        self.buffer = UnsafeMutableRawBufferPointer(start: count > 0 ? start : nil, count: count > 0 ? count : 0)
    }

    var count: Int { buffer.count }

    /// Copies as much of `source[offset...]` as fits and returns the number of bytes copied.
    func fill(from source: [UInt8], offset: Int) -> Int {
        let length = min(buffer.count, source.count - offset)
        guard length > 0 else { return 0 }
        source.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]))
        }
        return length
    }
}
