import APNSCore

/// A failure of the HTTP/2 layer: a call the session refused, or a connection nghttp2 gave up on. Two errors are
/// equal when their kind is equal; `description` adds the detail (nghttp2's own text, a GOAWAY's debug data).
public struct HTTP2Error: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case noStreamSlot
        case sessionClosing
        case streamNotFound
        case invalidHeader
        case invalidArgument
        case library(Int32)
        case connectionTerminated(UInt32)
    }

    private let code: Code
    /// The detail behind the error: nghttp2's text for a library code, the offending header name, or the debug
    /// data of the GOAWAY the session sent.
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `submitRequest` was called with no free stream slot (see `availableStreamSlots`).
    public static let noStreamSlot = HTTP2Error(.noStreamSlot, "")
    /// The session takes no new streams: a GOAWAY was sent or received, or the connection is closed.
    public static let sessionClosing = HTTP2Error(.sessionClosing, "")
    /// The stream named does not exist (any more): it closed or was reset.
    public static let streamNotFound = HTTP2Error(.streamNotFound, "")
    /// A header field nghttp2 would not put on the wire (a bad name or value).
    public static func invalidHeader(_ name: String) -> HTTP2Error { HTTP2Error(.invalidHeader, name) }
    /// An argument out of the range HTTP/2 allows (a window size, a stream limit).
    public static func invalidArgument(_ what: String) -> HTTP2Error { HTTP2Error(.invalidArgument, what) }
    /// nghttp2 returned the negative library code `code`; `text` is `nghttp2_strerror`'s.
    static func library(_ code: Int32, _ text: String) -> HTTP2Error { HTTP2Error(.library(code), text) }
    /// nghttp2 found a protocol violation and ended the connection with a GOAWAY carrying `errorCode`.
    static func connectionTerminated(_ errorCode: HTTP2ErrorCode, _ reason: String) -> HTTP2Error {
        HTTP2Error(.connectionTerminated(errorCode.rawValue), reason)
    }

    /// nghttp2's negative library code, when the error came from nghttp2 itself.
    public var libraryCode: Int32? {
        if case .library(let value) = code { return value }
        return nil
    }

    /// The error code of the GOAWAY the session sent when it gave up on the connection.
    public var goawayErrorCode: HTTP2ErrorCode? {
        if case .connectionTerminated(let value) = code { return HTTP2ErrorCode(rawValue: value) }
        return nil
    }

    /// The error as one line: its kind and, where there is one, the detail.
    public var description: String {
        switch code {
        case .noStreamSlot: return "no free HTTP/2 stream slot"
        case .sessionClosing: return "HTTP/2 session takes no new streams"
        case .streamNotFound: return "HTTP/2 stream not found"
        case .invalidHeader: return "invalid HTTP/2 header field '\(detail)'"
        case .invalidArgument: return "invalid HTTP/2 argument: \(detail)"
        case .library(let value): return "nghttp2: \(detail) (\(value))"
        case .connectionTerminated(let value):
            let name = HTTP2ErrorCode(rawValue: value).description
            return detail.isEmpty ? "HTTP/2 connection error \(name)" : "HTTP/2 connection error \(name): \(detail)"
        }
    }

    /// Two errors are equal when their kind is equal, whatever the detail.
    public static func == (lhs: HTTP2Error, rhs: HTTP2Error) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, in line with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

// MARK: - HTTP2ErrorCode

/// An HTTP/2 error code as carried by RST_STREAM and GOAWAY frames (RFC 9113 section 7). Unknown codes are kept
/// as they arrived: the peer may send any 32-bit value.
public struct HTTP2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 32-bit code as carried in the frame.
    public let rawValue: UInt32

    /// Wraps any 32-bit code, known or not.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// NO_ERROR: a graceful shutdown, not a failure.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// PROTOCOL_ERROR: the peer broke an HTTP/2 rule.
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    /// INTERNAL_ERROR: the peer failed for a reason of its own.
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// FLOW_CONTROL_ERROR: the peer broke the flow-control rules.
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS_TIMEOUT: a SETTINGS frame went unacknowledged too long.
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// STREAM_CLOSED: a frame arrived for a stream that was already half-closed.
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// FRAME_SIZE_ERROR: a frame had an invalid size.
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// The stream was not processed at all: the request is safe to send again.
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    /// CANCEL: the stream is no longer needed.
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// COMPRESSION_ERROR: the HPACK header compression state could not be kept.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    /// CONNECT_ERROR: the connection behind a CONNECT request failed.
    public static let connectError = HTTP2ErrorCode(rawValue: 0xA)
    /// ENHANCE_YOUR_CALM: the peer considers this side's load excessive.
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xB)
    /// INADEQUATE_SECURITY: the TLS settings fall short of HTTP/2's requirements.
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xC)
    /// HTTP_1_1_REQUIRED: the peer wants HTTP/1.1 instead.
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xD)

    /// The RFC 9113 name (`PROTOCOL_ERROR`), or the hexadecimal value for an unknown code.
    public var description: String {
        switch rawValue {
        case 0x0: return "NO_ERROR"
        case 0x1: return "PROTOCOL_ERROR"
        case 0x2: return "INTERNAL_ERROR"
        case 0x3: return "FLOW_CONTROL_ERROR"
        case 0x4: return "SETTINGS_TIMEOUT"
        case 0x5: return "STREAM_CLOSED"
        case 0x6: return "FRAME_SIZE_ERROR"
        case 0x7: return "REFUSED_STREAM"
        case 0x8: return "CANCEL"
        case 0x9: return "COMPRESSION_ERROR"
        case 0xA: return "CONNECT_ERROR"
        case 0xB: return "ENHANCE_YOUR_CALM"
        case 0xC: return "INADEQUATE_SECURITY"
        case 0xD: return "HTTP_1_1_REQUIRED"
        default: return "0x" + String(rawValue, radix: 16)
        }
    }
}

// MARK: - TransportFailure+HTTP2

/// The transport failures an HTTP/2 client session reports for streams that ended without a complete response,
/// beyond `refusedStream` and `unprocessedAfterGoaway`: their texts end up in result lines' `detail`.
extension TransportFailure {
    /// The request's HEADERS never left this session (the connection ended first), or the connection ended before
    /// the server's first SETTINGS frame (its HTTP/2 preface, which precedes anything it sends): not processed.
    public static let connectionEndedBeforeSending = TransportFailure.notSent(
        "the connection ended before the request was sent")
    /// The request went out and the connection ended before its answer: in doubt.
    public static let connectionEndedBeforeAnswer = TransportFailure.answerLost(
        "the connection ended before the answer")

    /// The stream was reset with a code other than REFUSED_STREAM, by the server or by nghttp2 (a malformed
    /// response): in doubt.
    public static func streamReset(_ code: HTTP2ErrorCode) -> TransportFailure {
        .answerLost("stream reset (\(code))")
    }
}
