"""Row 3: the mock vs nghttpd, both driven by h2load (rate, server CPU per request)."""
import signal

from .. import procs, stats
from ..options import STREAMS


def run(b):
    o = b.opts
    n = o.records
    print(f"== 3. h2load -c {o.connections} -m {STREAMS} -> mock vs -> nghttpd: {n} requests", flush=True)
    ng = b.start_nghttpd(b.path("nghttpd3.log"))
    mock = b.start_mock("mock3")
    for r in range(1, o.rounds + 1):
        before = procs.cpu_ticks(mock.pid)
        _, h2_rate = b.run_h2load("h2mock3", n, mock.port, STREAMS)
        b.add("mock3.rate", h2_rate)
        b.add("mock3.cpu", stats.server_us(before, procs.cpu_ticks(mock.pid), b.tick, n))
        print(f"round {r}: mock    {h2_rate} req/s", flush=True)
        before = procs.cpu_ticks(ng.pid)
        _, h2_rate = b.run_h2load("h2ng3", n, ng.port, STREAMS)
        b.add("nghttpd3.rate", h2_rate)
        b.add("nghttpd3.cpu", stats.server_us(before, procs.cpu_ticks(ng.pid), b.tick, n))
        print(f"round {r}: nghttpd {h2_rate} req/s", flush=True)
    b.stop(ng, signal.SIGTERM)
    b.stop(mock, signal.SIGTERM)
    b.pair("3a mock vs nghttpd under h2load, rate", "req/s", "higher", "mock", "mock3.rate", "nghttpd",
           "nghttpd3.rate", ">= 0.8x")
    b.pair("3b mock vs nghttpd under h2load, server CPU per request", "us", "lower", "mock", "mock3.cpu", "nghttpd",
           "nghttpd3.cpu", "none")
