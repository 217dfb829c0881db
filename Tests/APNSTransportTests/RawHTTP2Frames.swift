@testable import APNSHTTP2

/// A raw HTTP/2 client's frames, written byte by byte (RFC 9113 section 4), for tests that must send what a
/// well-behaved client session never would (resets of answered streams, frames on closed streams, stream ids out
/// of order); and the server's output cut back into frames. Header blocks use HPACK literals without indexing or
/// Huffman coding (RFC 7541 section 6.2.2), so names and values must be shorter than 127 bytes.
enum RawHTTP2Frames {
    /// One frame as read from the wire.
    struct Frame: Equatable, CustomStringConvertible {
        let type: UInt8
        let flags: UInt8
        let streamID: Int32
        let payload: [UInt8]

        /// The error code of an RST_STREAM or GOAWAY.
        var errorCode: HTTP2ErrorCode? {
            switch type {
            case FrameType.rstStream where payload.count >= 4: return HTTP2ErrorCode(rawValue: Self.word(payload, 0))
            case FrameType.goaway where payload.count >= 8: return HTTP2ErrorCode(rawValue: Self.word(payload, 4))
            default: return nil
            }
        }

        /// The SETTINGS_MAX_CONCURRENT_STREAMS entry of a SETTINGS frame, if any.
        var maxConcurrentStreams: UInt32? {
            guard type == FrameType.settings else { return nil }
            var value: UInt32?
            for offset in stride(from: 0, to: payload.count - payload.count % 6, by: 6)
            where payload[offset] == 0 && payload[offset + 1] == 3 {
                value = Self.word(payload, offset + 2)
            }
            return value
        }

        var isAck: Bool { flags & 0x1 != 0 && (type == FrameType.settings || type == FrameType.ping) }

        var description: String { "frame(type \(type), flags \(flags), stream \(streamID), \(payload.count) bytes)" }

        private static func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
    }

    /// Frame type numbers (RFC 9113 section 6).
    enum FrameType {
        static let data: UInt8 = 0
        static let headers: UInt8 = 1
        static let rstStream: UInt8 = 3
        static let settings: UInt8 = 4
        static let ping: UInt8 = 6
        static let goaway: UInt8 = 7
    }

    /// The client connection preface and an empty SETTINGS frame.
    static var preface: [UInt8] {
        Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(FrameType.settings, flags: 0, streamID: 0, [])
    }

    static var settingsAck: [UInt8] { frame(FrameType.settings, flags: 0x1, streamID: 0, []) }

    /// A HEADERS frame (END_HEADERS) with a POST to `/3/device/<hex>`.
    static func request(streamID: Int32, endStream: Bool = true) -> [UInt8] {
        headers(
            streamID: streamID, endStream: endStream,
            fields: [
                (":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + String(repeating: "ab", count: 32)),
                (":authority", "127.0.0.1"), ("apns-topic", "com.example.app"),
            ])
    }

    static func headers(streamID: Int32, endStream: Bool, fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0x00)
            block.append(UInt8(name.utf8.count))
            block.append(contentsOf: name.utf8)
            block.append(UInt8(value.utf8.count))
            block.append(contentsOf: value.utf8)
        }
        return frame(FrameType.headers, flags: 0x4 | (endStream ? 0x1 : 0), streamID: streamID, block)
    }

    static func data(streamID: Int32, _ bytes: [UInt8], endStream: Bool = true) -> [UInt8] {
        frame(FrameType.data, flags: endStream ? 0x1 : 0, streamID: streamID, bytes)
    }

    static func reset(streamID: Int32, errorCode: HTTP2ErrorCode = .cancel) -> [UInt8] {
        let code = errorCode.rawValue
        return frame(
            FrameType.rstStream, flags: 0, streamID: streamID,
            [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: code >> $0) })
    }

    static func frame(_ type: UInt8, flags: UInt8, streamID: Int32, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        let id = UInt32(bitPattern: streamID) & 0x7FFF_FFFF
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: id >> $0) } + payload
    }

    /// Cuts `bytes` (a server's output, from its start: SETTINGS first, no preface) into frames; a partial frame at
    /// the end stays in `bytes`.
    static func parse(_ bytes: inout [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset >= 9 + length else { break }
            let id = bytes[offset + 5..<offset + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append(
                Frame(
                    type: bytes[offset + 3], flags: bytes[offset + 4], streamID: Int32(id),
                    payload: Array(bytes[offset + 9..<offset + 9 + length])))
            offset += 9 + length
        }
        bytes.removeFirst(offset)
        return frames
    }
}

/// An `HTTP2ServerSession` driven by raw client bytes: what it answers comes back as frames, its events as a list.
final class RawHTTP2ServerHarness {
    let server: HTTP2ServerSession
    private var pending: [UInt8] = []
    /// Every frame the server has sent so far.
    private(set) var frames: [RawHTTP2Frames.Frame] = []
    /// Every event the server has recorded so far.
    private(set) var events: [HTTP2ServerEvent] = []

    init(configuration: HTTP2ServerConfiguration = HTTP2ServerConfiguration(maxConcurrentStreams: 100)) throws {
        server = try HTTP2ServerSession(configuration: configuration)
    }

    /// Feeds `bytes` to the server, then collects its events and output. Returns the new frames.
    @discardableResult
    func send(_ bytes: [UInt8]) -> [RawHTTP2Frames.Frame] {
        server.receive(bytes)
        return collect()
    }

    /// Collects the server's events and output; returns the new frames.
    @discardableResult
    func collect() -> [RawHTTP2Frames.Frame] {
        events.append(contentsOf: server.takeEvents())
        server.produceOutput(into: &pending)
        events.append(contentsOf: server.takeEvents())
        let new = RawHTTP2Frames.parse(&pending)
        frames.append(contentsOf: new)
        return new
    }

    /// The stream ids of the requests received so far, in order.
    var requestStreamIDs: [Int32] {
        events.compactMap { if case .request(let request) = $0 { return request.streamID } else { return nil } }
    }

    /// The connection errors recorded so far.
    var connectionErrors: [HTTP2Error] {
        events.compactMap { if case .connectionError(let error) = $0 { return error } else { return nil } }
    }

    /// The GOAWAY frames sent so far.
    var goaways: [RawHTTP2Frames.Frame] { frames.filter { $0.type == RawHTTP2Frames.FrameType.goaway } }
}
