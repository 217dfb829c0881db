/// The stream accounting of one client connection: the peer's SETTINGS_MAX_CONCURRENT_STREAMS (or what is assumed
/// before its first SETTINGS frame), our own ceiling, the streams we have open, and whether the connection still
/// takes new streams. Pure state: `HTTP2ClientSession` feeds it what nghttp2 reports and asks it for `available`.
///
/// Before the first SETTINGS frame the peer's limit is `assumedPeerLimit`, 1 by default: APNs starts token-auth
/// connections at one stream and refuses streams over its limit, so one request goes out and the rest wait for the
/// real number (which arrives in the server's first flight, long before that request's answer). A first SETTINGS
/// frame without SETTINGS_MAX_CONCURRENT_STREAMS means "unlimited" (RFC 9113 section 6.5.2), as nghttp2 treats it.
public struct HTTP2StreamSlots: Hashable, Sendable {
    /// Our own ceiling, whatever the peer allows.
    public let localLimit: Int
    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS, or the assumed value before its first SETTINGS frame.
    public private(set) var peerLimit: Int
    /// Whether the peer's first SETTINGS frame has arrived.
    public private(set) var hasReceivedPeerSettings = false
    /// Streams we started that have not ended.
    public private(set) var open = 0
    /// False once a GOAWAY was sent or received or the connection ended: no new streams, whatever the limits.
    public private(set) var isAcceptingStreams = true

    /// - Parameters:
    ///   - localLimit: our ceiling (at least 1).
    ///   - assumedPeerLimit: the peer's limit until its first SETTINGS frame (at least 1).
    public init(localLimit: Int, assumedPeerLimit: Int = 1) {
        self.localLimit = max(1, localLimit)
        self.peerLimit = max(1, assumedPeerLimit)
    }

    /// The number of streams that may be open at once now.
    public var limit: Int { min(peerLimit, localLimit) }

    /// How many more streams may start now.
    public var available: Int { isAcceptingStreams ? max(0, limit - open) : 0 }

    /// Applies a SETTINGS frame from the peer; `maxConcurrentStreams` is its last SETTINGS_MAX_CONCURRENT_STREAMS
    /// entry, nil when it had none. Returns the new `limit` when it changed, and always for the peer's first SETTINGS
    /// frame (the limit is known from then on, even when it equals the assumed one); else nil.
    public mutating func peerSettingsReceived(maxConcurrentStreams: UInt32?) -> Int? {
        let before = limit
        let isFirst = !hasReceivedPeerSettings
        if let maxConcurrentStreams {
            peerLimit = Int(clamping: maxConcurrentStreams)
        } else if !hasReceivedPeerSettings {
            peerLimit = Int(UInt32.max)
        }
        hasReceivedPeerSettings = true
        return limit == before && !isFirst ? nil : limit
    }

    /// A stream started (its request was submitted).
    public mutating func streamOpened() {
        open += 1
    }

    /// A stream we started ended, however it ended.
    public mutating func streamClosed() {
        precondition(open > 0, "HTTP2StreamSlots: more streams closed than opened")
        open -= 1
    }

    /// No new streams from now on (GOAWAY sent or received, connection ended).
    public mutating func stopAccepting() {
        isAcceptingStreams = false
    }
}
