import io
import unittest

from benchkit import table


class PairLine(unittest.TestCase):
    def test_cost_row(self):
        line = table.pair_line("1a send -> nghttpd, CPU per request", "us", False, "send", [2.5, 2.3, 2.4],
                               "h2load", [1.8, 1.75, 1.9], "<= 1.5x")
        self.assertEqual(line, "1a send -> nghttpd, CPU per request: send best 2.30 us (min 2.30, median 2.40,"
                               " max 2.50) | h2load best 1.75 us (min 1.75, median 1.80, max 1.90) | ratio best 1.31x,"
                               " median 1.33x, worst round 1.39x (goal <= 1.5x, met; in every round) [3+3 runs]")

    def test_rate_row_best_is_the_highest(self):
        line = table.pair_line("1b rate", "req/s", True, "send", [300000.0, 372629.0], "h2load", [412574.0, 400000.0],
                               ">= 0.7x")
        self.assertIn("send best 372,629 req/s (min 300,000, median 336,314, max 372,629)", line)
        self.assertIn("ratio best 0.90x, median 0.83x, worst round 0.73x (goal >= 0.7x, met; in every round) [2+2 runs]",
                      line)

    def test_goal_missed_at_median(self):
        line = table.pair_line("2  validate", "records/s", True, "validate", [6.5, 5.0, 5.5], "python", [1.0, 1.0, 1.0],
                               ">= 6x")
        self.assertIn("worst round 5.00x (goal >= 6x, met at best only; missed in round 2, 3)", line)

    def test_goal_on_the_first_side(self):
        line = table.pair_line("6b start", "ms", False, "send", [120.0, 90.0], "h2load", [10.0, 11.0], "send < 100 ms")
        self.assertIn("(goal send < 100 ms, met at best only)", line)

    def test_goal_none(self):
        line = table.pair_line("7  x", "req/s", True, "a", [2.0], "b", [1.0], "none")
        self.assertTrue(line.endswith("ratio best 2.00x, median 2.00x (goal none) [1+1 runs]"), line)

    def test_each_round_against_its_pair(self):
        # Round 2's send is below round 2's h2load though both best and median are above: the goal did not hold there.
        line = table.pair_line("10 RTT 20 ms", "req/s", True, "send", [80.0, 60.0, 75.0], "h2load", [70.0, 65.0, 58.0],
                               ">= 1.0x")
        self.assertIn("ratio best 1.14x, median 1.15x, worst round 0.92x (goal >= 1.0x, met; missed in round 2)", line)

    def test_a_goal_on_the_figure_gives_no_round_verdict(self):
        line = table.pair_line("6b start", "ms", False, "send", [90.0, 95.0], "h2load", [10.0, 11.0], "send < 100 ms")
        self.assertIn("worst round 9.00x (goal send < 100 ms, met) [2+2 runs]", line)


class OneLine(unittest.TestCase):
    def test_one_side(self):
        line = table.one_line("4a peak RSS", "MiB", False, [21.5, 20.1, 22.0], "<= 40 MB")
        self.assertEqual(line, "4a peak RSS: best 20.1 MiB (min 20.1, median 21.5, max 22.0 MiB) (goal <= 40 MB, met)"
                               " [3 runs]")

    def test_higher_is_better(self):
        self.assertIn("best 9.00 x (min 1.00", table.one_line("t", "x", True, [1.0, 9.0], "none"))


class CountLine(unittest.TestCase):
    def test_cost(self):
        line = table.count_line("9a send", "instructions", "send", [1_000_000.0, 1_070_000.0], "h2load",
                                [500_000.0, 542_000.0], 2000, "none", "cost")
        self.assertEqual(line, "9a send: send 35 instructions | h2load 21 | ratio 1.67x (goal none) [callgrind]")

    def test_rate_orientation(self):
        line = table.count_line("9c v", "instructions", "validate", [0.0, 2000.0 * 30000], "python",
                                [0.0, 2000.0 * 6000], 2000, "none", "rate")
        self.assertIn("validate 30,000 instructions | python 6,000 | ratio 0.20x (python / validate, as a rate)", line)


class FilterLine(unittest.TestCase):
    def test_slope(self):
        line = table.filter_line(20000, 10240, 200000, 11800, "<= 10 bytes per pair")
        self.assertIn("peak RSS 10 MiB at 20,000 pairs, 12 MiB at 200,000", line)
        self.assertIn("8.9 bytes per distinct pair", line)
        self.assertIn("(goal <= 10 bytes per pair, met)", line)


class Table(unittest.TestCase):
    def test_prints_and_keeps(self):
        out = io.StringIO()
        t = table.Table(out)
        t.add("a")
        t.add("b")
        self.assertEqual(out.getvalue(), "a\nb\n")
        self.assertEqual(t.lines, ["a", "b"])
