"""Row 9: instructions executed (valgrind's callgrind), rows 1a, 2 and 3 counted instead of timed."""
import os
import signal
import subprocess
import sys

from .. import procs, stats
from ..bench import AUTH, PUB, TOKEN, TOPIC
from ..options import STREAMS
from ..procs import BenchFailure
from ..table import count_line
from .validate import PYTHON_LOOP


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def add_count(b, name):
    """The count callgrind wrote to NAME.cg, added to series NAME."""
    count = stats.callgrind_summary(read(b.path(f"{name}.cg")))
    if count is None:
        raise BenchFailure(f"callgrind ({name}) wrote no count: {procs.tail(b.path(name + '.vg'), 3)}")
    b.add(name, count)


def counted(b, name, cmd):
    """cmd under callgrind on the client core; its instruction count added to series NAME."""
    with open(b.path(f"{name}.out"), "wb") as out, open(b.path(f"{name}.vg"), "wb") as err:
        rc = b.bounded(b.pin.client() + ["timeout", str(b.opts.step_timeout), "valgrind", "--tool=callgrind",
                                         f"--callgrind-out-file={b.path(name + '.cg')}", *cmd], stdout=out, stderr=err)
    if rc != 0:
        raise BenchFailure(f"{name} under callgrind exited {rc}: {procs.tail(b.path(name + '.vg'), 3)}")
    add_count(b, name)


def counted_server(b, name, port, cmd):
    """A server under callgrind on the server core, listening on port (`file`: the port the mock writes to
    mock9.port once it listens); h2load sends it N or 2N requests (the series' next size), then SIGTERM ends it and
    callgrind writes its count."""
    n = 2 * b.opts.instr_records if b.series.has(name) else b.opts.instr_records
    with open(b.path(f"{name}.out"), "wb") as out, open(b.path(f"{name}.vg"), "wb") as err:
        proc = b.procs.start(b.pin.server() + ["valgrind", "--tool=callgrind",
                                               f"--callgrind-out-file={b.path(name + '.cg')}", *cmd],
                             stdout=out, stderr=err)
    if port == "file":
        port_file = b.path("mock9.port")
        procs.wait_file(port_file, tries=600)
        try:
            with open(port_file) as f:
                port = int(f.read().strip() or 0)
        except OSError:
            port = 0
    procs.wait_port(port)
    with open(b.path(f"{name}.h2load"), "wb") as out:
        b.bounded(b.pin.client() + ["h2load", "-n", str(n), "-c", str(b.opts.connections), "-m", str(STREAMS), "-t",
                                    "1", "-d", b.path("payload.json"), *b.h2headers,
                                    f"https://127.0.0.1:{port}/3/device/{TOKEN}"], stdout=out,
                  stderr=subprocess.STDOUT)
    if not stats.h2load_all_2xx(read(b.path(f"{name}.h2load")), n):
        raise BenchFailure(f"h2load -> {name} under callgrind: not {n} 2xx")
    b.procs.stop(proc, signal.SIGTERM, wait=procs.seconds(b.opts.step_timeout))
    add_count(b, name)


def count_row(b, title, unit, la, sa, lb, sb, goal, orientation):
    b.table.add(count_line(title, unit, la, b.series.get(sa), lb, b.series.get(sb), b.opts.instr_records, goal,
                           orientation))


def run(b):
    o = b.opts
    n9 = o.instr_records
    sizes = (n9, 2 * n9)
    print(f"== 9. instructions (valgrind --tool=callgrind), {n9} and {2 * n9} requests or records a side", flush=True)
    # valgrind 3.19 cannot read the DWARF 5 debug information Swift 6 writes: it runs a copy without it (the
    # symbols stay, for callgrind_annotate on the kept .cg files).
    counted_bin = b.path("apns-bulk.nodebug")
    python = sys.executable  # the interpreter itself, not a shim that runs it
    if b.bounded(["strip", "--strip-debug", "-o", counted_bin, b.bin]) != 0:
        raise BenchFailure(f"strip --strip-debug {b.bin} failed")
    for n in sizes:
        b.same_token(n, b.path(f"same9-{n}.ndjson"))
        rc = b.bounded(["python3", "scripts/gen-campaign.py", "--records", str(n), "--out",
                        b.path(f"distinct9-{n}.ndjson")])
        if rc != 0:
            raise BenchFailure(f"scripts/gen-campaign.py --records {n} exited {rc}")

    # 9a: send and h2load -> nghttpd (row 1's set-up; nghttpd runs natively on the server core)
    ng = b.start_nghttpd(b.path("nghttpd9.log"))
    for n in sizes:
        results = b.path(f"send9-{n}.results")
        counted(b, "send9", [counted_bin, "send", b.path(f"same9-{n}.ndjson"), "--results", results, "--endpoint",
                             f"https://127.0.0.1:{ng.port}", "--ca-file", b.path("cert.pem"), *AUTH, "--topic", TOPIC,
                             "--connections", o.connections, "--progress", "none", "--allow-duplicates",
                             "--overwrite"])
        if stats.count_lines_with(read(results), '"outcome":"delivered"') != n:
            raise BenchFailure(f"send under callgrind did not deliver all {n} records")
        counted(b, "h2load9", ["h2load", "-n", str(n), "-c", o.connections, "-m", str(STREAMS), "-t", "1", "-d",
                               b.path("payload.json"), *b.h2headers, f"https://127.0.0.1:{ng.port}/3/device/{TOKEN}"])
        if not stats.h2load_all_2xx(read(b.path("h2load9.out")), n):
            raise BenchFailure(f"h2load under callgrind: not {n} 2xx")
    b.stop(ng, signal.SIGTERM)
    count_row(b, "9a send -> nghttpd, instructions per request", "instructions", "send", "send9", "h2load", "h2load9",
              "none; 1a's <= 1.5x, read in instructions", "cost")

    # 9b: the mock and nghttpd under callgrind, each driven by h2load (row 3's set-up)
    for _ in sizes:
        if os.path.exists(b.path("mock9.port")):
            os.remove(b.path("mock9.port"))
        counted_server(b, "mock9", "file", [counted_bin, "mock", "--listen", "127.0.0.1:0", "--port-file",
                                            b.path("mock9.port"), "--write-ca", b.path("mock9.ca.pem"), "--key-id",
                                            "TEST123456", "--team-id", "TEAMID1234", "--public-key", PUB, "--topic",
                                            TOPIC])
        port = procs.free_port()
        counted_server(b, "nghttpd9", port, ["nghttpd", "-a", "127.0.0.1", "-d", b.path("htdocs"), str(port),
                                             b.path("key.pem"), b.path("cert.pem")])
    count_row(b, "9b mock vs nghttpd under h2load, server instructions per request", "instructions", "mock", "mock9",
              "nghttpd", "nghttpd9", "none; a stand-in for 3a", "rate")

    # 9c: validate and the Python loop, per distinct record (row 2's set-up)
    for n in sizes:
        counted(b, "validate9", [counted_bin, "validate", b.path(f"distinct9-{n}.ndjson"), "--topic", TOPIC])
        counted(b, "python9", [python, "-c", PYTHON_LOOP, b.path(f"distinct9-{n}.ndjson")])
    count_row(b, "9c validate vs python json.loads, instructions per record", "instructions", "validate", "validate9",
              "python", "python9", "none; row 2 in time runs above it: Python runs fewer instructions a cycle", "rate")
