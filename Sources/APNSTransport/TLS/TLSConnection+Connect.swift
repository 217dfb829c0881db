extension TLSConnection {
    /// Opens a client connection to `host:port`: resolves the name off the loop, connects over TCP (each
    /// address in turn, within the configured connect timeout), tunnels through `proxy` with CONNECT when given,
    /// then runs the TLS handshake verifying `host`. Returns at once; the delegate hears
    /// `didCompleteHandshake` or `didCloseWith(error)` on a later turn. Writes made before the handshake are
    /// sent right after it.
    public static func connect(host: String, port: Int, proxy: ProxyConfiguration? = nil,
                               context: TLSClientContext, loop: EventLoop,
                               delegate: (any TLSConnectionDelegate)?) -> TLSConnection {
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let connection = TLSConnection(loop: loop, context: context.context, serverName: literal, delegate: delegate)
        connection.startConnecting(host: literal, port: port, proxy: proxy)
        return connection
    }

    private func startConnecting(host: String, port: Int, proxy: ProxyConfiguration?) {
        let dialHost = proxy?.host ?? host
        let dialPort = proxy?.port ?? port
        loop.resolve(host: dialHost, port: dialPort) { result in
            guard self.state == .connecting else { return }
            switch result {
            case .failure(let error):
                self.fail(proxy == nil ? error : TransportError(error.kind, "proxy \(proxy?.description ?? ""): \(error.detail)"))
            case .success(let addresses):
                let connector = SocketConnector(loop: self.loop, addresses: addresses,
                                                timeout: self.context.connectTimeout) { result in
                    self.stage = nil
                    self.connected(result, host: host, port: port, proxy: proxy)
                }
                self.stage = connector
                connector.start()
            }
        }
    }

    private func connected(_ result: Result<Socket, TransportError>, host: String, port: Int, proxy: ProxyConfiguration?) {
        guard state == .connecting else { return }
        switch result {
        case .failure(let error):
            fail(error)
        case .success(let socket):
            guard let proxy else {
                startTLS(on: socket)
                return
            }
            let tunnel = ProxyTunnel(loop: loop, socket: socket, proxy: proxy, host: host, port: port,
                                     timeout: context.handshakeTimeout) { result in
                self.stage = nil
                guard self.state == .connecting else { return }
                switch result {
                case .failure(let error): self.fail(error)
                case .success(let socket): self.startTLS(on: socket)
                }
            }
            stage = tunnel
            tunnel.start()
        }
    }

    private func startTLS(on socket: Socket) {
        do throws(TransportError) {
            try attach(socket)
        } catch {
            fail(error)
        }
    }
}
