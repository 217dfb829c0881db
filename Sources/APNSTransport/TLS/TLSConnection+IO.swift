extension TLSConnection {
    /// Most bytes delivered per readiness event before yielding to other connections for a turn.
    static let readBudget = 1 << 20

    public func readable() {
        switch state {
        case .handshaking:
            continueHandshake()
        case .established, .closing:
            if writeWaitsForReadable {
                writeWaitsForReadable = false
                drainOutput()
            }
            readAvailable()
        case .connecting, .closed:
            break
        }
    }

    public func writable() {
        switch state {
        case .handshaking:
            continueHandshake()
        case .established, .closing:
            if readWaitsForWritable {
                readWaitsForWritable = false
                readAvailable()
            }
            if writeWaitsForWritable {
                writeWaitsForWritable = false
                drainOutput()
            }
            updateInterest()
        case .connecting, .closed:
            break
        }
    }

    public func hangup() {
        readable()
    }

    func continueHandshake() {
        guard let session else { return }
        switch session.handshake() {
        case .transferred:
            completeHandshake(session)
        case .wantRead:
            handshakeInterest = .read
            updateInterest()
        case .wantWrite:
            handshakeInterest = [.read, .write]
            updateInterest()
        case .failed(let error):
            fail(error)
        case .closeNotify, .endOfFile:
            fail(TransportError(.handshakeFailed, "the peer closed the connection"))
        }
    }

    private func completeHandshake(_ session: TLSSessionOpenSSL) {
        timer?.cancel()
        timer = nil
        let info = session.handshakeInfo()
        if !isServer {
            if let refusal = refusal(of: info, session) {
                fail(refusal)
                return
            }
        }
        handshakeInfo = info
        state = .established
        updateInterest()
        delegate?.tlsConnection(self, didCompleteHandshake: info)
        guard state == .established else { return }
        if !output.isEmpty { drainOutput() }
        // Read-ahead may have pulled application data in with the last handshake message.
        readAvailable()
    }

    /// Why a client must refuse a completed handshake: ALPN not among ours, or no pinned key in the chain.
    private func refusal(of info: TLSHandshakeInfo, _ session: TLSSessionOpenSSL) -> TransportError? {
        let required = context.requiredProtocols
        if !required.isEmpty {
            guard let selected = info.applicationProtocol else {
                return TransportError(.alpnNotH2, "the server selected no protocol (offered \(required.joined(separator: ", ")))")
            }
            guard required.contains(selected) else {
                return TransportError(.alpnNotH2, "the server selected '\(selected)'")
            }
        }
        if !context.pins.isEmpty {
            let chain = session.peerCertificates(includeVerified: true)
            guard chain.contains(where: { context.pins.contains($0.spkiSHA256Base64) }) else {
                let presented = chain.map { "\($0.spkiSHA256Base64) (\($0.subject))" }.joined(separator: ", ")
                return TransportError(.pinMismatch, "presented: \(presented); pinned: \(context.pins.sorted().joined(separator: ", "))")
            }
        }
        return nil
    }

    /// Decrypts and delivers what is available, up to the read budget.
    func readAvailable() {
        guard let session else { return }
        var budget = Self.readBudget
        loop.withReadBuffer { buffer in
            while state == .established || state == .closing {
                switch session.read(into: &buffer) {
                case .transferred(let count):
                    if state == .established {
                        delegate?.tlsConnection(self, didReceive: buffer.span.extracting(..<count).bytes)
                    }  // while closing, what still arrives is dropped
                    budget -= count
                    if budget <= 0 {
                        continueReadingNextTurn()
                        return
                    }
                case .wantRead:
                    return
                case .wantWrite:
                    readWaitsForWritable = true
                    updateInterest()
                    return
                case .closeNotify:
                    session.sendCloseNotify()
                    fail(nil)
                    return
                case .endOfFile:
                    fail(TransportError(.closedByPeer, "TCP closed without TLS close_notify"))
                    return
                case .failed(let error):
                    fail(error)
                    return
                }
            }
        }
    }

    /// Level-triggered epoll will not report bytes OpenSSL already holds: come back next turn to keep reading.
    private func continueReadingNextTurn() {
        guard !readContinuesNextTurn else { return }
        readContinuesNextTurn = true
        loop.executeNextTurn { [weak self] in
            guard let self else { return }
            self.readContinuesNextTurn = false
            self.readAvailable()
        }
    }

    /// Writes queued output until it is gone or the socket pushes back.
    func drainOutput() {
        guard let session else { return }
        while !output.isEmpty {
            switch output.withUnsentBytes({ session.write($0) }) {
            case .transferred(let count):
                output.consume(count)
            case .wantWrite:
                writeWaitsForWritable = true
                owesDrainNotice = true
                updateInterest()
                return
            case .wantRead:
                writeWaitsForReadable = true
                owesDrainNotice = true
                return
            case .closeNotify, .endOfFile:
                fail(TransportError(.closedByPeer, "while writing"))
                return
            case .failed(let error):
                fail(error)
                return
            }
        }
        if state == .closing {
            session.sendCloseNotify()
            teardown()
            return
        }
        updateInterest()
        if owesDrainNotice {
            owesDrainNotice = false
            delegate?.tlsConnectionDidDrainOutput(self)
        }
    }
}
