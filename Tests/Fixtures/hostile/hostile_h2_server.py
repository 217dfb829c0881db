#!/usr/bin/env python3
"""A deliberately broken HTTP/2-over-TLS server on 127.0.0.1, for the end-to-end tests of `send` against servers
that misbehave (Tests/EndToEndTests/HostileServerEndToEndTests.swift). It shares no code with apns-bulk: Python's
ssl module, HTTP/2 frames written by hand (RFC 9113), header blocks as plain HPACK literals (RFC 7541), and it never
decodes the client's header blocks (only frame types, flags and stream ids).

Modes:
  silent          completes TLS (ALPN h2), then never writes a byte
  window0         SETTINGS_INITIAL_WINDOW_SIZE 0 and never a WINDOW_UPDATE: request bodies can never leave
  drip            answers every request 200, one byte a second over the whole connection
  status999       answers every request with :status 999 and a BadDeviceToken body
  bad-apns-id     answers 200 with an apns-id that is no UUID (U+2028, U+202E, U+0085)
  big-body        answers 400 with a 50 MB body
  push-promise    answers the first request with a PUSH_PROMISE (the client disabled push)
  unknown-stream  answers with HEADERS on a stream the client never opened
  refused         resets every request with REFUSED_STREAM
  handshake-close reads the ClientHello, then closes the TCP connection without a TLS alert (what a server that
                  speaks only TLS 1.1, only RSA key exchange or only CBC suites does behind some middleboxes)
  tcp-refused     nothing listens on the port written: every connect is refused

  hostile_h2_server.py --mode MODE --cert C --key K --port-file F [--duration S]
"""
import argparse
import os
import socket
import ssl
import struct
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 5, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream & 0x7FFFFFFF) + payload


def literal(name, value):
    """An HPACK literal header field without indexing, new name, no Huffman (lengths below 127)."""
    name, value = name.encode(), value if isinstance(value, bytes) else value.encode()
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def status(code):
    return literal(":status", str(code))


class Connection:
    def __init__(self, sock, mode):
        self.sock, self.mode = sock, mode
        self.lock = threading.Lock()
        self.answered = False
        self.drip = bytearray()

    def send(self, data, answer=False):
        """Writes frames; in drip mode answers (and whatever follows them) join the one-byte-a-second queue."""
        with self.lock:
            if self.mode == "drip" and (answer or self.drip):
                self.drip += data
            else:
                self.sock.sendall(data)

    def read_exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def dripper(self):
        while True:
            time.sleep(1)
            with self.lock:
                if self.drip:
                    self.sock.sendall(bytes(self.drip[:1]))
                    del self.drip[:1]

    def run(self):
        if self.read_exactly(len(PREFACE)) != PREFACE:
            return
        if self.mode == "silent":
            while self.sock.recv(65536):
                pass
            return
        if self.mode == "drip":
            threading.Thread(target=self.dripper, daemon=True).start()
        settings = struct.pack(">HI", 3, 1000)  # MAX_CONCURRENT_STREAMS
        if self.mode == "window0":
            settings += struct.pack(">HI", 4, 0)  # INITIAL_WINDOW_SIZE
        self.send(frame(SETTINGS, 0, 0, settings))
        while True:
            head = self.read_exactly(9)
            length = int.from_bytes(head[:3], "big")
            kind, flags = head[3], head[4]
            stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
            payload = self.read_exactly(length) if length else b""
            if kind == SETTINGS and not flags & ACK:
                self.send(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                self.send(frame(PING, ACK, 0, payload))
            elif kind == DATA and length and self.mode != "window0":
                self.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", length)))
            if kind in (HEADERS, DATA) and flags & END_STREAM:
                self.answer(stream)

    def answer(self, stream):
        mode = self.mode
        if mode == "window0":
            return
        if mode == "refused":
            self.send(frame(RST_STREAM, 0, stream, struct.pack(">I", 7)))
        elif mode == "push-promise":
            block = literal(":method", "GET") + literal(":path", "/") + literal(":scheme", "https") + \
                literal(":authority", "127.0.0.1")
            self.send(frame(PUSH_PROMISE, END_HEADERS, stream, struct.pack(">I", stream + 1) + block))
        elif mode == "unknown-stream":
            self.send(frame(HEADERS, END_HEADERS | END_STREAM, stream + 100, status(200)))
        elif mode == "status999":
            body = b'{"reason":"BadDeviceToken"}'
            self.send(frame(HEADERS, END_HEADERS, stream, status(999)) + frame(DATA, END_STREAM, stream, body))
        elif mode == "bad-apns-id":
            bad = "0000\u2028FAKE\u202e-line\u0085".encode()  # bytes nghttp2 lets through, no UUID
            self.send(frame(HEADERS, END_HEADERS | END_STREAM, stream, status(200) + literal("apns-id", bad)))
        elif mode == "big-body":
            self.send(frame(HEADERS, END_HEADERS, stream, status(400)))
            chunk = b'{"reason":"BadTopic"' + b" " * 16000
            try:
                for _ in range(50 * 1024 * 1024 // len(chunk)):
                    self.send(frame(DATA, 0, stream, chunk))
                self.send(frame(DATA, END_STREAM, stream, b"}"))
            except OSError:
                pass
        else:  # drip
            self.send(frame(HEADERS, END_HEADERS | END_STREAM, stream, status(200)), answer=True)


def serve(client, mode, context):
    if mode == "handshake-close":
        try:
            client.settimeout(5)
            client.recv(65536)
        except OSError:
            pass
        client.close()
        return
    try:
        with context.wrap_socket(client, server_side=True) as sock:
            Connection(sock, mode).run()
    except (EOFError, OSError, ssl.SSLError):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--duration", type=float, default=300)
    args = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2"])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    if args.mode == "tcp-refused":
        listener.close()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(args.port_file + ".tmp", args.port_file)
    deadline = time.time() + args.duration
    if args.mode == "tcp-refused":
        time.sleep(args.duration)
        return 0
    listener.settimeout(1)
    while time.time() < deadline:
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(client, args.mode, context), daemon=True).start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
