import unittest

from benchkit import stats

CALLGRIND_SAMPLE = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  /tmp/tmp.x/apns-bulk.nodebug validate /tmp/tmp.x/distinct9-2000.ndjson --topic com.example.app
part: 1

desc: I1 cache:
desc: Timerange: Basic block 0 - 123456
events: Ir
summary: 61234567
totals: 61234567

fl= (1) ???
fn= (1) 0x0000000000001100
0 3
"""

H2LOAD_SAMPLE = """\
starting benchmark...
spawning thread #0: 2 total client(s). 5000 total requests
TLS Protocol: TLSv1.3
Application protocol: h2

finished in 123.45ms, 40,502.23 req/s, 9.12MB/s
requests: 5000 total, 5000 started, 5000 done, 5000 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 5000 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 1.10MB (1153456) total, 12.34KB (12636) headers (space savings 95.12%), 0B (0) data
"""


class Spread(unittest.TestCase):
    def test_min_median_max(self):
        self.assertEqual(stats.spread([3.0, 1.0, 2.0]), (1.0, 2.0, 3.0))

    def test_even_count_median_is_the_mean_of_the_middle_two(self):
        self.assertEqual(stats.spread([4.0, 1.0, 3.0, 2.0]), (1.0, 2.5, 4.0))

    def test_one_value(self):
        self.assertEqual(stats.spread([7.5]), (7.5, 7.5, 7.5))

    def test_empty(self):
        with self.assertRaises(ValueError):
            stats.spread([])

    def test_best_is_highest_for_a_rate_and_lowest_for_a_cost(self):
        self.assertEqual(stats.best([1.0, 5.0, 3.0], higher=True), 5.0)
        self.assertEqual(stats.best([1.0, 5.0, 3.0], higher=False), 1.0)


class Figures(unittest.TestCase):
    def test_fmt(self):
        self.assertEqual(stats.fmt(412574.0), "412,574")
        self.assertEqual(stats.fmt(1000.0), "1,000")
        self.assertEqual(stats.fmt(36.44), "36.4")
        self.assertEqual(stats.fmt(2.304), "2.30")
        self.assertEqual(stats.fmt(-15.0), "-15.0")

    def test_rate_to_the_unit(self):
        self.assertEqual(stats.rate(5000, 0.123456), 40500.0)
        self.assertEqual(stats.rate(3, 2), 2.0)  # 1.5 rounds to even, as awk's printf

    def test_per_request_us(self):
        self.assertEqual(stats.per_request_us(0.46, 200000), 2.3)
        self.assertEqual(stats.per_request_us(0.01, 3), 3333.333)

    def test_server_us_from_clock_ticks(self):
        self.assertEqual(stats.server_us(100, 146, 100, 200000), 2.3)

    def test_cpu_and_wall_rounding(self):
        self.assertEqual(stats.cpu_seconds(0.123, 0.456), 0.58)
        self.assertEqual(stats.wall_seconds(1.0, 2.2345678), 1.234568)

    def test_drops_at_least_one(self):
        self.assertEqual(stats.drops_of(10500, 2000), 5)
        self.assertEqual(stats.drops_of(1500, 2000), 1)

    def test_per_connection(self):
        self.assertEqual(stats.per_connection(212, 5), 42.4)
        self.assertEqual(stats.per_connection(7, 0), 7.0)

    def test_mib(self):
        self.assertEqual(stats.mib(20480), 20.0)
        self.assertEqual(stats.mib(15000), 14.6)

    def test_per_item_leaves_the_start_out(self):
        self.assertEqual(stats.per_item(1_000_000 + 20 * 2000, 1_000_000 + 20 * 4000, 2000), 20.0)

    def test_filter_slope(self):
        # 30 MiB at 1M pairs, 110 MiB at 10M: 80 MiB over 9M pairs.
        slope, base, whole = stats.filter_slope(1_000_000, 30 * 1024, 10_000_000, 110 * 1024)
        self.assertAlmostEqual(slope, 80 * 2**20 / 9_000_000)
        self.assertAlmostEqual(base, 30 * 2**20 - slope * 1_000_000)
        self.assertAlmostEqual(whole, 110 * 2**20 / 10_000_000)


class ToolOutput(unittest.TestCase):
    def test_rusage(self):
        self.assertEqual(stats.parse_rusage("0.41 0.05 18236\n"), (0.41, 0.05, 18236))

    def test_rusage_after_a_non_zero_status(self):
        self.assertEqual(stats.parse_rusage("Command exited with non-zero status 3\n1.00 0.20 9000\n"),
                         (1.0, 0.2, 9000))

    def test_rusage_garbage(self):
        for text in ("", "Command terminated by signal 9\n"):
            with self.assertRaises(ValueError):
                stats.parse_rusage(text)

    def test_peak_rss(self):
        self.assertEqual(stats.parse_peak_rss("123456\n"), 123456)
        with self.assertRaises(ValueError):
            stats.parse_peak_rss("Command exited with non-zero status 1\n")

    def test_callgrind_summary(self):
        self.assertEqual(stats.callgrind_summary(CALLGRIND_SAMPLE), 61234567)

    def test_callgrind_without_summary(self):
        self.assertIsNone(stats.callgrind_summary(CALLGRIND_SAMPLE.replace("summary:", "totals:")))

    def test_h2load_rate_without_commas(self):
        self.assertEqual(stats.h2load_rate(H2LOAD_SAMPLE), "40502.23")
        self.assertIsNone(stats.h2load_rate("requests: 1 total\n"))

    def test_h2load_all_2xx(self):
        self.assertTrue(stats.h2load_all_2xx(H2LOAD_SAMPLE, 5000))
        self.assertFalse(stats.h2load_all_2xx(H2LOAD_SAMPLE, 500))
        self.assertFalse(stats.h2load_all_2xx(H2LOAD_SAMPLE.replace("5000 2xx", "4999 2xx"), 5000))

    def test_h2load_summary(self):
        self.assertEqual(stats.h2load_summary(H2LOAD_SAMPLE).splitlines(),
                         [line for line in H2LOAD_SAMPLE.splitlines() if line.startswith(("requests:", "status"))])

    def test_count_lines_with(self):
        text = '{"outcome":"delivered"}\n{"outcome":"in_doubt"}\n{"outcome":"delivered"}\n'
        self.assertEqual(stats.count_lines_with(text, '"outcome":"delivered"'), 2)


class Series(unittest.TestCase):
    def test_add_get_has(self):
        s = stats.Series()
        self.assertFalse(s.has("a"))
        s.add("a", "1.5")
        s.add("a", 2)
        self.assertTrue(s.has("a"))
        self.assertEqual(s.get("a"), [1.5, 2.0])
        with self.assertRaises(KeyError):
            s.get("b")


class Goals(unittest.TestCase):
    def test_ratio_goals(self):
        g = stats.Goal.parse(">= 0.7x")
        self.assertTrue(g.on_ratio)
        self.assertTrue(g.holds(0.7))
        self.assertFalse(g.holds(0.69))
        self.assertFalse(stats.Goal.parse("<= 1.5x").holds(1.51))

    def test_figure_goals(self):
        g = stats.Goal.parse("send < 100 ms")
        self.assertFalse(g.on_ratio)
        self.assertTrue(g.holds(99.9))
        self.assertFalse(g.holds(100))
        self.assertTrue(stats.Goal.parse("<= 40 MB").holds(40))
        self.assertFalse(stats.Goal.parse("<= 10 bytes per pair").holds(10.5))
        self.assertTrue(stats.Goal.parse("<= 150").holds(42))

    def test_goals_that_are_not_checked(self):
        for text in ("none", "none; 1a's <= 1.5x, read in instructions", "none; a stand-in for 3a"):
            self.assertIsNone(stats.Goal.parse(text), text)

    def test_verdict(self):
        self.assertEqual(stats.verdict(">= 6x", 6.5, 6.1), ", met")
        self.assertEqual(stats.verdict(">= 6x", 6.5, 5.9), ", met at best only")
        self.assertEqual(stats.verdict(">= 6x", 5.0, 5.9), ", missed")
        self.assertEqual(stats.verdict(">= 0.8x", 0.68, 0.82), ", met at median only")
        self.assertEqual(stats.verdict("<= 150", 102.4), ", met")
        self.assertEqual(stats.verdict("none", 1.0, 1.0), "")
