/// How an `HTTP2ClientSession` starts: its own stream ceiling, what it assumes of the server before the server's
/// first SETTINGS frame, its receive windows and how much of a response body it keeps.
public struct HTTP2ClientConfiguration: Hashable, Sendable {
    /// Our ceiling on concurrent streams, whatever the server allows (APNs allows 500 to 1000).
    public var maximumConcurrentStreams: Int
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS to assume until its first SETTINGS frame arrives. 1 by
    /// default: APNs starts token-auth connections at one stream and refuses streams over its limit (nghttp2 on
    /// its own would assume 100). See `HTTP2StreamSlots`.
    public var assumedPeerMaxConcurrentStreams: Int
    /// How much response data the server may send before we read it.
    public var receiveWindows: HTTP2ReceiveWindows
    /// The most response-body bytes kept per stream (APNs bodies are small JSON); the rest is dropped.
    public var maximumResponseBodyBytes: Int
    /// The highest client stream id this session uses: once the next id would pass it, the session takes no new
    /// streams, so its owner drains it and opens a new connection well before nghttp2 runs out of ids at 2^31-1
    /// (`NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE`). Tests set it low.
    public var lastStreamID: Int32

    /// The default `lastStreamID`: a million ids (half a million requests) short of the end of the id space.
    public static let defaultLastStreamID = Int32.max - 1_000_000

    /// Client settings; every one has a default.
    public init(
        maximumConcurrentStreams: Int = 1000,
        assumedPeerMaxConcurrentStreams: Int = 1,
        receiveWindows: HTTP2ReceiveWindows = HTTP2ReceiveWindows(),
        maximumResponseBodyBytes: Int = 16 << 10,
        lastStreamID: Int32 = HTTP2ClientConfiguration.defaultLastStreamID
    ) {
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.assumedPeerMaxConcurrentStreams = assumedPeerMaxConcurrentStreams
        self.receiveWindows = receiveWindows
        self.maximumResponseBodyBytes = maximumResponseBodyBytes
        self.lastStreamID = lastStreamID
    }

    /// Checks the numbers against what HTTP/2 allows.
    func validate() throws(HTTP2Error) {
        guard maximumConcurrentStreams >= 1 else {
            throw .invalidArgument("maximumConcurrentStreams must be at least 1")
        }
        guard assumedPeerMaxConcurrentStreams >= 1 else {
            throw .invalidArgument("assumedPeerMaxConcurrentStreams must be at least 1")
        }
        try receiveWindows.validate()
        guard maximumResponseBodyBytes >= 0 else {
            throw .invalidArgument("maximumResponseBodyBytes must not be negative")
        }
        guard lastStreamID >= 1 else { throw .invalidArgument("lastStreamID must be at least 1") }
    }
}

/// How an `HTTP2ServerSession` starts: the stream limit it announces first, its receive windows and how much of
/// a request body it keeps.
public struct HTTP2ServerConfiguration: Hashable, Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS in the first SETTINGS frame (the APNs mock starts token-auth connections
    /// at 1 and raises it later with `HTTP2ServerSession.setMaxConcurrentStreams`).
    public var maxConcurrentStreams: Int
    /// How much request data the client may send before we read it.
    public var receiveWindows: HTTP2ReceiveWindows
    /// The most request-body bytes kept per stream; the full length is still counted (`bodyByteCount`), so a
    /// mock can answer PayloadTooLarge.
    public var maximumRequestBodyBytes: Int
    /// How fast the client may reset streams not answered yet before the connection ends (GOAWAY
    /// ENHANCE_YOUR_CALM); resets of answered streams are free.
    public var resetRateLimit: HTTP2ResetRateLimit

    /// Settings from their parts; every one has a default.
    public init(
        maxConcurrentStreams: Int = 1,
        receiveWindows: HTTP2ReceiveWindows = HTTP2ReceiveWindows(),
        maximumRequestBodyBytes: Int = 64 << 10,
        resetRateLimit: HTTP2ResetRateLimit = HTTP2ResetRateLimit()
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.receiveWindows = receiveWindows
        self.maximumRequestBodyBytes = maximumRequestBodyBytes
        self.resetRateLimit = resetRateLimit
    }

    func validate() throws(HTTP2Error) {
        guard (0...Int(UInt32.max)).contains(maxConcurrentStreams) else {
            throw .invalidArgument("maxConcurrentStreams out of range")
        }
        try receiveWindows.validate()
        guard maximumRequestBodyBytes >= 0 else {
            throw .invalidArgument("maximumRequestBodyBytes must not be negative")
        }
        guard resetRateLimit.burst >= 1, resetRateLimit.perSecond >= 0 else {
            throw .invalidArgument("resetRateLimit needs a burst of at least 1 and a non-negative rate")
        }
    }
}

/// The receive windows a session opens, client or server: how much the peer may send per stream and over the whole
/// connection before we read it (RFC 9113 section 6.9).
public struct HTTP2ReceiveWindows: Hashable, Sendable {
    /// SETTINGS_INITIAL_WINDOW_SIZE we announce: how much data the peer may send per stream.
    public var stream: Int
    /// The connection-level receive window we open (WINDOW_UPDATE on stream 0).
    public var connection: Int

    /// Flow-control windows, in bytes, for each stream and for the whole connection.
    public init(stream: Int = 1 << 20, connection: Int = 1 << 24) {
        self.stream = stream
        self.connection = connection
    }

    /// A flow-control window must lie in 1...2^31-1 (RFC 9113 section 6.9.2).
    func validate() throws(HTTP2Error) {
        let allowed = 1...Int(Int32.max)
        guard allowed.contains(stream) else {
            throw .invalidArgument("the stream receive window must be in \(allowed)")
        }
        guard allowed.contains(connection) else {
            throw .invalidArgument("the connection receive window must be in \(allowed)")
        }
    }
}
