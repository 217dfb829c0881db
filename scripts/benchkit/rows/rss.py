"""Rows 4 and 5: peak RSS of send --allow-duplicates (flat), and of the duplicate filter (bytes per pair)."""
import os
import signal
import subprocess
import time

from .. import procs, stats
from ..bench import TOPIC
from ..procs import BenchFailure
from ..table import filter_line


def run_send_rss(b):
    o = b.opts
    print(f"== 4. peak RSS of send --allow-duplicates -> nghttpd: {o.rss_small} and {o.rss_large} records",
          flush=True)
    ng = b.start_nghttpd(b.path("nghttpd4.log"))
    rss_file = b.path("rss.ndjson")
    for n in (o.rss_small, o.rss_large):
        b.same_token(n, rss_file)
        t = b.run_send("send4", n, ng.port, b.path("cert.pem"), rss_file, "--allow-duplicates")
        b.add(f"send4.{n}", stats.mib(t.rss))
        print(f"send --allow-duplicates, {n} records: peak RSS {t.rss} KiB ({t.wall:.6f}s,"
              f" {stats.rate(n, t.wall):.0f} req/s)", flush=True)
    os.remove(rss_file)
    b.stop(ng, signal.SIGTERM)
    b.one(f"4a peak RSS, send --allow-duplicates, {o.rss_small} records", "MiB", "lower", f"send4.{o.rss_small}",
          "<= 40 MB")
    b.one(f"4b peak RSS, send --allow-duplicates, {o.rss_large} records", "MiB", "lower", f"send4.{o.rss_large}",
          "<= 40 MB")


def run_filter_rss(b):
    o = b.opts
    print(f"== 5. peak RSS of the duplicate filter (validate, distinct pairs from standard input):"
          f" {o.dup_small} and {o.dup_large}", flush=True)
    peaks = {}
    timeout = ["timeout", str(o.step_timeout)]
    bound = procs.seconds(o.step_timeout) + 60
    for n in (o.dup_small, o.dup_large):
        t0 = time.monotonic()
        rusage, err_path = b.path("dup.rusage"), b.path("dup.err")
        with open(err_path, "wb") as err:
            gen = subprocess.Popen(b.pin.server() + timeout + ["python3", "scripts/gen-campaign.py", "--records",
                                                               str(n)], stdout=subprocess.PIPE)
            val = subprocess.Popen(b.pin.client() + timeout + ["/usr/bin/time", "-f", "%M", "-o", rusage, b.bin,
                                                               "validate", "-", "--topic", TOPIC],
                                   stdin=gen.stdout, stdout=subprocess.DEVNULL, stderr=err)
            gen.stdout.close()
            try:
                rc_val = val.wait(timeout=bound)
                rc_gen = gen.wait(timeout=bound)
            except subprocess.TimeoutExpired:
                for p in (val, gen):
                    p.kill()
                    p.wait()
                rc_val = rc_gen = 124
        if rc_val != 0 or rc_gen != 0:
            raise BenchFailure(f"validate of {n} distinct records from standard input failed: "
                               f"{procs.tail(err_path, 5)}")
        with open(rusage) as f:
            peaks[n] = stats.parse_peak_rss(f.read())
        print(f"validate, {n} distinct pairs: peak RSS {peaks[n]} KiB ({time.monotonic() - t0:.1f}s with the"
              f" generator)", flush=True)
    b.table.add(filter_line(o.dup_small, peaks[o.dup_small], o.dup_large, peaks[o.dup_large], "<= 10 bytes per pair"))
