"""Row 2: validate vs a Python json.loads-per-line loop (2b: validate not pinned)."""
from .. import procs, stats
from ..bench import TOPIC
from ..procs import BenchFailure

PYTHON_LOOP = 'import json, sys\nfor line in open(sys.argv[1], "rb"):\n    json.loads(line)'


def run(b):
    o = b.opts
    n = o.validate_records
    distinct = b.path("distinct.ndjson")
    print(f"== 2. validate vs Python json.loads per line: {n} records", flush=True)
    err = b.path("validate2.err")
    for r in range(1, o.rounds + 1):
        with open(err, "wb") as e:
            t = b.timed("validate2", [b.bin, "validate", distinct, "--topic", TOPIC], stderr=e)
        if t.rc != 0:
            raise BenchFailure(f"validate exited {t.rc}: {procs.tail(err, 5)}")
        b.add("validate2.rate", stats.rate(n, t.wall))
        print(f"round {r}: validate {t.wall:.6f}s wall, {stats.rate(n, t.wall):.0f} records/s, peak RSS {t.rss} KiB",
              flush=True)
        if b.pin.pinned:
            # 2b: the same, not pinned: with a second core, validate runs its duplicate filter there.
            with open(err, "wb") as e:
                t = b.timed("validate2b", [b.bin, "validate", distinct, "--topic", TOPIC], unpinned=True,
                            stderr=e)
            if t.rc != 0:
                raise BenchFailure(f"validate exited {t.rc}: {procs.tail(err, 5)}")
            b.add("validate2b.rate", stats.rate(n, t.wall))
            print(f"round {r}: validate {t.wall:.6f}s wall, {stats.rate(n, t.wall):.0f} records/s, not pinned"
                  f" ({t.cpu:.2f}s CPU)", flush=True)
        t = b.timed("python2", ["python3", "-c", PYTHON_LOOP, distinct])
        if t.rc != 0:
            raise BenchFailure(f"the Python loop exited {t.rc}")
        b.add("python2.rate", stats.rate(n, t.wall))
        print(f"round {r}: python   {t.wall:.6f}s wall, {stats.rate(n, t.wall):.0f} records/s", flush=True)
    b.pair(f"2  validate, {n} records", "records/s", "higher", "validate", "validate2.rate", "python json.loads",
           "python2.rate", ">= 6x")
    if b.pin.pinned:
        b.pair(f"2b validate not pinned (the filter on the second core), {n} records", "records/s", "higher",
               "validate", "validate2b.rate", "python json.loads (pinned)", "python2.rate", ">= 6x")
