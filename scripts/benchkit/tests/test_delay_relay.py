"""The second relay of row 10 (`delay_relay.py`): it delays each way by what it is told, keeps every byte in order,
passes the end of a stream on, and stops cleanly; against an echo server on 127.0.0.1."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

RELAY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "delay_relay.py")


class EchoServer:
    """Echoes every byte of each connection back, until the client ends its side."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.echo, args=(conn,), daemon=True).start()

    @staticmethod
    def echo(conn):
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)


class DelayRelayTest(unittest.TestCase):
    def setUp(self):
        self.echo = EchoServer()
        self.dir = tempfile.TemporaryDirectory()
        self.port_file = os.path.join(self.dir.name, "port")

    def tearDown(self):
        self.echo.sock.close()
        self.dir.cleanup()

    def start(self, delay_ms, target=None):
        target = self.echo.port if target is None else target
        relay = subprocess.Popen([sys.executable, RELAY, "--target", str(target), "--delay-ms",
                                  str(delay_ms), "--port-file", self.port_file], stderr=subprocess.PIPE)
        self.addCleanup(lambda: relay.poll() is None and relay.kill())
        deadline = time.monotonic() + 10
        while not os.path.exists(self.port_file):
            self.assertLess(time.monotonic(), deadline, "the relay wrote no port file")
            time.sleep(0.02)
        with open(self.port_file) as f:
            return relay, int(f.read())

    def connect(self, port):
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.addCleanup(conn.close)
        return conn

    def test_a_round_trip_takes_twice_the_delay_each_way(self):
        _, port = self.start(40)
        conn = self.connect(port)
        for _ in range(3):
            started = time.monotonic()
            conn.sendall(b"x")
            self.assertEqual(conn.recv(1), b"x")
            elapsed = time.monotonic() - started
            self.assertGreaterEqual(elapsed, 0.080)  # there and back through the relay: 40 ms each way, twice
            self.assertLess(elapsed, 0.5)

    def test_every_byte_arrives_in_order_and_the_end_passes_on(self):
        relay, port = self.start(5)
        conn = self.connect(port)
        data = os.urandom(8_000_000)
        received = bytearray()

        def read():
            while len(received) < len(data):
                chunk = conn.recv(1 << 20)
                if not chunk:
                    return
                received.extend(chunk)

        reader = threading.Thread(target=read)
        reader.start()
        conn.sendall(data)
        reader.join(20)
        self.assertEqual(bytes(received), data)
        conn.shutdown(socket.SHUT_WR)  # the echo server sees the end, ends its side, and that end comes back
        self.assertEqual(conn.recv(1), b"")
        relay.send_signal(signal.SIGTERM)
        self.assertEqual(relay.wait(10), 0)
        relay.stderr.close()

    def test_a_target_that_refuses_closes_the_client(self):
        unused = socket.socket()
        unused.bind(("127.0.0.1", 0))  # bound, never listening: a connect to it is refused
        self.addCleanup(unused.close)
        relay, port = self.start(1, target=unused.getsockname()[1])
        conn = self.connect(port)
        try:
            self.assertEqual(conn.recv(1), b"")
        except ConnectionResetError:
            pass
        relay.send_signal(signal.SIGTERM)
        self.assertEqual(relay.wait(10), 0)
        with relay.stderr:
            self.assertIn(b"cannot reach", relay.stderr.read())


if __name__ == "__main__":
    unittest.main()
