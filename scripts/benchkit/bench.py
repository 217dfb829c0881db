"""What every row uses: the run's settings, binaries, inputs and directory, and the steps shared by rows (start
nghttpd, the mock or the relay; one send or h2load run checked and timed; campaigns)."""
import dataclasses
import os
import signal
import subprocess
import sys

from . import procs, stats
from .options import STREAMS
from .procs import BenchFailure

KEY = "samples/keys/AuthKey_TEST123456.p8"
PUB = "samples/keys/AuthKey_TEST123456.pub.pem"
AUTH = ["--key", KEY, "--key-id", "TEST123456", "--team-id", "TEAMID1234"]
TOPIC = "com.example.app"
TOKEN = "ab" * 32  # the one token of the --allow-duplicates campaigns (64 hex digits)
PAYLOAD = '{"aps":{"alert":{"title":"Hello","body":"Record 1"},"badge":1}}'
DEFAULT = object()  # run_send: `--connections CONNECTIONS`
DELAY_RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "delay_relay.py")  # row 10's second relay


def same_token_line():
    """One record of the --allow-duplicates campaigns: the h2load payload byte for byte."""
    return f'{{"token":"{TOKEN}","payload":{PAYLOAD}}}'


@dataclasses.dataclass
class Server:
    proc: subprocess.Popen
    port: int
    ca: str = ""

    @property
    def pid(self):
        return self.proc.pid


class Bench:
    def __init__(self, opts, work, binary, relay_bin, pinning, processes, table, jwt=""):
        self.opts, self.work, self.bin, self.relay_bin = opts, work, binary, relay_bin
        self.pin, self.procs, self.table = pinning, processes, table
        self.series = stats.Series()
        self.jwt = jwt
        self.tick = os.sysconf("SC_CLK_TCK")

    # --- paths and small things
    def path(self, name):
        return os.path.join(self.work, name)

    @property
    def h2headers(self):
        return ["-H", f"authorization: bearer {self.jwt}", "-H", f"apns-topic: {TOPIC}", "-H", "apns-push-type: alert"]

    def add(self, series, value):
        self.series.add(series, value)

    def pair(self, title, unit, direction, label_a, series_a, label_b, series_b, goal):
        from .table import pair_line
        self.table.add(pair_line(title, unit, direction == "higher", label_a, self.series.get(series_a), label_b,
                                 self.series.get(series_b), goal))

    def one(self, title, unit, direction, series, goal):
        from .table import one_line
        self.table.add(one_line(title, unit, direction == "higher", self.series.get(series), goal))

    def bounded(self, argv, **run):
        return procs.run_bounded(argv, self.opts.step_timeout, **run)

    # --- inputs
    def same_token(self, n, path):
        line = same_token_line() + "\n"
        with open(path, "w") as f:
            for _ in range(n):
                f.write(line)

    def gen_campaign(self, n, out):
        """scripts/gen-campaign.py on the server core."""
        rc = self.bounded(self.pin.server() + ["python3", "scripts/gen-campaign.py", "--records", str(n), "--out", out])
        if rc != 0:
            raise BenchFailure(f"scripts/gen-campaign.py --records {n} exited {rc}")

    def outcomes(self, name, outcome):
        """Lines of NAME.results with that outcome."""
        try:
            with open(self.path(f"{name}.results"), errors="replace") as f:
                return stats.count_lines_with(f.read(), f'"outcome":"{outcome}"')
        except OSError:
            return 0

    # --- servers (on the server core)
    def start_nghttpd(self, log, *extra):
        port = procs.free_port()
        with open(log, "wb") as out:
            proc = self.procs.start(self.pin.server() + ["nghttpd", *extra, "-a", "127.0.0.1", "-d",
                                                         self.path("htdocs"), str(port), self.path("key.pem"),
                                                         self.path("cert.pem")],
                                    stdout=out, stderr=subprocess.STDOUT)
        procs.wait_port(port)
        return Server(proc, port)

    def start_mock(self, name, *extra):
        port_file = self.path(f"{name}.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        ca = self.path(f"{name}.ca.pem")
        with open(self.path(f"{name}.log"), "wb") as err:
            proc = self.procs.start(self.pin.server() + [self.bin, "mock", "--listen", "127.0.0.1:0", "--port-file",
                                                         port_file, "--write-ca", ca, "--key-id", "TEST123456",
                                                         "--team-id", "TEAMID1234", "--public-key", PUB, "--topic",
                                                         TOPIC, *extra], stderr=err)
        if not procs.wait_file(port_file):
            raise BenchFailure(f"the mock did not start: {procs.tail(self.path(name + '.log'), 1000)}")
        with open(port_file) as f:
            return Server(proc, int(f.read().strip()), ca)

    def start_relay(self, name, target_port, one_way_ms, kind="rtt-relay"):
        """A relay adding `one_way_ms` each way in front of `target_port`: the project's `rtt-relay`, or (`kind`
        "python") `delay_relay.py`, built differently, so that a figure is never an artefact of one relay."""
        port_file = self.path(f"{name}.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        program = [self.relay_bin] if kind == "rtt-relay" else [sys.executable, DELAY_RELAY]
        with open(self.path(f"{name}.log"), "wb") as err:
            proc = self.procs.start(self.pin.server() + program + ["--target", str(target_port), "--delay-ms",
                                                                   one_way_ms, "--port-file", port_file], stderr=err)
        if not procs.wait_file(port_file):
            raise BenchFailure(f"the relay did not start: {procs.tail(self.path(name + '.log'), 1000)}")
        with open(port_file) as f:
            return Server(proc, int(f.read().strip()))

    def stop(self, server, sig=signal.SIGTERM):
        self.procs.stop(server.proc, sig)

    # --- timed clients (on the client core)
    def timed(self, name, argv, unpinned=False, **run):
        pin = [] if unpinned else self.pin.client()
        return procs.timed(pin, self.opts.step_timeout, self.path(f"{name}.rusage"), argv, **run)

    def run_send(self, name, n, port, ca, file, *extra, connections=DEFAULT, may_lose=False):
        """One timed send that must deliver all n records (with may_lose, status 3 — records in doubt — is
        accepted). connections: the connection options (`--connections CONNECTIONS` by default; [] for send's)."""
        if connections is DEFAULT:
            connections = ["--connections", self.opts.connections]
        results = self.path(f"{name}.results")
        for f in os.listdir(self.work):
            if f.startswith(f"{name}.results"):
                os.remove(self.path(f))
        with open(self.path(f"{name}.err"), "wb") as err:
            t = self.timed(name, [self.bin, "send", file, "--results", results, "--endpoint",
                                  f"https://127.0.0.1:{port}", "--ca-file", ca, *AUTH, "--topic", TOPIC, *connections,
                                  "--progress", "none", *extra], stderr=err)
        if may_lose and t.rc == 3:
            return t
        if t.rc != 0:
            raise BenchFailure(f"send ({name}) exited {t.rc}: {procs.tail(self.path(name + '.err'), 5)}")
        delivered = self.outcomes(name, "delivered")
        if delivered != n:
            raise BenchFailure(f"send ({name}): {delivered} of {n} records delivered")
        return t

    def run_h2load(self, name, n, port, streams=STREAMS, connections=None, tokens=None):
        """One timed h2load run that must get n 2xx answers: (its Timing, its own req/s as printed). With tokens
        (a file of device tokens, one a line), the requests go to /3/device/<token> for each in turn (-i)."""
        target = [f"https://127.0.0.1:{port}/3/device/{TOKEN}"]
        if tokens:
            uris = self.path(f"{name}.uris")
            with open(tokens) as src, open(uris, "w") as dst:
                for line in src:
                    dst.write(f"https://127.0.0.1:{port}/3/device/{line}")
            target = ["-i", uris]
        out_path = self.path(f"{name}.out")
        with open(out_path, "wb") as out:
            t = self.timed(name, ["h2load", "-n", str(n), "-c", str(connections or self.opts.connections), "-m",
                                  str(streams), "-t", "1", "-d", self.path("payload.json"), *self.h2headers, *target],
                           stdout=out, stderr=subprocess.STDOUT)
        with open(out_path, errors="replace") as f:
            text = f.read()
        if t.rc != 0:
            raise BenchFailure(f"h2load ({name}) exited {t.rc}: {procs.tail(out_path, 5)}")
        if not stats.h2load_all_2xx(text, n):
            raise BenchFailure(f"h2load ({name}): {stats.h2load_summary(text)}")
        return t, stats.h2load_rate(text)
