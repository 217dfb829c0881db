import APNSCore

/// The life of one TLS connection, without I/O: where it is (connecting, handshaking, established, closing,
/// closed), what each transfer direction waits for, what the loop must watch, and whom to tell what.
/// `TLSConnection` feeds it every event (readiness, the result of every OpenSSL call, the connect stages, its
/// owner's calls, its timer) and runs the actions it returns, after it returns; tests drive it alone.
///
///     connecting(resolving) ──resolved──▶ connecting(dialing) ──dialed, through a proxy──▶ connecting(tunnelling)
///             │                                 │ dialed, direct;                               │ tunnelled
///             │ connectFailed                   │ attached (a socket given to an initializer)   │
///             │                                 ▼                                               │
///             │                          handshaking(interest) ◀────────────────────────────────┘
///             │                    ┌──────────┤ handshakeStepped(transferred)
///             │   failure, EOF,    │          ▼
///             │   timer, startFailed   established(Transfer) ──closeRequested(grace)──▶ closing(Transfer)
///             │                    │          │ close_notify, EOF, failure                   │ output gone (then
///             ▼                    ▼          ▼  (told to the delegate)                      ▼ close_notify), timer,
///           closed ◀──────────────────────────┴──────────────────────────────────────────────┘ failure (untold)
///                  ◀── abortRequested, or closeRequested before established, from any state (untold)
///
/// While established or closing, each direction keeps its own progress (`Transfer`): a write that OpenSSL sent
/// back to wait for the socket to become writable or readable (SSL_ERROR_WANT_WRITE / WANT_READ), owing the delegate
/// a drain notice once it completes; a read that waits for writable, or that spent its budget and goes on next turn.
/// The delegate hears `didCloseWith` once, only for an ending it did not ask for, and nothing after an ending.
struct TLSConnectionStateMachine {
    /// Where the connection is, each phase with what it knows.
    enum State: Hashable, Sendable {
        /// Before TLS: resolving the name, TCP-connecting, or tunnelling through a proxy.
        case connecting(ConnectStep)
        /// The TLS handshake runs; the loop watches for what its last step asked for.
        case handshaking(EventLoopInterest)
        case established(Transfer)
        /// The owner closed: what is queued goes out, then close_notify, then the socket closes (or the grace
        /// timer ends it first). What still arrives is read and dropped.
        case closing(Transfer)
        case closed
    }

    /// The step before TLS.
    enum ConnectStep: Hashable, Sendable {
        case resolving, dialing, tunnelling
    }

    /// What a socket must become for a waiting operation to go on.
    enum Readiness: Hashable, Sendable {
        case readable, writable
    }

    /// How far the queued output has gone.
    enum WriteProgress: Hashable, Sendable {
        /// Nothing waits: a flush writes at once.
        case idle
        /// OpenSSL asked to wait for this readiness (the kernel buffer is full, or a TLS message must be read
        /// first); the delegate is owed a drain notice once the output has gone.
        case waits(for: Readiness)
        /// The wait ended and the write runs again; still owed the notice.
        case resumed(after: Readiness)
    }

    /// Whether reading goes on without the socket becoming readable.
    enum ReadProgress: Hashable, Sendable {
        /// Reads when the socket is readable.
        case idle
        /// SSL_read asked for the socket to become writable first.
        case waitsForWritable
        /// The read budget was spent with bytes possibly still in OpenSSL: a read is scheduled for the next turn.
        case resumesNextTurn
    }

    /// Both directions of an established (or closing) connection.
    struct Transfer: Hashable, Sendable {
        var write: WriteProgress = .idle
        var read: ReadProgress = .idle
        /// Bytes still to deliver before this round of reading yields to other connections.
        var readBudget: Int = TLSConnectionStateMachine.readBudget
        /// Client: the session is still to be remembered for the next connections to resume (it becomes resumable
        /// once the server's session ticket has been read, after the handshake).
        var remembersSession: Bool

        /// What the loop must watch for.
        var interest: EventLoopInterest {
            switch (write, read) {
            case (.waits(.writable), _), (.resumed(.writable), _), (_, .waitsForWritable): [.read, .write]
            default: .read
            }
        }
    }

    /// What the connection does next; events return them and the connection runs them in order.
    enum Action: Hashable, Sendable {
        /// Start the TCP connect to the addresses just resolved.
        case dial
        /// Send CONNECT through the proxy over the socket just connected.
        case openTunnel
        /// Make the TLS session on the socket just connected and register the socket, watching `interest`.
        case startTLS(interest: EventLoopInterest)
        /// Watch the socket for this (arm or disarm writable).
        case setInterest(EventLoopInterest)
        /// Start the timer (replacing any running one): the handshake's timeout, or a close's grace period.
        case armTimer(seconds: Double)
        case cancelTimer
        /// Run one handshake step and report its result (`handshakeStepped`).
        case stepHandshake
        /// Read once and report the result (`read(_:sessionRemembered:)`), first remembering the session for
        /// resumption if this says so and it has become resumable.
        case read(rememberSession: Bool)
        /// Hand the bytes just read to the delegate, then report `delivered()` after what the delegate did.
        case deliver(count: Int)
        /// Read again on the next loop turn (`readingResumed()`).
        case resumeReadingNextTurn
        /// Write the queued output until it is gone or OpenSSL pushes back, then report `wrote(_:)`.
        case write
        /// Keep the bytes of the write just requested.
        case appendOutput
        case sendCloseNotify
        /// Tell the delegate the handshake completed, then report `handshakeReported()` after what it did.
        case reportHandshake
        /// Tell the delegate the output that had to wait has gone.
        case reportDrained
        /// Tell the delegate the connection ended (nil: the peer closed cleanly).
        case reportClosed(TransportError?)
        /// Release the timer, the connect stage, the loop registration, the session, the socket and the output.
        case tearDown
    }

    typealias Actions = MachineActions<Action>

    /// Most bytes delivered per readiness event before yielding to other connections for a turn.
    static let readBudget = 1 << 20

    private(set) var state: State
    let isServer: Bool
    /// Whether `dialed()` leads to a proxy tunnel.
    let tunnels: Bool
    /// Seconds the handshake may take once TLS started.
    let handshakeTimeout: Double

    init(isServer: Bool, tunnels: Bool = false, handshakeTimeout: Double) {
        self.isServer = isServer
        self.tunnels = tunnels
        self.handshakeTimeout = handshakeTimeout
        state = .connecting(.resolving)
    }

    // MARK: - Connecting

    /// The name resolved (or was pinned).
    mutating func resolved() -> Actions {
        guard case .connecting(.resolving) = state else { return .none }
        state = .connecting(.dialing)
        return Actions(.dial)
    }

    /// The TCP connection is up.
    mutating func dialed() -> Actions {
        guard case .connecting(.dialing) = state else { return .none }
        guard tunnels else { return startingTLS() }
        state = .connecting(.tunnelling)
        return Actions(.openTunnel)
    }

    /// The proxy tunnel is up.
    mutating func tunnelled() -> Actions {
        guard case .connecting(.tunnelling) = state else { return .none }
        return startingTLS()
    }

    /// A connected socket was given to an initializer: TLS starts on it.
    mutating func attached() -> Actions {
        guard case .connecting = state else { return .none }
        return startingTLS()
    }

    /// Resolving, connecting or tunnelling failed.
    mutating func connectFailed(_ error: TransportError) -> Actions {
        guard case .connecting = state else { return .none }
        return ending(error)
    }

    /// The TLS session or the socket's registration could not be set up.
    mutating func startFailed(_ error: TransportError) -> Actions {
        guard case .handshaking = state else { return .none }
        return ending(error)
    }

    // MARK: - Handshake

    /// What one handshake step returned (`.transferred`: complete, and on a client ALPN and pins passed; a
    /// refusal comes as `.failed`).
    mutating func handshakeStepped(_ result: TLSSessionResult) -> Actions {
        guard case .handshaking(let interest) = state else { return .none }
        switch result {
        case .transferred:
            state = .established(Transfer(remembersSession: !isServer))
            var actions = Actions(.cancelTimer)
            if interest != .read { actions.append(.setInterest(.read)) }
            actions.append(.reportHandshake)
            return actions
        case .wantRead:
            return waitingInHandshake(for: .read)
        case .wantWrite:
            return waitingInHandshake(for: [.read, .write])
        case .failed(let error):
            return ending(error)
        case .closeNotify, .endOfFile:
            return ending(TransportError(.handshakeFailed, "the peer closed the connection"))
        }
    }

    /// The delegate heard of the handshake (and what it did meanwhile has been fed in): what was written before
    /// goes out, and what read-ahead pulled in with the last handshake message is read.
    mutating func handshakeReported() -> Actions {
        guard case .established(var transfer) = state else { return .none }
        transfer.readBudget = Self.readBudget
        state = .established(transfer)
        return [.write, .read(rememberSession: transfer.remembersSession)]
    }

    // MARK: - Readiness

    /// The socket is readable.
    mutating func readable() -> Actions {
        switch state {
        case .handshaking:
            return Actions(.stepHandshake)
        case .established(var transfer), .closing(var transfer):
            transfer.readBudget = Self.readBudget
            let read = Action.read(rememberSession: remembers(transfer))
            guard case .waits(.readable) = transfer.write else {
                update(transfer)
                return Actions(read)
            }
            transfer.write = .resumed(after: .readable)
            update(transfer)
            return [.write, read]
        case .connecting, .closed:
            return .none
        }
    }

    /// The socket is writable.
    mutating func writable() -> Actions {
        switch state {
        case .handshaking:
            return Actions(.stepHandshake)
        case .established(var transfer), .closing(var transfer):
            let before = transfer.interest
            var actions = Actions.none
            if case .waits(.writable) = transfer.write {
                transfer.write = .resumed(after: .writable)
                actions.append(.write)
            }
            if transfer.read == .waitsForWritable {
                transfer.read = .idle
                transfer.readBudget = Self.readBudget
                actions.append(.read(rememberSession: remembers(transfer)))
            }
            update(transfer)
            guard transfer.interest != before else { return actions }
            return Actions(.setInterest(transfer.interest)) + actions
        case .connecting, .closed:
            return .none
        }
    }

    /// The peer hung up: reading finds out how (close_notify, EOF, an error).
    mutating func hangup() -> Actions {
        readable()
    }

    /// The read scheduled for this turn (the budget was spent last turn).
    mutating func readingResumed() -> Actions {
        switch state {
        case .established(var transfer), .closing(var transfer):
            if transfer.read == .resumesNextTurn { transfer.read = .idle }
            transfer.readBudget = Self.readBudget
            update(transfer)
            return Actions(.read(rememberSession: remembers(transfer)))
        case .connecting, .handshaking, .closed:
            return .none
        }
    }

    // MARK: - Reading

    /// What one read returned; `sessionRemembered`: the session was remembered for resumption just before.
    mutating func read(_ result: TLSSessionResult, sessionRemembered: Bool) -> Actions {
        guard case .established(var transfer) = state else {
            guard case .closing(var transfer) = state else { return .none }
            // Closing: what still arrives is dropped.
            switch result {
            case .transferred(let count):
                transfer.readBudget -= count
                update(transfer)
                return transfer.readBudget > 0 ? Actions(.read(rememberSession: false)) : resumingNextTurn()
            case .wantRead, .wantWrite, .closeNotify, .endOfFile, .failed:
                return readStopped(result)
            }
        }
        if sessionRemembered { transfer.remembersSession = false }
        if case .transferred(let count) = result {
            transfer.readBudget -= count
            update(transfer)
            return Actions(.deliver(count: count))
        }
        update(transfer)
        return readStopped(result)
    }

    /// The delegate took the bytes of the last read (and what it did meanwhile has been fed in).
    mutating func delivered() -> Actions {
        switch state {
        case .established(let transfer), .closing(let transfer):
            guard transfer.readBudget > 0 else { return resumingNextTurn() }
            return Actions(.read(rememberSession: remembers(transfer)))
        case .connecting, .handshaking, .closed:
            return .none
        }
    }

    // MARK: - Writing

    /// What writing the queued output ended with: `.transferred`, all of it has gone.
    mutating func wrote(_ result: TLSSessionResult) -> Actions {
        switch state {
        case .established(var transfer):
            let before = transfer.interest
            switch result {
            case .transferred:
                guard transfer.write != .idle else { return .none }
                transfer.write = .idle
                update(transfer)
                return transfer.interest == before
                    ? Actions(.reportDrained) : [.setInterest(transfer.interest), .reportDrained]
            case .wantWrite, .wantRead:
                transfer.write = .waits(for: result == .wantWrite ? .writable : .readable)
                update(transfer)
                return transfer.interest == before ? .none : Actions(.setInterest(transfer.interest))
            case .closeNotify, .endOfFile:
                return ending(TransportError(.closedByPeer, "while writing"))
            case .failed(let error):
                return ending(error)
            }
        case .closing(var transfer):
            let before = transfer.interest
            switch result {
            case .transferred:
                state = .closed
                return [.sendCloseNotify, .tearDown]
            case .wantWrite, .wantRead:
                transfer.write = .waits(for: result == .wantWrite ? .writable : .readable)
                update(transfer)
                return transfer.interest == before ? .none : Actions(.setInterest(transfer.interest))
            case .closeNotify, .endOfFile, .failed:
                return ending(nil)  // untold: the owner closed
            }
        case .connecting, .handshaking, .closed:
            return .none
        }
    }

    // MARK: - The owner's calls

    /// The owner writes: kept until flushed (or until the handshake completes), unless closing or closed.
    mutating func writeRequested() -> Actions {
        switch state {
        case .connecting, .handshaking, .established: Actions(.appendOutput)
        case .closing, .closed: .none
        }
    }

    /// The owner flushes: written now when established and no write waits for the socket.
    mutating func flushRequested() -> Actions {
        guard case .established(let transfer) = state else { return .none }
        if case .waits = transfer.write { return .none }
        return Actions(.write)
    }

    /// The owner closes gracefully: the queued output, then close_notify, within `gracePeriod` seconds. Before the
    /// handshake completed (or closing already), the same as `abortRequested()`.
    mutating func closeRequested(gracePeriod: Double) -> Actions {
        switch state {
        case .established(let transfer):
            state = .closing(transfer)
            if case .waits = transfer.write { return Actions(.armTimer(seconds: gracePeriod)) }
            return [.armTimer(seconds: gracePeriod), .write]
        case .connecting, .handshaking, .closing:
            state = .closed
            return Actions(.tearDown)
        case .closed:
            return .none
        }
    }

    /// The owner drops the connection: nothing more is sent, nothing told.
    mutating func abortRequested() -> Actions {
        if case .closed = state { return .none }
        state = .closed
        return Actions(.tearDown)
    }

    /// The running timer fired: the handshake took too long, or the close's grace period is over.
    mutating func timerFired() -> Actions {
        switch state {
        case .handshaking:
            return ending(TransportError(.timeout, "TLS handshake not complete after \(handshakeTimeout)s"))
        case .closing:
            return ending(nil)
        case .connecting, .established, .closed:
            return .none
        }
    }

    // MARK: - Internals

    /// Both directions' progress while established or closing.
    private var transfer: Transfer? {
        switch state {
        case .established(let transfer), .closing(let transfer): transfer
        case .connecting, .handshaking, .closed: nil
        }
    }

    private mutating func startingTLS() -> Actions {
        // A client speaks first: writable (at once) starts its handshake. A server waits for the ClientHello.
        let interest: EventLoopInterest = isServer ? .read : [.read, .write]
        state = .handshaking(interest)
        return [.startTLS(interest: interest), .armTimer(seconds: handshakeTimeout)]
    }

    private mutating func waitingInHandshake(for interest: EventLoopInterest) -> Actions {
        guard case .handshaking(let before) = state, before != interest else { return .none }
        state = .handshaking(interest)
        return Actions(.setInterest(interest))
    }

    /// A read that delivered nothing: wait, or end.
    private mutating func readStopped(_ result: TLSSessionResult) -> Actions {
        switch result {
        case .transferred, .wantRead:
            return .none
        case .wantWrite:
            guard var transfer else { return .none }
            let before = transfer.interest
            transfer.read = .waitsForWritable
            update(transfer)
            return transfer.interest == before ? .none : Actions(.setInterest(transfer.interest))
        case .closeNotify:
            return Actions(.sendCloseNotify) + ending(nil)
        case .endOfFile:
            return ending(TransportError(.closedByPeer, "TCP closed without TLS close_notify"))
        case .failed(let error):
            return ending(error)
        }
    }

    /// The budget is spent: go on next turn (once scheduled, not again).
    private mutating func resumingNextTurn() -> Actions {
        switch state {
        case .established(var transfer), .closing(var transfer):
            guard transfer.read != .resumesNextTurn else { return .none }
            transfer.read = .resumesNextTurn
            update(transfer)
            return Actions(.resumeReadingNextTurn)
        case .connecting, .handshaking, .closed:
            return .none
        }
    }

    /// Whether a read now should first try to remember the session (established only).
    private func remembers(_ transfer: Transfer) -> Bool {
        guard case .established = state else { return false }
        return transfer.remembersSession
    }

    /// Puts `transfer` back into the current phase.
    private mutating func update(_ transfer: Transfer) {
        switch state {
        case .established: state = .established(transfer)
        case .closing: state = .closing(transfer)
        case .connecting, .handshaking, .closed: break
        }
    }

    /// Moves to closed: the delegate hears why, unless the owner asked for the ending (closing).
    private mutating func ending(_ error: TransportError?) -> Actions {
        switch state {
        case .closed:
            return .none
        case .closing:
            state = .closed
            return Actions(.tearDown)
        case .connecting, .handshaking, .established:
            state = .closed
            return [.tearDown, .reportClosed(error)]
        }
    }
}
