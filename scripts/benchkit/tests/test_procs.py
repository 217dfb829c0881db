import os
import subprocess
import sys
import tempfile
import unittest

from benchkit import procs
from benchkit.rows import startup_probe


class Pinning(unittest.TestCase):
    def test_two_cores(self):
        p = procs.Pinning.from_cores({3, 1, 2})
        self.assertEqual((p.client(), p.server()), (["taskset", "-c", "1"], ["taskset", "-c", "2"]))
        self.assertEqual(p.describe(), "clients on core 1, servers on core 2 (taskset)")

    def test_one_core_is_not_pinned(self):
        p = procs.Pinning.from_cores([0])
        self.assertEqual((p.client(), p.server(), p.pinned), ([], [], False))
        self.assertEqual(p.describe(), "not pinned (one core)")


class Bounds(unittest.TestCase):
    def test_step_timeout_in_seconds(self):
        self.assertEqual(procs.seconds("900"), 900)
        self.assertEqual(procs.seconds("15m"), 900)
        self.assertEqual(procs.seconds("2h"), 7200)
        self.assertEqual(procs.seconds("1.5s"), 1.5)

    def test_stat_ticks(self):
        fields = ["S"] + [str(i) for i in range(4, 53)]  # field 3 is the state; fields 14 and 15 hold 14 and 15
        self.assertEqual(procs.parse_stat_ticks("1234 (apns bulk) " + " ".join(fields)), 29)

    def test_own_stat_ticks(self):
        self.assertGreaterEqual(procs.cpu_ticks(os.getpid()), 0)


class Processes(unittest.TestCase):
    def test_stop_by_pid_and_stop_all(self):
        p = procs.Processes()
        a = p.start([sys.executable, "-c", "import time; time.sleep(60)"])
        b = p.start([sys.executable, "-c", "import time; time.sleep(60)"])
        p.stop(a)
        self.assertIsNotNone(a.returncode)
        self.assertIsNone(b.poll())
        p.stop_all()
        self.assertIsNotNone(b.returncode)


class Timed(unittest.TestCase):
    @unittest.skipUnless(os.access("/usr/bin/time", os.X_OK), "no /usr/bin/time")
    def test_status_and_figures(self):
        with tempfile.TemporaryDirectory() as d:
            t = procs.timed([], "60", os.path.join(d, "r"), [sys.executable, "-c", "import sys; sys.exit(3)"],
                            stdout=subprocess.DEVNULL)
            self.assertEqual(t.rc, 3)
            self.assertGreater(t.rss, 0)
            self.assertGreater(t.wall, 0)

    @unittest.skipUnless(os.access("/usr/bin/time", os.X_OK), "no /usr/bin/time")
    def test_bounded_by_step_timeout(self):
        with tempfile.TemporaryDirectory() as d:
            t = procs.timed([], "1", os.path.join(d, "r"), [sys.executable, "-c", "import time; time.sleep(30)"])
            self.assertEqual(t.rc, 124)
            self.assertLess(t.wall, 20)


LOG = """\
[id=1] [  0.000] send SETTINGS frame <length=12, flags=0x00, stream_id=0>
[id=1] [  0.002] recv SETTINGS frame <length=0, flags=0x01, stream_id=0>
[id=2] [ 12.345] recv SETTINGS frame <length=18, flags=0x00, stream_id=0>
[id=2] [ 12.351] recv (stream_id=1) :method: POST
[id=2] [ 12.352] recv HEADERS frame <length=200, flags=0x24, stream_id=1>
"""


class StartupFrames(unittest.TestCase):
    def test_client_settings_not_the_ack(self):
        self.assertEqual(startup_probe.first(LOG.splitlines(), startup_probe.is_client_settings), (2, 12.345))

    def test_first_request_header(self):
        self.assertEqual(startup_probe.first(LOG.splitlines(), startup_probe.is_request_headers), (2, 12.351))

    def test_no_such_frame(self):
        with self.assertRaises(SystemExit):
            startup_probe.first(LOG.splitlines()[:2], startup_probe.is_request_headers)
