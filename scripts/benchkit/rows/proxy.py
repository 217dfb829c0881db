"""Row 12: through a real HTTP CONNECT proxy (tinyproxy, Debian's package): `send` with its defaults next to the
`--connections 3` that used to be needed by hand."""
import signal

from .. import procs, stats
from ..bench import Server
from .rtt import summary


def config(port):
    """tinyproxy's configuration: loopback only, every CONNECT port allowed (no ConnectPort line), quiet."""
    return (f"Port {port}\nListen 127.0.0.1\nBind 127.0.0.1\nTimeout 600\nMaxClients 200\nAllow 127.0.0.1\n"
            "LogLevel Critical\n")


def start_tinyproxy(b, name):
    port = procs.free_port()
    conf = b.path(f"{name}.conf")
    with open(conf, "w") as f:
        f.write(config(port))
    with open(b.path(f"{name}.log"), "wb") as err:
        proc = b.procs.start(b.pin.server() + ["tinyproxy", "-d", "-c", conf], stdout=err, stderr=err)
    procs.wait_port(port)
    return Server(proc, port)


def run(b):
    o = b.opts
    n = o.rtt_records
    print(f"== 12. through tinyproxy (an HTTP CONNECT proxy whose writes wait for delayed ACKs) -> the mock: send (its"
          f" defaults) vs send --connections 3, {n} records; tinyproxy and the mock on the server core", flush=True)
    mock = b.start_mock("mock12")
    proxy = start_tinyproxy(b, "tinyproxy12")
    url = f"http://127.0.0.1:{proxy.port}"
    for r in range(1, o.rounds + 1):
        for label, connections in (("defaults", []), ("three", ["--connections", "3"])):
            name = f"send12_{label}"
            t = b.run_send(name, n, mock.port, mock.ca, b.path("rtt.ndjson"), "--proxy", url, "--summary",
                           b.path(f"{name}.summary.json"), connections=connections)
            b.add(f"{name}.rate", stats.rate(n, t.wall))
            s = summary(b.path(f"{name}.summary.json"))
            print(f"round {r}: send {' '.join(connections) or '(defaults)'}: {stats.rate(n, t.wall):.0f} records/s"
                  f" ({s['connections']} connections, at most {s['maximum_in_flight']} in flight)", flush=True)
    b.stop(proxy, signal.SIGTERM)
    b.stop(mock, signal.SIGINT)
    b.pair("12 through tinyproxy: send (defaults) vs send --connections 3, rate", "records/s", "higher", "defaults",
           "send12_defaults.rate", "--connections 3", "send12_three.rate", ">= 1.0x")
