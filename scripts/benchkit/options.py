"""Options: the defaults, the environment, the command line (--quick applies where it stands) and their checks."""
import dataclasses
import re

USAGE = """\
Benchmarks of ISSUE-12, printed as figures (never asserted in unit tests). One run measures every row:
  1. `send` -> nghttpd next to h2load -> the same nghttpd (TLS, h2, same path, headers and payload, records sharing
     one token with --allow-duplicates, 2 connections): CPU per request (user+sys / requests) and wall-clock rate.
  2. `validate` on VALIDATE_RECORDS distinct records next to a Python `json.loads`-per-line loop on the same file;
     2b: `validate` again, not pinned (with two cores it runs its duplicate filter on the second).
  3. `apns-bulk mock` next to nghttpd, both driven by `h2load -c 2 -m 100`: requests/s (and the server's CPU).
  4. Peak RSS of `send --allow-duplicates` at RSS_SMALL and RSS_LARGE records (must stay flat).
  5. Peak RSS of the duplicate filter: `validate` at DUP_SMALL and DUP_LARGE distinct (token, topic) pairs; bytes
     per distinct pair above the flat base (the slope between the two sizes).
  6. Time from process start to the first request on the wire (JWT, TCP, TLS, SETTINGS included), read from
     `nghttpd -v` frame timestamps calibrated against this machine's monotonic clock by a probe connection.
  7. (kept from the first benchmark) `send` -> the release mock next to `h2load -m 1000` -> the same mock.
  8. (kept from the first benchmark) `send --durable` next to a plain `send`, both -> the release mock.
 10. At a real round-trip time (issue 29): the project's rtt-relay (Tests/Bench/RTTRelay, built here in release) in
     front of the mock adds RTT/2 each way on loopback
     (handshakes and HTTP/2 flow control pay it); `send` with its defaults next to `h2load -c 3 -m 1000` (its best),
     RTT_RECORDS distinct records at each RTT of RTTS ms, h2load sending the same requests (`-i`: each record's
     `/3/device/<token>` once; one token repeated costs the server less: HPACK and the mock's token work); 10p the
     same through a second relay built differently (scripts/benchkit/delay_relay.py: Python asyncio, its transports'
     buffering and flow control), so that no figure is an artefact of one relay; then 10d: the mock dropping a connection every DROP_EVERY
     requests at RTT 50 ms: the records put in doubt per lost connection, and the rate against 10b's.
 11. Rate while connections drop, no added latency: `send` (defaults) to the mock with `--fault drop=0.001` next to
     the same to a plain mock (RTT_RECORDS records each).
 12. Through a real HTTP CONNECT proxy, tinyproxy (Debian's package; its writes wait for delayed ACKs, so latency
     grows with what a connection carries): `send` with its defaults next to `send --connections 3`, the setting
     that used to be needed by hand, both -> the mock, RTT_RECORDS records; tinyproxy on the server core.
  9. Instructions executed (valgrind's callgrind), the steady stand-in for rows 1a, 2 and 3 on a noisy host: per
     request of `send` and of h2load (row 1's set-up), per request of the mock and of nghttpd under h2load (row 3's),
     per record of `validate` and of the Python loop (row 2's; pinned, so the filter runs on the reading thread).
     Each side runs at INSTR_RECORDS and at twice as many; the difference divided by INSTR_RECORDS leaves the
     process start and the set-up out.
Each process gets its own core with taskset when two or more are available (clients on the first, servers on the
second); the two sides of a row run interleaved (A, B, A, B ...) for ROUNDS rounds and each row prints both sides,
best and the spread of the rounds (min, median, max), their ratio at best and at median, and each round's own ratio
(A over the B run after it): the worst, and for a goal on the ratio the rounds it missed. Only 127.0.0.1 is
targeted; every step is bounded by STEP_TIMEOUT seconds; the script exits non-zero when a step fails. Inputs are
generated into a temporary directory that is removed. The program is scripts/benchkit (python3 -m unittest discover -s scripts/benchkit/tests
-t scripts runs its unit tests).

Usage: scripts/bench.sh [--quick] [--rounds N] [--rows 1,2,...] [--records N] [--validate-records N]
                        [--rss-small N] [--rss-large N] [--dup-small N] [--dup-large N] [--starts N]
                        [--instr-records N] [--rtt-records N] [--rtts "20 50 100"] [records] [large records]
The same settings come from the environment: ROUNDS ROWS RECORDS VALIDATE_RECORDS RSS_SMALL RSS_LARGE DUP_SMALL
DUP_LARGE STARTS INSTR_RECORDS RTT_RECORDS RTTS DROP_EVERY CONNECTIONS STEP_TIMEOUT; APNS_BULK_BIN=path skips the release build and measures that binary;
row 6 also measures the static binary scripts/install.sh builds (APNS_BULK_STATIC_BIN=path gives one).
--quick (small sizes, one round: a smoke check) applies where it stands, so options after it override it. The two
positional numbers are the old usage (RECORDS and RSS_LARGE).
"""

# setting -> (environment variable, default)
DEFAULTS = {
    "records": ("RECORDS", "200000"),
    "validate_records": ("VALIDATE_RECORDS", "1000000"),
    "rss_small": ("RSS_SMALL", "100000"),
    "rss_large": ("RSS_LARGE", "1000000"),
    "dup_small": ("DUP_SMALL", "1000000"),
    "dup_large": ("DUP_LARGE", "10000000"),
    "starts": ("STARTS", "7"),
    "instr_records": ("INSTR_RECORDS", "20000"),
    "rtt_records": ("RTT_RECORDS", "60000"),
    "rtts": ("RTTS", "20 50 100"),
    "drop_every": ("DROP_EVERY", "2000"),
    "rounds": ("ROUNDS", "3"),
    "rows": ("ROWS", "1,2,3,4,5,6,7,8,9,10,11,12"),
    "connections": ("CONNECTIONS", "2"),
    "step_timeout": ("STEP_TIMEOUT", "900"),
}
QUICK = {
    "records": "5000", "validate_records": "50000", "rss_small": "5000", "rss_large": "50000",
    "dup_small": "20000", "dup_large": "200000", "starts": "3", "instr_records": "2000",
    "rtt_records": "10000", "rtts": "50", "rounds": "1",
}
FLAGS = {
    "--rounds": "rounds", "--rows": "rows", "--records": "records", "--validate-records": "validate_records",
    "--rss-small": "rss_small", "--rss-large": "rss_large", "--dup-small": "dup_small", "--dup-large": "dup_large",
    "--starts": "starts", "--instr-records": "instr_records", "--rtt-records": "rtt_records", "--rtts": "rtts",
}
# Checked in this order, as positive integers (then every word of RTTS).
POSITIVE = ("records", "validate_records", "rss_small", "rss_large", "dup_small", "dup_large", "starts", "rounds",
            "instr_records", "rtt_records", "drop_every")
STREAMS = 100  # nghttpd's default SETTINGS_MAX_CONCURRENT_STREAMS; h2load -m for rows 1 and 3


class UsageError(Exception):
    """A bad command line or setting: the program prints it (and the usage when show_usage) and exits 64."""

    def __init__(self, message, show_usage=False):
        super().__init__(message)
        self.show_usage = show_usage


class HelpRequested(Exception):
    """-h or --help: the usage goes to standard output, exit 0."""


@dataclasses.dataclass(frozen=True)
class Options:
    records: int
    validate_records: int
    rss_small: int
    rss_large: int
    dup_small: int
    dup_large: int
    starts: int
    instr_records: int
    rtt_records: int
    rtts: tuple
    drop_every: int
    rounds: int
    rows: str
    connections: str
    step_timeout: str

    def row(self, n):
        """Whether row n is selected (ROWS is a comma-separated list)."""
        return f",{n}," in f",{self.rows},"


def parse(argv, environ):
    """The options of argv (without the program name) over environ over the defaults."""
    raw = {key: environ.get(var) or default for key, (var, default) in DEFAULTS.items()}
    positional = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--quick":
            raw.update(QUICK)
        elif arg in FLAGS:
            if i + 1 >= len(argv):
                raise UsageError(f"{arg} needs a value", show_usage=True)
            raw[FLAGS[arg]] = argv[i + 1]
            i += 1
        elif arg in ("-h", "--help"):
            raise HelpRequested()
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg}", show_usage=True)
        else:
            positional.append(arg)
        i += 1
    if len(positional) >= 1:
        raw["records"] = positional[0]
    if len(positional) >= 2:
        raw["rss_large"] = positional[1]
    rtts = raw["rtts"].split()
    for value in [raw[key] for key in POSITIVE] + rtts:
        if not re.fullmatch(r"[1-9][0-9]*", value):
            raise UsageError(f"sizes, starts and rounds are positive integers: '{value}'")
    values = {key: int(raw[key]) for key in POSITIVE}
    if values["dup_large"] <= values["dup_small"]:
        raise UsageError("--dup-large must exceed --dup-small")
    return Options(rtts=tuple(int(r) for r in rtts), rows=raw["rows"], connections=raw["connections"],
                   step_timeout=raw["step_timeout"], **values)
