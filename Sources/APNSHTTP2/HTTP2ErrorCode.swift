/// An HTTP/2 error code as carried by RST_STREAM and GOAWAY frames (RFC 9113 section 7). Unknown codes are kept
/// as they arrived: the peer may send any 32-bit value.
public struct HTTP2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// The stream was not processed at all: the request is safe to send again.
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    public static let connectError = HTTP2ErrorCode(rawValue: 0xA)
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xB)
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xC)
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xD)

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
