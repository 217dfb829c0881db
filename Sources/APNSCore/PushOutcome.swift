/// What came back for one push request: an APNs answer (status, reason, 410 timestamp) or a transport failure.
public enum PushOutcome: Hashable, Sendable {
    case answered(status: Int, reason: APNSReason?, timestamp: Int64?)
    case failed(TransportFailure)
}
