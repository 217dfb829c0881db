import APNSHTTP2
import APNSTransport

/// Carrying out a `MockDecision`: the answer (now, or after an injected delay) and each connection action, as
/// `MockConnectionAction` documents them.
extension MockServerConnection {
    func carryOut(_ decision: MockDecision, for request: MockRequest) {
        let streamID = request.streamID
        if let response = decision.response {
            var logLine: [UInt8]?
            if response.status == 200, listener.acceptedLog != nil {
                logLine = MockAcceptedLog.line(for: request, apnsID: response.apnsID, connection: state.id)
            }
            if let delay = Self.delay(in: decision.actions) {
                answer(streamID, response, logging: logLine, afterMilliseconds: delay)
            } else {
                answer(streamID, response, logging: logLine)
            }
        }
        for action in decision.actions {
            switch action {
            case .raiseStreamLimit(let limit), .lowerStreamLimit(let limit):
                streamLimitChanged = true
                try? session.setMaxConcurrentStreams(limit)  // fails only when the session has ended
            case .goaway(let lastStreamID, let errorCode, let debugData):
                // Graceful: streams at or below lastStreamID are still answered (delayed ones included); the
                // session ends once they are, and `flush` then closes the connection with close_notify.
                try? session.sendGoaway(
                    lastStreamID: lastStreamID, errorCode: HTTP2ErrorCode(rawValue: errorCode), debugData: debugData
                )
            case .dropConnection:
                finish(gracefully: false)
                return
            case .refuseStream:
                try? session.resetStream(streamID, errorCode: .refusedStream)
            case .delay:
                break  // applied to the answer above
            }
        }
    }

    /// Submits the answer to nghttp2: `:status`, `apns-id`, `apns-unique-id` when present, and the body. An
    /// accepted answer is first logged (`--log-accepted`); if the log cannot be written it becomes a 500.
    func answer(_ streamID: Int32, _ response: MockResponse, logging logLine: [UInt8]? = nil) {
        var response = response
        if let logLine, let log = listener.acceptedLog, !log.append(logLine) {
            response = .rejected(.internalServerError, apnsID: response.apnsID)
        }
        responseFields.removeAll()
        responseFields.append(name: "apns-id", value: response.apnsID.bytes)
        if let uniqueID = response.uniqueID { responseFields.append(name: "apns-unique-id", value: uniqueID.bytes) }
        // Throws only when the stream is gone (reset by the client, cut off by GOAWAY): nothing to answer.
        try? session.respond(to: streamID, status: response.status, fields: responseFields, body: response.body)
    }

    /// Holds the answer back with a timer; other streams are served meanwhile. Equal delays fire in the order
    /// they were scheduled, so a fixed latency keeps the answers in request order.
    private func answer(_ streamID: Int32, _ response: MockResponse, logging logLine: [UInt8]?, afterMilliseconds milliseconds: Int) {
        let timer = loop.schedule(after: Double(milliseconds) / 1000) { [weak self] in
            guard let self, !self.isFinished else { return }
            self.delayedAnswers.removeValue(forKey: streamID)
            self.answer(streamID, response, logging: logLine)
            self.scheduleFlush()
        }
        delayedAnswers[streamID] = timer
    }

    private static func delay(in actions: [MockConnectionAction]) -> Int? {
        for action in actions {
            if case .delay(let milliseconds) = action { return milliseconds }
        }
        return nil
    }
}
