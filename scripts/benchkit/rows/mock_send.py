"""Rows 7 and 8 (kept from the first benchmark): send and send --durable -> the release mock, h2load -m 1000 -> the
mock."""
import signal

from .. import stats


def run(b):
    o = b.opts
    n = o.records
    print(f"== 7/8. send, send --durable and h2load -m 1000 -> the release mock: {n} distinct records", flush=True)
    campaign = b.path("mock-campaign.ndjson")
    b.gen_campaign(n, campaign)
    mock = b.start_mock("mock7")
    for r in range(1, o.rounds + 1):
        t = b.run_send("send7", n, mock.port, mock.ca, campaign)
        b.add("send7.rate", stats.rate(n, t.wall))
        print(f"round {r}: send          {stats.rate(n, t.wall):.0f} records/s, peak RSS {t.rss} KiB", flush=True)
        if o.row(7):
            t, _ = b.run_h2load("h2load7", n, mock.port, 1000)
            b.add("h2load7.rate", stats.rate(n, t.wall))
            print(f"round {r}: h2load        {stats.rate(n, t.wall):.0f} req/s", flush=True)
        if o.row(8):
            t = b.run_send("durable8", n, mock.port, mock.ca, campaign, "--durable")
            b.add("durable8.rate", stats.rate(n, t.wall))
            print(f"round {r}: send --durable {stats.rate(n, t.wall):.0f} records/s", flush=True)
    b.stop(mock, signal.SIGINT)
    if o.row(7):
        b.pair("7  send -> mock vs h2load -m 1000 -> mock", "req/s", "higher", "send", "send7.rate", "h2load",
               "h2load7.rate", "none")
    if o.row(8):
        b.pair("8  send --durable vs send, -> mock", "records/s", "higher", "durable", "durable8.rate", "send",
               "send7.rate", "none")
