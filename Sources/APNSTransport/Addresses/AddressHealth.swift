/// The pool's memory of how its connects to each address ended, and the order it has each new connection dial a
/// host's addresses in (docs/CONNECTING.md, "Addresses"), without I/O. An address whose last `avoidAfter`
/// attempts in a row failed (refused, timed out, or outrun by an address dialed after it) is dialed last while
/// other addresses remain, until `retryAfter` seconds after its last failure (then it gets one more chance: one more
/// failure avoids it again); a connect to it resets its record.
struct AddressHealth {
    /// One address's failures in a row, and when the last was.
    struct Record: Hashable, Sendable {
        var failuresInARow: Int
        var lastFailure: EventLoopInstant
    }

    /// Failures in a row that have an address dialed last.
    let avoidAfter: Int
    /// Seconds after its last failure that an avoided address takes its place again.
    let retryAfter: Double
    /// The addresses remembered at most (the ones failed longest ago are forgotten first).
    let capacity: Int
    private(set) var records: [SocketAddress: Record] = [:]

    init(avoidAfter: Int = 2, retryAfter: Double = 30, capacity: Int = 64) {
        self.avoidAfter = max(1, avoidAfter)
        self.retryAfter = retryAfter
        self.capacity = max(1, capacity)
    }

    /// How an attempt to `address` ended.
    mutating func record(_ outcome: ConnectAttemptOutcome, for address: SocketAddress, now: EventLoopInstant) {
        if outcome == .connected {
            records[address] = nil
            return
        }
        guard outcome.isFailure else { return }
        let failures = (records[address]?.failuresInARow ?? 0) + 1
        records[address] = Record(failuresInARow: failures, lastFailure: now)
        if records.count > capacity, let oldest = records.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            records[oldest.key] = nil
        }
    }

    /// Whether `address` is dialed only after the others.
    func isAvoided(_ address: SocketAddress, now: EventLoopInstant) -> Bool {
        guard let record = records[address], record.failuresInARow >= avoidAfter else { return false }
        return now < record.lastFailure.advanced(bySeconds: retryAfter)
    }

    /// The order connection number `connection` dials `addresses` (the resolver's order) in: the families
    /// interleaved (RFC 8305 §4), the addresses not avoided first, rotated so that connection `i` starts at the
    /// `i mod n`th of them, then the avoided ones, fewest failures first.
    func order(_ addresses: [SocketAddress], connection: Int, now: EventLoopInstant) -> [SocketAddress] {
        var seen = Set<SocketAddress>()
        let interleaved = AddressOrder.interleaved(addresses.filter { seen.insert($0).inserted })
        let usable = interleaved.filter { !isAvoided($0, now: now) }
        let avoided = interleaved.filter { isAvoided($0, now: now) }
        let ranked = avoided.enumerated().sorted { left, right in
            let leftFailures = records[left.element]?.failuresInARow ?? 0
            let rightFailures = records[right.element]?.failuresInARow ?? 0
            return leftFailures != rightFailures ? leftFailures < rightFailures : left.offset < right.offset
        }.map(\.element)
        return AddressOrder.rotated(usable, forConnection: connection) + ranked
    }
}
