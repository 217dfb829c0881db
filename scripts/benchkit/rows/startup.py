"""Row 6: time from process start to the first request on the wire (nghttpd -v frame stamps)."""
import os
import signal
import subprocess
import sys

from .. import procs
from ..bench import AUTH, TOKEN, TOPIC
from ..procs import BenchFailure

SCRIPTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_values(path):
    with open(path) as f:
        return [float(x) for x in f.read().split()]


def run(b):
    o = b.opts
    print(f"== 6. start to first request -> nghttpd -v: {o.starts} starts of send (1 record),"
          f" each next to one of h2load -n 1", flush=True)
    print("   (h2load is the floor: process start, TCP and TLS, without JWT signing or reading a campaign)", flush=True)
    log = b.path("nghttpd6.log")
    ng = b.start_nghttpd(log, "-v")
    one = b.path("one.ndjson")
    b.same_token(1, one)
    env = dict(os.environ, PYTHONPATH=SCRIPTS + (os.pathsep + os.environ["PYTHONPATH"]
                                                 if os.environ.get("PYTHONPATH") else ""))

    def startup(series, cmd):
        print(f"{series}: ", end="", flush=True)
        first, settings = b.path(f"v.{series}.first"), b.path(f"v.{series}.settings")
        for p in (first, settings):
            if os.path.exists(p):
                os.remove(p)
        rc = b.bounded(b.pin.client() + ["timeout", str(o.step_timeout), sys.executable, "-m",
                                         "benchkit.rows.startup_probe", str(ng.port), log, "1", first, settings, *cmd],
                       env=env)
        if rc != 0:
            raise BenchFailure(f"the start-up measurement ({series}) failed")
        for v in read_values(first):
            b.add(f"{series}.first", v)
        for v in read_values(settings):
            b.add(f"{series}.settings", v)

    # The binary scripts/install.sh installs links the Swift runtime and Foundation statically: no dynamic loading
    # of them at start. Measured next to the release build (APNS_BULK_STATIC_BIN=path gives one built elsewhere).
    static_bin = None
    if os.environ.get("APNS_BULK_STATIC_BIN"):
        static_bin = os.path.realpath(os.environ["APNS_BULK_STATIC_BIN"])
    elif not os.environ.get("APNS_BULK_BIN"):
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", ".build-static",
                        "--product", "apns-bulk"], stdout=sys.stderr, check=True)
        static_bin = os.path.join(os.getcwd(), ".build-static/release/apns-bulk")
    send_args = ["send", one, "--results", b.path("one.results"), "--endpoint", f"https://127.0.0.1:{ng.port}",
                 "--ca-file", b.path("cert.pem"), *AUTH, "--topic", TOPIC, "--connections", o.connections,
                 "--progress", "none", "--allow-duplicates", "--overwrite"]
    for _ in range(o.starts):
        startup("send", [b.bin, *send_args])
        if static_bin:
            startup("static", [static_bin, *send_args])
        startup("h2load", ["h2load", "-n", "1", "-c", "1", "-m", "1", "-t", "1", "-d", b.path("payload.json"),
                           *b.h2headers, f"https://127.0.0.1:{ng.port}/3/device/{TOKEN}"])
    b.stop(ng, signal.SIGTERM)
    b.pair("6a start to the client's first SETTINGS (JWT, TCP, TLS)", "ms", "lower", "send", "send.settings",
           "h2load", "h2load.settings", "none")
    b.pair("6b start to the first request HEADERS on the wire", "ms", "lower", "send", "send.first", "h2load",
           "h2load.first", "send < 100 ms")
    if static_bin:
        b.pair("6c the same, the installed binary (scripts/install.sh: static Swift runtime)", "ms", "lower",
               "send-static", "static.first", "h2load", "h2load.first", "send < 100 ms")
