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

    public static func == (lhs: HTTP2Error, rhs: HTTP2Error) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
