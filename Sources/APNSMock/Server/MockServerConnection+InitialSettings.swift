import APNSTransport

/// The first stream limit. The server's first SETTINGS announces `initialConcurrentStreams` (1), but a client
/// may open streams before that frame reaches it: RFC 9113 (sections 5.1.2 and 6.5.3) lets a limit bind only
/// once the peer has it, and h2load or a pool that opens 100 streams right after the handshake would otherwise
/// see them refused. So, under `.onceAcknowledged`, nghttp2 starts with the full limit (nothing is refused) while
/// the frame on the wire is rewritten to say the initial limit; once the client acknowledges that frame, the
/// initial limit is submitted to nghttp2 too (a second, identical SETTINGS) and enforced from then on, unless the
/// validator has changed the limit meanwhile. Under `.immediately` nghttp2 refuses streams over the initial
/// limit from the start (REFUSED_STREAM), which tests a client's resending.
extension MockServerConnection {
    /// What the HTTP/2 session announces to nghttp2 at start: the limit nghttp2 enforces before the first ACK.
    static func startingLimit(_ configuration: MockConfiguration, _ enforcement: MockServer.InitialLimitEnforcement) -> Int {
        switch enforcement {
        case .onceAcknowledged: return configuration.maxConcurrentStreams
        case .immediately: return configuration.initialConcurrentStreams
        }
    }

    /// Rewrites SETTINGS_MAX_CONCURRENT_STREAMS in the first frame of `output` (the server's first SETTINGS) to
    /// `limit`. False when the bytes are not the expected SETTINGS frame with that entry.
    static func rewriteFirstSettings(_ output: inout [UInt8], maxConcurrentStreams limit: Int) -> Bool {
        let headerLength = 9
        guard output.count >= headerLength, output[3] == 0x04, output[4] & 0x01 == 0,
              output[5] | output[6] | output[7] | output[8] == 0 else { return false }
        let length = Int(output[0]) << 16 | Int(output[1]) << 8 | Int(output[2])
        guard length % 6 == 0, output.count >= headerLength + length, let value = UInt32(exactly: limit) else { return false }
        var entry = headerLength
        var rewritten = false
        while entry < headerLength + length {
            if output[entry] == 0x00, output[entry + 1] == 0x03 {
                output[entry + 2] = UInt8(truncatingIfNeeded: value >> 24)
                output[entry + 3] = UInt8(truncatingIfNeeded: value >> 16)
                output[entry + 4] = UInt8(truncatingIfNeeded: value >> 8)
                output[entry + 5] = UInt8(truncatingIfNeeded: value)
                rewritten = true
            }
            entry += 6
        }
        return rewritten
    }

    /// Called with the first output of the session: puts the initial limit on the wire.
    func announceInitialLimit() {
        initialLimitRewritePending = false
        let initial = listener.validator.configuration.initialConcurrentStreams
        guard !Self.rewriteFirstSettings(&output, maxConcurrentStreams: initial) else { return }
        // Not the frame expected: announce and enforce the initial limit the plain way.
        try? session.setMaxConcurrentStreams(initial)
        initialLimitEnforced = true
    }

    /// The client acknowledged one of our SETTINGS frames (in order).
    func settingsAcknowledged() {
        acknowledgedSettingsCount += 1
        guard acknowledgedSettingsCount == 1, !initialLimitEnforced, !streamLimitChanged else { return }
        initialLimitEnforced = true
        try? session.setMaxConcurrentStreams(listener.validator.configuration.initialConcurrentStreams)
    }
}
