"""Row 1: send -> nghttpd vs h2load -> nghttpd (CPU per request, wall-clock rate)."""
import signal

from .. import stats
from ..options import STREAMS


def run(b):
    o = b.opts
    n = o.records
    print(f"== 1. send -> nghttpd vs h2load -> nghttpd: {n} requests, one token, {o.connections} connections,"
          f" h2load -m {STREAMS}", flush=True)
    b.same_token(n, b.path("same.ndjson"))
    ng = b.start_nghttpd(b.path("nghttpd1.log"))
    for r in range(1, o.rounds + 1):
        t = b.run_send("send1", n, ng.port, b.path("cert.pem"), b.path("same.ndjson"), "--allow-duplicates")
        b.add("send1.cpu", stats.per_request_us(t.cpu, n))
        b.add("send1.rate", stats.rate(n, t.wall))
        print(f"round {r}: send   {t.wall:.6f}s wall, {t.cpu:.2f}s CPU, {stats.rate(n, t.wall):.0f} req/s", flush=True)
        t, h2_rate = b.run_h2load("h2load1", n, ng.port, STREAMS)
        b.add("h2load1.cpu", stats.per_request_us(t.cpu, n))
        b.add("h2load1.rate", stats.rate(n, t.wall))
        print(f"round {r}: h2load {t.wall:.6f}s wall, {t.cpu:.2f}s CPU, {stats.rate(n, t.wall):.0f} req/s"
              f" (its own figure: {h2_rate})", flush=True)
    b.stop(ng, signal.SIGTERM)
    b.pair("1a send -> nghttpd, CPU per request", "us", "lower", "send", "send1.cpu", "h2load", "h2load1.cpu",
           "<= 1.5x")
    b.pair("1b send -> nghttpd, wall-clock rate", "req/s", "higher", "send", "send1.rate", "h2load", "h2load1.rate",
           ">= 0.7x")
