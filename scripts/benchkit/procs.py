"""Processes: core pinning (taskset), the servers a run starts (stopped by pid, never by name), timed and bounded
client runs under /usr/bin/time, ports on 127.0.0.1."""
import dataclasses
import os
import signal
import socket
import subprocess
import time

from . import stats


class BenchFailure(Exception):
    """A step failed: the program prints `bench: FAIL: ...`, stops what it started and exits 1."""


@dataclasses.dataclass(frozen=True)
class Pinning:
    """Clients on the first core, servers on the second, when there are two."""
    client_core: int
    server_core: object  # int, or None with one core

    @classmethod
    def from_cores(cls, cores):
        cores = sorted(cores)
        return cls(cores[0], cores[1] if len(cores) > 1 else None)

    @property
    def pinned(self):
        return self.server_core is not None

    def client(self):
        return ["taskset", "-c", str(self.client_core)] if self.pinned else []

    def server(self):
        return ["taskset", "-c", str(self.server_core)] if self.pinned else []

    def describe(self):
        if not self.pinned:
            return "not pinned (one core)"
        return f"clients on core {self.client_core}, servers on core {self.server_core} (taskset)"


def seconds(step_timeout):
    """STEP_TIMEOUT (timeout(1)'s syntax: 900, 15m ...) in seconds, for Python's own bound of a step."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = str(step_timeout).strip()
    try:
        if text and text[-1] in units:
            return float(text[:-1]) * units[text[-1]]
        return float(text)
    except ValueError:
        return 900.0


class Processes:
    """The long-running processes of a run (servers, relays), each stopped by its pid."""

    def __init__(self):
        self._procs = []

    def start(self, argv, **popen):
        proc = subprocess.Popen(argv, **popen)
        self._procs.append(proc)
        return proc

    @staticmethod
    def stop(proc, sig=signal.SIGTERM, wait=30):
        """Sends sig to proc's pid (unless it has ended) and waits for it."""
        if proc.poll() is None:
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass

    def stop_all(self):
        for proc in self._procs:
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in self._procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs = []


@dataclasses.dataclass
class Timing:
    wall: float  # seconds
    cpu: float   # user + sys seconds
    rss: int     # peak RSS, KiB
    rc: int


def timed(pin, step_timeout, rusage_path, argv, **run):
    """argv under `timeout STEP_TIMEOUT /usr/bin/time`, pinned with pin (a taskset prefix, or [])."""
    cmd = list(pin) + ["timeout", str(step_timeout), "/usr/bin/time", "-f", "%U %S %M", "-o", rusage_path] + argv
    t0 = time.monotonic()
    try:
        rc = subprocess.run(cmd, timeout=seconds(step_timeout) + 60, **run).returncode
    except subprocess.TimeoutExpired:
        rc = 124
    wall = stats.wall_seconds(t0, time.monotonic())
    try:
        with open(rusage_path) as f:
            user, system, rss = stats.parse_rusage(f.read())
    except (OSError, ValueError) as e:
        if rc == 0:
            raise BenchFailure(f"no /usr/bin/time figures for {argv[0]}: {e}")
        user = system = 0.0
        rss = 0
    return Timing(wall, stats.cpu_seconds(user, system), rss, rc)


def run_bounded(argv, step_timeout, **run):
    """argv bounded by STEP_TIMEOUT; its status (124 when the bound ended it)."""
    try:
        return subprocess.run(argv, timeout=seconds(step_timeout), **run).returncode
    except subprocess.TimeoutExpired:
        return 124


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds_=20):
    """Until something listens on 127.0.0.1:port; a BenchFailure after seconds_."""
    deadline = time.monotonic() + seconds_
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise BenchFailure(f"nothing listens on 127.0.0.1:{port}")


def wait_file(path, tries=200, pause=0.05):
    """Until path exists and is not empty; whether it did."""
    for _ in range(tries):
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(pause)
    return os.path.exists(path) and os.path.getsize(path) > 0


def parse_stat_ticks(text):
    """user + sys clock ticks from a /proc/PID/stat line (fields 14 and 15; the name in parentheses may hold
    spaces)."""
    rest = text[text.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12])


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        return parse_stat_ticks(f.read())


def tail(path, n):
    try:
        with open(path, errors="replace") as f:
            return "\n".join(f.read().splitlines()[-n:])
    except OSError:
        return ""
