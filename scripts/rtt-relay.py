#!/usr/bin/env python3
"""A TCP relay on loopback that adds a round-trip time: every chunk read on one side is written to the other
`--delay-ms` later (one way; the round trip is twice that), in order, each direction on its own. TLS, HTTP/2 flow
control and handshakes all pay it, as they do on the way to APNs. For benchmarks (issue 29's RTT rows) and the
soak at a real RTT: only 127.0.0.1 is listened on and connected to.

One thread, one epoll loop, no task or timer per chunk: a relay that costs little CPU a chunk, so that what a
benchmark measures is the client and the server, not the relay (an asyncio relay cost about twice as much CPU,
and more the more connections a client opened). Chunks of one direction that fall due together go out in one
send, and the epoll interest of a socket is changed only when it changes: a real network costs the server nothing
a chunk, and a relay on the server's core that pays a system call or two per chunk charges clients that spread
their requests over many connections (smaller chunks) for it. A reset on one side ends the other side's stream like a close,
`--delay-ms` later.

Usage: rtt-relay.py --target PORT --delay-ms 25 [--listen PORT] [--port-file FILE]
"""
import argparse
import collections
import heapq
import select
import socket
import sys
import time

READ_SIZE = 1 << 18
# Bytes read but not yet written on one direction before that direction stops reading (flow control, so a slow
# reader cannot make the relay buffer without bound).
HIGH_WATER = 8 << 20


class Direction:
    """One way of one relayed connection: reads `source`, writes to `sink` what was read `delay` seconds ago."""

    def __init__(self, source, sink):
        self.source = source
        self.sink = sink
        self.pending = collections.deque()  # (due, bytes); b"" marks the end of the stream
        self.buffered = 0
        self.reading = True                 # false once the source ended or the buffer is full
        self.ended = False                  # the end was read (or the source reset)
        self.partial = b""                  # the part of the due chunk the sink did not take yet
        self.done = False                   # the end was passed on to the sink


class Relay:
    def __init__(self, target, delay):
        self.target = target
        self.delay = delay
        self.poll = select.epoll()
        self.by_fd = {}       # fd -> (socket, [directions reading it], [directions writing it])
        self.masks = {}       # fd -> the epoll interest registered for it
        self.due = []         # heap of (due time, sequence, direction) with something due
        self.sequence = 0

    def register(self, sock):
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.by_fd[sock.fileno()] = (sock, [], [])
        self.masks[sock.fileno()] = select.EPOLLIN
        self.poll.register(sock.fileno(), select.EPOLLIN)

    def accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except BlockingIOError:
                return
            server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                server.connect(("127.0.0.1", self.target))
            except OSError:
                client.close()
                server.close()
                continue
            for sock in (client, server):
                self.register(sock)
            up, down = Direction(client, server), Direction(server, client)
            self.by_fd[client.fileno()][1].append(up)
            self.by_fd[server.fileno()][2].append(up)
            self.by_fd[server.fileno()][1].append(down)
            self.by_fd[client.fileno()][2].append(down)

    def interest(self, sock):
        entry = self.by_fd.get(sock.fileno())
        if entry is None:
            return
        _, readers, writers = entry
        mask = 0
        if any(d.reading for d in readers):
            mask |= select.EPOLLIN
        if any(d.partial for d in writers):
            mask |= select.EPOLLOUT
        if self.masks.get(sock.fileno()) != mask:
            self.masks[sock.fileno()] = mask
            self.poll.modify(sock.fileno(), mask)

    def read(self, direction, now):
        try:
            data = direction.source.recv(READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not direction.pending:
            heapq.heappush(self.due, (now + self.delay, self.sequence, direction))
            self.sequence += 1
        direction.pending.append((now + self.delay, data))
        direction.buffered += len(data)
        if not data:
            direction.ended = True
            direction.reading = False
        elif direction.buffered >= HIGH_WATER:
            direction.reading = False
        self.interest(direction.source)

    def write(self, direction, now):
        """Writes what is due on `direction`; returns the time its next chunk falls due, if any."""
        while True:
            if direction.partial:
                try:
                    sent = direction.sink.send(direction.partial)
                except BlockingIOError:
                    self.interest(direction.sink)
                    return None
                except OSError:
                    self.close_pair(direction)
                    return None
                direction.buffered -= sent
                direction.partial = direction.partial[sent:]
                if direction.partial:
                    self.interest(direction.sink)
                    return None
                if not direction.reading and not direction.ended and direction.buffered < HIGH_WATER // 2:
                    direction.reading = True
                    self.interest(direction.source)
            if not direction.pending:
                return None
            due, data = direction.pending[0]
            if due > now:
                return due
            direction.pending.popleft()
            if not data:
                self.finish(direction)
                return None
            # Every chunk already due goes out with this one (up to the end of the stream, which waits its turn).
            chunks = [data]
            while direction.pending and direction.pending[0][0] <= now and direction.pending[0][1]:
                chunks.append(direction.pending.popleft()[1])
            direction.partial = chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def finish(self, direction):
        """The source's end reached the sink: half-close it; once both ways are done, close both sockets."""
        direction.done = True
        try:
            direction.sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        entry = self.by_fd.get(direction.source.fileno())
        if entry is None:
            return
        others = [d for d in entry[2] if d is not direction]
        if all(d.done for d in others):
            self.close_pair(direction)

    def close_pair(self, direction):
        for sock in (direction.source, direction.sink):
            entry = self.by_fd.pop(sock.fileno(), None) if sock.fileno() >= 0 else None
            if entry is None:
                continue
            for d in entry[1] + entry[2]:
                d.pending.clear()
                d.partial = b""
                d.reading = False
                d.done = True
            self.masks.pop(sock.fileno(), None)
            self.poll.unregister(sock.fileno())
            sock.close()

    def run(self, listener):
        self.poll.register(listener.fileno(), select.EPOLLIN)
        while True:
            now = time.monotonic()
            timeout = max(0.0, self.due[0][0] - now) if self.due else -1
            events = self.poll.poll(timeout)
            now = time.monotonic()
            for fd, mask in events:
                if fd == listener.fileno():
                    self.accept(listener)
                    continue
                entry = self.by_fd.get(fd)
                if entry is None:
                    continue
                _, readers, writers = entry
                if mask & (select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR):
                    for d in list(readers):
                        if d.reading:
                            self.read(d, now)
                if mask & select.EPOLLOUT:
                    for d in list(writers):
                        if d.partial:
                            self.reschedule(d, self.write(d, now))
            while self.due and self.due[0][0] <= now:
                _, _, d = heapq.heappop(self.due)
                if d.done:
                    continue
                self.reschedule(d, self.write(d, now))

    def reschedule(self, direction, due):
        if due is not None and not direction.done:
            heapq.heappush(self.due, (due, self.sequence, direction))
            self.sequence += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", type=int, required=True, help="port on 127.0.0.1 to relay to")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay in milliseconds")
    parser.add_argument("--listen", type=int, default=0, help="port to listen on (0: a free one)")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    args = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.listen))
    listener.listen(1024)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    if args.port_file:
        with open(args.port_file, "w") as f:
            f.write(f"{port}\n")
    print(f"rtt-relay: 127.0.0.1:{port} -> 127.0.0.1:{args.target}, {args.delay_ms} ms each way", file=sys.stderr)
    Relay(args.target, args.delay_ms / 1000).run(listener)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
