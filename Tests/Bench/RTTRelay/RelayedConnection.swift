import APNSTransport

/// One connection through the relay: the client's socket and the target's, and the two `DelayedStream`s between
/// them (`streams[0]` from the client to the target, `streams[1]` back). Each side is read while its stream is
/// below the high-water mark, each stream written when its bytes fall due; an end read on one side reaches the
/// other as a half-close `delay` later, and once both ends have gone through (or a write fails) both sockets close.
final class RelayedConnection {
    /// Bytes read but not yet written on one direction before that direction stops reading (so a slow reader
    /// cannot make the relay hold without bound); reading resumes below half of it.
    static let highWater = 8 << 20

    private let loop: EventLoop
    private let delay: Double
    private let readBuffer: RelayReadBuffer
    private let sockets: [Socket]
    private var streams = [DelayedStream(), DelayedStream()]
    private var timers: [EventLoopTimer?] = [nil, nil]
    /// Whether side `i`'s socket is read (its stream has room and its end was not read).
    private var reading = [true, true]
    /// Whether side `i`'s socket is registered with the loop.
    private var registered = [false, false]
    /// Whether stream `i` has passed its end on (or was dropped).
    private var finished = [false, false]
    private var closed = false

    init(loop: EventLoop, delay: Double, readBuffer: RelayReadBuffer, client: Socket, target: Socket) {
        self.loop = loop
        self.delay = delay
        self.readBuffer = readBuffer
        self.sockets = [client, target]
    }

    /// Registers both sockets for reading.
    func start() {
        for side in 0..<2 {
            do {
                try loop.register(
                    sockets[side].fd, interest: .read, handler: RelayedSocket(connection: self, side: side))
                registered[side] = true
            } catch {
                return close()
            }
        }
    }

    /// Side `side` has data, an end or an error to read.
    func readable(side: Int) {
        guard reading[side], !closed else { return }
        let result = sockets[side].receive(into: &readBuffer.bytes)
        let due = loop.turnTime.advanced(bySeconds: delay)
        switch result {
        case .transferred(let count):
            streams[side].append(readBuffer.bytes[..<count], due: due)
            if streams[side].buffered >= Self.highWater { reading[side] = false }
        case .wouldBlock:
            return
        case .endOfFile, .failed:
            streams[side].appendEnd(due: due)
            reading[side] = false
        }
        arm(side)
        updateInterest(side)
    }

    /// Side `side` can take more: write what is due for it.
    func writable(side: Int) {
        write(1 - side)
    }

    /// Side `side` hung up while nothing was asked of it: its end goes on to the other side; nothing more can
    /// reach it.
    func hangup(side: Int) {
        guard !closed else { return }
        streams[side].appendEnd(due: loop.turnTime.advanced(bySeconds: delay))
        reading[side] = false
        streams[1 - side].discard()
        finished[1 - side] = true
        timers[1 - side]?.cancel()
        if registered[side] {
            loop.deregister(sockets[side].fd)
            registered[side] = false
        }
        if finished[side] { return close() }
        arm(side)
    }

    /// Writes stream `stream`'s due bytes to the other side, passes its end on once due, and rearms its timer.
    private func write(_ stream: Int) {
        guard !closed, !finished[stream] else { return }
        let sink = sockets[1 - stream]
        streams[stream].advance(to: loop.turnTime)
        while streams[stream].hasDueBytes {
            switch streams[stream].withDueBytes({ sink.send($0) }) {
            case .transferred(let count):
                streams[stream].consume(count)
            case .wouldBlock:
                updateInterest(1 - stream)
                return
            case .endOfFile, .failed:
                return close()
            }
        }
        if streams[stream].isDrained {
            sink.shutdownWrite()
            finished[stream] = true
            if finished[1 - stream] { return close() }
        }
        if !reading[stream], !streams[stream].endRead, streams[stream].buffered < Self.highWater / 2 {
            reading[stream] = true
            updateInterest(stream)
        }
        updateInterest(1 - stream)
        arm(stream)
    }

    /// Schedules stream `stream`'s next write for when its oldest chunk falls due, unless one is scheduled or the
    /// stream waits for its sink to take what is already due.
    private func arm(_ stream: Int) {
        guard !closed, !finished[stream], timers[stream]?.isPending != true, !streams[stream].hasDueBytes,
            let due = streams[stream].nextDue
        else { return }
        timers[stream] = loop.schedule(at: due) { self.write(stream) }  // cancelled by close()
    }

    /// Asks the loop for what side `side` needs: reads while its stream has room, writes while due bytes for it wait.
    private func updateInterest(_ side: Int) {
        guard registered[side] else { return }
        var interest: EventLoopInterest = reading[side] ? .read : []
        if streams[1 - side].hasDueBytes { interest.insert(.write) }
        _ = loop.setInterest(interest, for: sockets[side].fd)
    }

    /// Closes both sockets and cancels both timers.
    private func close() {
        guard !closed else { return }
        closed = true
        for side in 0..<2 {
            timers[side]?.cancel()
            if registered[side] {
                loop.deregister(sockets[side].fd)
                registered[side] = false
            }
            sockets[side].close()
        }
    }
}

/// One socket of a `RelayedConnection`, as the event loop sees it: passes readiness on with the side it is.
final class RelayedSocket: EventLoopHandler {
    private let connection: RelayedConnection
    private let side: Int

    init(connection: RelayedConnection, side: Int) {
        self.connection = connection
        self.side = side
    }

    func readable() { connection.readable(side: side) }
    func writable() { connection.writable(side: side) }
    func hangup() { connection.hangup(side: side) }
}

/// The relay's one read buffer, shared by every connection (the loop runs one read at a time).
final class RelayReadBuffer {
    var bytes = [UInt8](repeating: 0, count: 1 << 18)
}
