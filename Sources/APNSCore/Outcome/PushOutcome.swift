/// What came back for one push request: an APNs answer, or a transport failure instead of one.
public enum PushOutcome: Hashable, Sendable {
    case answered(PushAnswer)
    case failed(TransportFailure)

    /// The answer, when APNs gave one.
    public var answer: PushAnswer? {
        if case .answered(let answer) = self { return answer }
        return nil
    }
}
