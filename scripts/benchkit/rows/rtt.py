"""Rows 10 and 11: at a real round-trip time (a relay in front of the mock: the project's rtt-relay, then, as 10p,
delay_relay.py, built differently), and while connections drop."""
import json
import signal

from .. import stats


def prepare(b):
    """The distinct records of rows 10 and 11 and their tokens, one a line (h2load -i)."""
    b.gen_campaign(b.opts.rtt_records, b.path("rtt.ndjson"))
    with open(b.path("rtt.ndjson")) as src, open(b.path("rtt.tokens"), "w") as dst:
        for line in src:
            dst.write(json.loads(line)["token"] + "\n")


def summary(path):
    with open(path) as f:
        return json.load(f)


# The relays every RTT row runs through: the name in the row's label, the kind `start_relay` takes, and how the
# relay is described.
RELAYS = (("", "rtt-relay", "rtt-relay (the project's, Swift, one epoll loop)"),
          ("p", "python", "delay_relay.py (Python asyncio, built differently)"))


def run_rtt(b):
    o = b.opts
    n = o.rtt_records
    rtt_file = b.path("rtt.ndjson")
    mock = b.start_mock("mock10")
    for suffix, kind, described in RELAYS:
        print(f"== 10{suffix}. at a real round-trip time: send (its defaults) vs h2load -c 3 -m 1000 through {described}"
              f" -> the mock, {n} records (h2load: the same device tokens); the relay and the mock on the server core",
              flush=True)
        for rtt in o.rtts:
            name = f"10{suffix}_{rtt}"
            relay = b.start_relay(f"relay{name}", mock.port, f"{rtt / 2:g}", kind=kind)
            for r in range(1, o.rounds + 1):
                t = b.run_send(f"send{name}", n, relay.port, mock.ca, rtt_file, "--summary",
                               b.path(f"send{name}.summary.json"), connections=[])
                b.add(f"send{name}.rate", stats.rate(n, t.wall))
                opened = summary(b.path(f"send{name}.summary.json"))["maximum_in_flight"]
                print(f"round {r}, RTT {rtt} ms: send   {stats.rate(n, t.wall):.0f} req/s ({t.wall:.6f}s, at most"
                      f" {opened} in flight)", flush=True)
                t, h2_rate = b.run_h2load(f"h2load{name}", n, relay.port, 1000, 3, tokens=b.path("rtt.tokens"))
                b.add(f"h2load{name}.rate", stats.rate(n, t.wall))
                print(f"round {r}, RTT {rtt} ms: h2load {stats.rate(n, t.wall):.0f} req/s (its own figure:"
                      f" {h2_rate})", flush=True)
            b.stop(relay, signal.SIGTERM)
            through = f" through {kind}" if suffix else ""
            b.pair(f"10{suffix} RTT {rtt} ms{through}: send (defaults) vs h2load -c 3 -m 1000, rate", "req/s",
                   "higher", "send", f"send{name}.rate", "h2load", f"h2load{name}.rate", ">= 1.0x")
    b.stop(mock, signal.SIGINT)

    every = o.drop_every
    print(f"== 10d. RTT 50 ms, the mock dropping a connection every {every} requests: send (its defaults)", flush=True)
    mock = b.start_mock("mock10d", "--fault", f"drop=every:{every}")
    relay = b.start_relay("relay10d", mock.port, "25")
    for r in range(1, o.rounds + 1):
        t = b.run_send("send10d", n, relay.port, mock.ca, rtt_file, "--summary", b.path("send10d.summary.json"),
                       connections=[], may_lose=True)
        requests = summary(b.path("send10d.summary.json"))["requests"]
        drops = stats.drops_of(requests, every)
        doubt = b.outcomes("send10d", "in_doubt")
        b.add("send10d.doubt", stats.per_connection(doubt, drops))
        b.add("send10d.rate", stats.rate(n, t.wall))
        print(f"round {r}: {stats.rate(n, t.wall):.0f} records/s, {requests} requests, about {drops} connections"
              f" dropped, {doubt} records in doubt ({doubt / drops:.0f} a connection)", flush=True)
    b.stop(relay, signal.SIGTERM)
    b.stop(mock, signal.SIGINT)
    b.one(f"10d RTT 50 ms, a connection dropped every {every} requests: records in doubt per lost connection",
          "records", "lower", "send10d.doubt", "<= 150")
    if 50 in o.rtts:
        b.pair("10e RTT 50 ms: rate with those drops vs without (10 at 50 ms)", "records/s", "higher", "drops",
               "send10d.rate", "no drops", "send10_50.rate", ">= 0.8x")


def run_drops(b):
    o = b.opts
    n = o.rtt_records
    rtt_file = b.path("rtt.ndjson")
    print(f"== 11. while connections drop: send (its defaults) -> the mock with --fault drop=0.001 vs -> a plain mock,"
          f" {n} records, no added latency", flush=True)
    plain = b.start_mock("mock11")
    dropping = b.start_mock("mock11d", "--fault", "drop=0.001")
    for r in range(1, o.rounds + 1):
        t = b.run_send("send11d", n, dropping.port, dropping.ca, rtt_file, connections=[], may_lose=True)
        b.add("send11d.rate", stats.rate(n, t.wall))
        print(f"round {r}: drops    {stats.rate(n, t.wall):.0f} records/s, {b.outcomes('send11d', 'in_doubt')} in"
              f" doubt", flush=True)
        t = b.run_send("send11", n, plain.port, plain.ca, rtt_file, connections=[])
        b.add("send11.rate", stats.rate(n, t.wall))
        print(f"round {r}: no drops {stats.rate(n, t.wall):.0f} records/s", flush=True)
    b.stop(dropping, signal.SIGINT)
    b.stop(plain, signal.SIGINT)
    b.pair("11 send (defaults) while the mock drops a connection on 0.1 % of requests vs none", "records/s", "higher",
           "drops", "send11d.rate", "no drops", "send11.rate", ">= 0.8x")
