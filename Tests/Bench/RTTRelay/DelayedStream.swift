import APNSTransport

/// One direction of a relayed connection, without I/O: the bytes read from one side, each chunk stamped with the
/// time it falls due on the other side, and the end of the stream after them. Hands out everything due as one
/// piece (the chunks that fell due together go out in one write) and keeps the order.
struct DelayedStream {
    /// A chunk (or the end) that is not due yet: it ends at `end`, counted from the stream's first byte.
    private struct Mark {
        var due: EventLoopInstant
        var end: Int
        var isEnd: Bool
    }

    /// The bytes not yet written; `held[0]` is byte `base` of the stream.
    private var held: [UInt8] = []
    private var base = 0
    /// `held[..<sent]` has been written.
    private var sent = 0
    /// The stream's bytes before this offset are due.
    private var dueEnd = 0
    /// The chunks not yet due, oldest first, from `marks[firstMark]`.
    private var marks: [Mark] = []
    private var firstMark = 0

    /// The source's end was read (a close, a reset or a read error).
    private(set) var endRead = false
    /// The end fell due: once the due bytes are written, the sink's sending side closes.
    private(set) var endDue = false

    /// Bytes read and not yet written, due or not.
    var buffered: Int { held.count - sent }

    /// Whether due bytes wait to be written.
    var hasDueBytes: Bool { dueEnd > base + sent }

    /// Whether everything, the end included, is due and written.
    var isDrained: Bool { endDue && !hasDueBytes }

    /// When the oldest chunk not yet due falls due.
    var nextDue: EventLoopInstant? { firstMark < marks.count ? marks[firstMark].due : nil }

    /// Adds a chunk read from the source, due at `due` (never earlier than the chunks before it).
    mutating func append(_ bytes: ArraySlice<UInt8>, due: EventLoopInstant) {
        guard !bytes.isEmpty, !endRead else { return }
        held.append(contentsOf: bytes)
        marks.append(Mark(due: due, end: base + held.count, isEnd: false))
    }

    /// Marks the end of the source, due at `due` after every byte read before it.
    mutating func appendEnd(due: EventLoopInstant) {
        guard !endRead else { return }
        endRead = true
        marks.append(Mark(due: due, end: base + held.count, isEnd: true))
    }

    /// Makes every chunk due at `now` or before it ready to write.
    mutating func advance(to now: EventLoopInstant) {
        while firstMark < marks.count, marks[firstMark].due <= now {
            let mark = marks[firstMark]
            firstMark += 1
            if mark.isEnd { endDue = true } else { dueEnd = mark.end }
        }
        if firstMark == marks.count {
            marks.removeAll(keepingCapacity: true)
            firstMark = 0
        } else if firstMark >= 1024, firstMark * 2 >= marks.count {
            marks.removeFirst(firstMark)
            firstMark = 0
        }
    }

    /// The due bytes not yet written, valid only inside `body`.
    func withDueBytes<Result>(_ body: (RawSpan) -> Result) -> Result {
        body(held.span.extracting(sent..<(dueEnd - base)).bytes)
    }

    /// Drops the first `count` due bytes: they were written.
    mutating func consume(_ count: Int) {
        sent = min(sent + count, dueEnd - base)
        if sent == held.count {
            base += held.count
            held.removeAll(keepingCapacity: held.capacity <= 1 << 20)
            sent = 0
        } else if sent >= 1 << 16, sent * 2 >= held.count {
            held.removeFirst(sent)
            base += sent
            sent = 0
        }
    }

    /// Forgets everything held: the sink is gone.
    mutating func discard() {
        base += held.count
        held = []
        sent = 0
        dueEnd = base
        marks = []
        firstMark = 0
        endRead = true
        endDue = true
    }
}
