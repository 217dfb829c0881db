import APNSTransport
import ArgumentParser
import Foundation

/// The `rtt-relay` command: a TCP relay on loopback that adds a round-trip time, for the benchmarks at a real
/// round-trip time and the soak (scripts/bench.sh rows 10 and 11, scripts/soak.sh with SOAK_RTT). Owns the
/// listener and the event loop; each accepted connection becomes a `RelayedConnection` to the target.
@main
struct RTTRelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtt-relay",
        abstract: "Relay TCP on loopback with a delay each way: every chunk read on one side is written to the other "
            + "--delay-ms later, in order.",
        discussion: """
            TLS, HTTP/2 flow control and handshakes all pay the delay, as they do on the way to APNs; the round \
            trip is twice --delay-ms. One thread, one epoll loop, one timer per direction: the chunks of one \
            direction that fall due together go out in one write, so the relay costs the server's core little \
            and about the same whether a client spreads its requests over many connections or few. An end (or \
            a reset) read on one side reaches the other as a half-close, --delay-ms later. Only 127.0.0.1 is \
            listened on and connected to.
            """
    )

    @Option(help: "The port on 127.0.0.1 to relay to.")
    var target: Int

    @Option(name: .customLong("delay-ms"), help: "The delay each way, in milliseconds.")
    var delayMilliseconds: Double

    @Option(help: "The port on 127.0.0.1 to listen on (0: a free one).")
    var listen: Int = 0

    @Option(name: .customLong("port-file"), help: "A file to write the port to once listening.")
    var portFile: String?

    func validate() throws {
        guard (1...65535).contains(target) else { throw ValidationError("--target must be a port, 1 to 65535") }
        guard (0...65535).contains(listen) else { throw ValidationError("--listen must be a port, 0 to 65535") }
        guard delayMilliseconds >= 0, delayMilliseconds <= 10_000 else {
            throw ValidationError("--delay-ms must be 0 to 10000")
        }
    }

    func run() throws {
        guard let targetAddress = SocketAddress(ipAddress: "127.0.0.1", port: target) else {
            throw ValidationError("--target \(target) is not a port")
        }
        let loop = try EventLoop()
        let delay = delayMilliseconds / 1000
        let readBuffer = RelayReadBuffer()
        let listener = try SocketListener(loop: loop, host: "127.0.0.1", port: listen) { client in
            let connector = SocketConnector(loop: loop, addresses: [targetAddress], timeout: 5) { result in
                guard case .success(let server) = result else { return client.close() }
                RelayedConnection(loop: loop, delay: delay, readBuffer: readBuffer, client: client, target: server)
                    .start()
            }
            connector.start()
        }
        if let portFile {
            try "\(listener.port)\n".write(toFile: portFile, atomically: true, encoding: .utf8)
        }
        FileHandle.standardError.write(
            Data(
                "rtt-relay: 127.0.0.1:\(listener.port) -> \(targetAddress), \(delayMilliseconds) ms each way\n".utf8
            ))
        loop.run()
    }
}
