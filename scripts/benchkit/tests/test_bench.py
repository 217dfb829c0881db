import json
import os
import stat
import sys
import tempfile
import unittest

from benchkit import bench, options, procs, table
from benchkit.procs import BenchFailure

# A stand-in for apns-bulk's `send`: writes FAKE_DELIVERED delivered lines (and FAKE_DOUBT in doubt) to --results,
# exits FAKE_STATUS.
FAKE_SEND = f"""#!{sys.executable}
import os, sys
args = sys.argv[1:]
with open(args[args.index("--results") + 1], "w") as f:
    for _ in range(int(os.environ.get("FAKE_DELIVERED", "0"))):
        f.write('{{"token":"ab","outcome":"delivered"}}\\n')
    for _ in range(int(os.environ.get("FAKE_DOUBT", "0"))):
        f.write('{{"token":"cd","outcome":"in_doubt"}}\\n')
with open(os.environ["FAKE_ARGS"], "w") as f:
    f.write("\\n".join(args))
sys.stderr.write("fake send stderr\\n")
sys.exit(int(os.environ.get("FAKE_STATUS", "0")))
"""


@unittest.skipUnless(os.access("/usr/bin/time", os.X_OK), "no /usr/bin/time")
class RunSend(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.work = self.dir.name
        fake = os.path.join(self.work, "fake-apns-bulk")
        with open(fake, "w") as f:
            f.write(FAKE_SEND)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
        self.args = os.path.join(self.work, "args")
        os.environ["FAKE_ARGS"] = self.args
        opts = options.parse(["--quick"], {"CONNECTIONS": "3", "STEP_TIMEOUT": "60"})
        self.sink = open(os.devnull, "w")
        self.b = bench.Bench(opts, self.work, fake, None, procs.Pinning.from_cores([0]), procs.Processes(),
                             table.Table(self.sink))

    def tearDown(self):
        for var in ("FAKE_ARGS", "FAKE_DELIVERED", "FAKE_DOUBT", "FAKE_STATUS"):
            os.environ.pop(var, None)
        self.sink.close()
        self.dir.cleanup()

    def sent_args(self):
        with open(self.args) as f:
            return f.read().split("\n")

    def test_all_delivered(self):
        os.environ["FAKE_DELIVERED"] = "5"
        t = self.b.run_send("s", 5, 4433, "ca.pem", "in.ndjson", "--allow-duplicates")
        self.assertEqual(t.rc, 0)
        args = self.sent_args()
        self.assertEqual(args[args.index("--endpoint") + 1], "https://127.0.0.1:4433")
        self.assertEqual(args[args.index("--connections") + 1], "3")
        self.assertEqual(args[-1], "--allow-duplicates")

    def test_send_defaults_have_no_connections_option(self):
        os.environ["FAKE_DELIVERED"] = "1"
        self.b.run_send("s", 1, 4433, "ca.pem", "in.ndjson", connections=[])
        self.assertNotIn("--connections", self.sent_args())

    def test_fewer_delivered_fails(self):
        os.environ["FAKE_DELIVERED"] = "4"
        with self.assertRaisesRegex(BenchFailure, r"send \(s\): 4 of 5 records delivered"):
            self.b.run_send("s", 5, 4433, "ca.pem", "in.ndjson")

    def test_status_fails_with_its_stderr(self):
        os.environ["FAKE_STATUS"] = "2"
        with self.assertRaisesRegex(BenchFailure, r"send \(s\) exited 2: fake send stderr"):
            self.b.run_send("s", 5, 4433, "ca.pem", "in.ndjson")

    def test_records_in_doubt_allowed_only_when_it_may_lose(self):
        os.environ.update(FAKE_STATUS="3", FAKE_DELIVERED="3", FAKE_DOUBT="2")
        self.assertEqual(self.b.run_send("s", 5, 4433, "ca.pem", "in.ndjson", may_lose=True).rc, 3)
        self.assertEqual(self.b.outcomes("s", "in_doubt"), 2)
        with self.assertRaises(BenchFailure):
            self.b.run_send("s", 5, 4433, "ca.pem", "in.ndjson")


class Inputs(unittest.TestCase):
    def test_same_token_records_carry_the_h2load_payload(self):
        with tempfile.TemporaryDirectory() as d:
            b = bench.Bench(options.parse([], {}), d, "apns-bulk", None, procs.Pinning.from_cores([0]),
                            procs.Processes(), table.Table())
            path = os.path.join(d, "same.ndjson")
            b.same_token(3, path)
            with open(path) as f:
                lines = f.read().splitlines()
        self.assertEqual(len(lines), 3)
        record = json.loads(lines[0])
        self.assertEqual(record["token"], bench.TOKEN)
        self.assertEqual(len(record["token"]), 64)
        self.assertEqual(json.dumps(record["payload"], separators=(",", ":")), bench.PAYLOAD)
