/// Where one campaign run is in its life, as one value: the dispatcher's lifecycle without flags. Each event
/// that moves it (the reader ran dry, a stop, the transport asked to close, the transport closed, the end) is a
/// mutating method that says whether it changed anything, so the dispatcher acts only on real transitions.
struct DispatcherPhase: Equatable {
    typealias Ending = CampaignSummary.Ending

    /// The phases, each with what it still needs to know.
    enum State: Equatable {
        /// Reading records and sending them (`inputOpen` false: every record is read; answers and retries are
        /// still awaited).
        case sending(inputOpen: Bool)
        /// A stop began: no new requests; requests in flight are still awaited. After an early stop the reader
        /// is still read to the end, to write `not_sent` lines; after an interrupt it is not read at all.
        case stopping(Ending, inputOpen: Bool)
        /// The transport was asked to close (`closed`: it said it has); nothing more is sent.
        case closingTransport(Ending?, inputOpen: Bool, closed: Bool)
        /// The run's end was reported; nothing happens any more.
        case ended
    }

    private(set) var state = State.sending(inputOpen: true)

    /// Why the run is ending, once a stop began (nil while it runs to completion).
    var stopCause: Ending? {
        switch state {
        case .sending, .ended: return nil
        case .stopping(let ending, _): return ending
        case .closingTransport(let ending, _, _): return ending
        }
    }

    /// Whether new records may still be read from the reader.
    var readsSource: Bool {
        switch state {
        case .sending(let open): return open
        case .stopping(let ending, let open), .closingTransport(let ending?, let open, _):
            return open && ending != .interrupted
        case .closingTransport(nil, let open, _): return open
        case .ended: return false
        }
    }

    /// Whether the reader still has records (reading may be paused by an interrupt).
    var inputOpen: Bool {
        switch state {
        case .sending(let open), .stopping(_, let open), .closingTransport(_, let open, _): return open
        case .ended: return false
        }
    }

    /// Whether new requests may go out.
    var sends: Bool {
        if case .sending = state { return true }
        return false
    }

    /// Whether the transport was asked to close.
    var closingTransport: Bool {
        switch state {
        case .closingTransport, .ended: return true
        case .sending, .stopping: return false
        }
    }

    var transportClosed: Bool {
        switch state {
        case .closingTransport(_, _, let closed): return closed
        case .ended: return true
        case .sending, .stopping: return false
        }
    }

    var hasEnded: Bool { state == .ended }

    /// The reader has no more records.
    mutating func inputExhausted() {
        switch state {
        case .sending: state = .sending(inputOpen: false)
        case .stopping(let ending, _): state = .stopping(ending, inputOpen: false)
        case .closingTransport(let ending, _, let closed):
            state = .closingTransport(ending, inputOpen: false, closed: closed)
        case .ended: break
        }
    }

    /// A stop begins; false when one already did (the first cause wins) or the run has ended.
    mutating func stop(_ ending: Ending) -> Bool {
        switch state {
        case .sending(let open):
            state = .stopping(ending, inputOpen: open)
            return true
        case .closingTransport(nil, let open, let closed):
            state = .closingTransport(ending, inputOpen: open, closed: closed)
            return true
        case .stopping, .closingTransport, .ended:
            return false
        }
    }

    /// The transport is to close; false when it already was asked to.
    mutating func closeTransport() -> Bool {
        switch state {
        case .sending(let open):
            state = .closingTransport(nil, inputOpen: open, closed: false)
            return true
        case .stopping(let ending, let open):
            state = .closingTransport(ending, inputOpen: open, closed: false)
            return true
        case .closingTransport, .ended:
            return false
        }
    }

    /// The transport said it closed.
    mutating func transportDidClose() {
        switch state {
        case .closingTransport(let ending, let open, _):
            state = .closingTransport(ending, inputOpen: open, closed: true)
        case .sending(let open):
            state = .closingTransport(nil, inputOpen: open, closed: true)
        case .stopping(let ending, let open):
            state = .closingTransport(ending, inputOpen: open, closed: true)
        case .ended:
            break
        }
    }

    /// The end is reported; returns how the run ended, or nil when it had already ended.
    mutating func end() -> Ending? {
        guard state != .ended else { return nil }
        let ending = stopCause ?? .completed
        state = .ended
        return ending
    }
}
