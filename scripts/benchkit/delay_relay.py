"""A TCP relay on 127.0.0.1 that holds every byte for a fixed delay each way: row 10's second relay, built
differently from the project's own `rtt-relay` (Swift, one epoll loop, raw non-blocking sockets): Python's asyncio
event loop, its transports' buffering and write flow control, a connect to the target per accepted client.

    python3 delay_relay.py --target PORT --delay-ms MS --port-file FILE

It listens on an ephemeral port (written to FILE once it listens) and forwards each accepted connection to
127.0.0.1:PORT. Each direction is a queue of chunks stamped with when they are due and one timer for the oldest;
bytes leave in order. When the side written to cannot keep up (its transport's buffer passed the high-water mark),
the side read from is paused, so the relay never buffers without bound. Stops on SIGTERM or SIGINT."""
import argparse
import asyncio
import collections
import os
import signal
import sys

CLOSE = None  # the queued mark: the side this direction reads from has ended


class Direction:
    """One direction of one relayed connection: what its source sent, written to its sink once due."""

    def __init__(self, loop, delay):
        self.loop, self.delay = loop, delay
        self.sink = None  # the transport written to, once connected
        self.queue = collections.deque()
        self.timer = None

    def push(self, data):
        self.queue.append((self.loop.time() + self.delay, data))
        if self.timer is None and self.sink is not None:
            self.timer = self.loop.call_at(self.queue[0][0], self.release)

    def attach(self, sink):
        self.sink = sink
        if self.queue and self.timer is None:
            self.timer = self.loop.call_at(self.queue[0][0], self.release)

    def release(self):
        """Writes every chunk now due, in order, and sets the timer for the next one."""
        self.timer = None
        now = self.loop.time()
        while self.queue and self.queue[0][0] <= now:
            _, data = self.queue.popleft()
            if data is CLOSE:
                self.queue.clear()
                self.sink.close()  # what is buffered still goes out first
                return
            self.sink.write(data)
        if self.queue:
            self.timer = self.loop.call_at(self.queue[0][0], self.release)

    def cancel(self):
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.queue.clear()


class Side(asyncio.Protocol):
    """One socket of a relayed connection: what it reads goes into `outgoing`; `incoming` writes into it."""

    def __init__(self, outgoing, incoming):
        self.outgoing, self.incoming = outgoing, incoming
        self.peer = None  # the other side, whose reading pauses while this one's buffer is full
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        self.incoming.attach(transport)

    def data_received(self, data):
        self.outgoing.push(data)

    def eof_received(self):
        self.outgoing.push(CLOSE)
        return False  # close this transport; the peer closes once the bytes before the mark are due

    def connection_lost(self, exc):
        if exc is not None:  # a reset: nothing more comes from here, and nothing can be written here
            self.incoming.cancel()
            self.outgoing.push(CLOSE)

    def pause_writing(self):
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self):
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()


class Accepted(Side):
    """The accepted client's side: it reads nothing until the relay's own connection to the target is up."""

    def __init__(self, outgoing, incoming, upstream, target):
        super().__init__(outgoing, incoming)
        self.peer, upstream.peer = upstream, self
        self.upstream, self.target = upstream, target

    def connection_made(self, transport):
        super().connection_made(transport)
        transport.pause_reading()
        asyncio.get_running_loop().create_task(self.connect())

    async def connect(self):
        try:
            await asyncio.get_running_loop().create_connection(lambda: self.upstream, "127.0.0.1", self.target)
        except OSError as error:
            print(f"delay_relay: cannot reach 127.0.0.1:{self.target}: {error}", file=sys.stderr)
            self.transport.close()
            return
        self.transport.resume_reading()


async def relay(target, delay, port_file):
    loop = asyncio.get_running_loop()

    def accepted():
        up, down = Direction(loop, delay), Direction(loop, delay)
        return Accepted(outgoing=up, incoming=down, upstream=Side(outgoing=down, incoming=up), target=target)

    server = await loop.create_server(accepted, "127.0.0.1", 0, reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    temporary = port_file + ".tmp"
    with open(temporary, "w") as f:
        f.write(f"{port}\n")
    os.replace(temporary, port_file)  # whole or absent: the bench waits for the file
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))
    await stop
    server.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description="a TCP relay adding a fixed delay each way (row 10's second relay)")
    parser.add_argument("--target", type=int, required=True, help="the port on 127.0.0.1 to forward to")
    parser.add_argument("--delay-ms", type=float, required=True, help="the delay each way, in milliseconds")
    parser.add_argument("--port-file", required=True, help="where to write the port listened on")
    args = parser.parse_args(argv)
    if args.delay_ms < 0 or not 0 < args.target < 65536:
        parser.error("--delay-ms must be 0 or more and --target a port")
    asyncio.run(relay(args.target, args.delay_ms / 1000, args.port_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
