/// How an `HTTP2ClientSession` starts: its own stream ceiling, what it assumes of the server before the server's
/// first SETTINGS frame, its receive windows and how much of a response body it keeps.
public struct HTTP2ClientConfiguration: Hashable, Sendable {
    /// Our ceiling on concurrent streams, whatever the server allows (APNs allows 500 to 1000).
    public var maximumConcurrentStreams: Int
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS to assume until its first SETTINGS frame arrives. 1 by
    /// default: APNs starts token-auth connections at one stream and refuses streams over its limit (nghttp2 on
    /// its own would assume 100). See `HTTP2StreamSlots`.
    public var assumedPeerMaxConcurrentStreams: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE we announce: how much response data the server may send per stream.
    public var initialStreamWindowSize: Int
    /// The connection-level receive window we open (WINDOW_UPDATE on stream 0).
    public var connectionWindowSize: Int
    /// The most response-body bytes kept per stream (APNs bodies are small JSON); the rest is dropped.
    public var maximumResponseBodyBytes: Int

    public init(
        maximumConcurrentStreams: Int = 1000,
        assumedPeerMaxConcurrentStreams: Int = 1,
        initialStreamWindowSize: Int = 1 << 20,
        connectionWindowSize: Int = 1 << 24,
        maximumResponseBodyBytes: Int = 16 << 10
    ) {
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.assumedPeerMaxConcurrentStreams = assumedPeerMaxConcurrentStreams
        self.initialStreamWindowSize = initialStreamWindowSize
        self.connectionWindowSize = connectionWindowSize
        self.maximumResponseBodyBytes = maximumResponseBodyBytes
    }

    /// Checks the numbers against what HTTP/2 allows.
    func validate() throws(HTTP2Error) {
        guard maximumConcurrentStreams >= 1 else { throw .invalidArgument("maximumConcurrentStreams must be at least 1") }
        guard assumedPeerMaxConcurrentStreams >= 1 else {
            throw .invalidArgument("assumedPeerMaxConcurrentStreams must be at least 1")
        }
        try HTTP2ServerConfiguration.validateWindow(initialStreamWindowSize, "initialStreamWindowSize")
        try HTTP2ServerConfiguration.validateWindow(connectionWindowSize, "connectionWindowSize")
        guard maximumResponseBodyBytes >= 0 else { throw .invalidArgument("maximumResponseBodyBytes must not be negative") }
    }
}

/// How an `HTTP2ServerSession` starts: the stream limit it announces first, its receive windows and how much of
/// a request body it keeps.
public struct HTTP2ServerConfiguration: Hashable, Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS in the first SETTINGS frame (the APNs mock starts token-auth connections
    /// at 1 and raises it later with `HTTP2ServerSession.setMaxConcurrentStreams`).
    public var maxConcurrentStreams: Int
    /// SETTINGS_INITIAL_WINDOW_SIZE we announce: how much request data the client may send per stream.
    public var initialStreamWindowSize: Int
    /// The connection-level receive window we open (WINDOW_UPDATE on stream 0).
    public var connectionWindowSize: Int
    /// The most request-body bytes kept per stream; the full length is still counted (`bodyByteCount`), so a
    /// mock can answer PayloadTooLarge.
    public var maximumRequestBodyBytes: Int

    public init(
        maxConcurrentStreams: Int = 1,
        initialStreamWindowSize: Int = 1 << 20,
        connectionWindowSize: Int = 1 << 24,
        maximumRequestBodyBytes: Int = 64 << 10
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.initialStreamWindowSize = initialStreamWindowSize
        self.connectionWindowSize = connectionWindowSize
        self.maximumRequestBodyBytes = maximumRequestBodyBytes
    }

    func validate() throws(HTTP2Error) {
        guard (0...Int(UInt32.max)).contains(maxConcurrentStreams) else {
            throw .invalidArgument("maxConcurrentStreams out of range")
        }
        try Self.validateWindow(initialStreamWindowSize, "initialStreamWindowSize")
        try Self.validateWindow(connectionWindowSize, "connectionWindowSize")
        guard maximumRequestBodyBytes >= 0 else { throw .invalidArgument("maximumRequestBodyBytes must not be negative") }
    }

    /// A flow-control window must lie in 1...2^31-1 (RFC 9113 section 6.9.2).
    static func validateWindow(_ size: Int, _ name: String) throws(HTTP2Error) {
        guard (1...Int(Int32.max)).contains(size) else { throw .invalidArgument("\(name) must be in 1...2147483647") }
    }
}
