import io
import os
import subprocess
import unittest
from contextlib import redirect_stderr, redirect_stdout

from benchkit import main as main_module
from benchkit import options


def parse(*argv, **env):
    return options.parse(list(argv), env)


class DefaultsAndEnvironment(unittest.TestCase):
    def test_defaults(self):
        o = parse()
        self.assertEqual((o.records, o.validate_records, o.rss_small, o.rss_large), (200000, 1000000, 100000, 1000000))
        self.assertEqual((o.dup_small, o.dup_large, o.starts, o.instr_records), (1000000, 10000000, 7, 20000))
        self.assertEqual((o.rtt_records, o.rtts, o.drop_every, o.rounds), (60000, (20, 50, 100), 2000, 3))
        self.assertEqual((o.rows, o.connections, o.step_timeout), ("1,2,3,4,5,6,7,8,9,10,11,12", "2", "900"))

    def test_environment_over_defaults(self):
        o = parse(RECORDS="123", RTTS="10 30", ROUNDS="5", ROWS="1,9", CONNECTIONS="4", STEP_TIMEOUT="60",
                  DROP_EVERY="500")
        self.assertEqual((o.records, o.rtts, o.rounds, o.rows, o.connections, o.step_timeout, o.drop_every),
                         (123, (10, 30), 5, "1,9", "4", "60", 500))

    def test_empty_environment_variable_is_the_default(self):
        self.assertEqual(parse(RECORDS="").records, 200000)

    def test_flags_over_environment(self):
        o = parse("--records", "77", "--rtts", "5 6", "--rows", "3", RECORDS="123", RTTS="10")
        self.assertEqual((o.records, o.rtts, o.rows), (77, (5, 6), "3"))

    def test_every_flag(self):
        o = parse("--rounds", "2", "--validate-records", "3", "--rss-small", "4", "--rss-large", "5", "--dup-small",
                  "6", "--dup-large", "7", "--starts", "8", "--instr-records", "9", "--rtt-records", "10")
        self.assertEqual((o.rounds, o.validate_records, o.rss_small, o.rss_large, o.dup_small, o.dup_large, o.starts,
                          o.instr_records, o.rtt_records), (2, 3, 4, 5, 6, 7, 8, 9, 10))


class Quick(unittest.TestCase):
    def test_quick_sizes(self):
        o = parse("--quick")
        self.assertEqual((o.records, o.validate_records, o.rss_small, o.rss_large, o.dup_small, o.dup_large),
                         (5000, 50000, 5000, 50000, 20000, 200000))
        self.assertEqual((o.starts, o.instr_records, o.rtt_records, o.rtts, o.rounds), (3, 2000, 10000, (50,), 1))

    def test_quick_then_override(self):
        o = parse("--quick", "--rounds", "3", "--records", "900")
        self.assertEqual((o.rounds, o.records, o.validate_records), (3, 900, 50000))

    def test_override_then_quick_is_overridden(self):
        o = parse("--rounds", "3", "--quick")
        self.assertEqual(o.rounds, 1)

    def test_quick_over_environment(self):
        self.assertEqual(parse("--quick", ROUNDS="9").rounds, 1)

    def test_quick_keeps_what_it_does_not_set(self):
        o = parse("--quick", DROP_EVERY="300", ROWS="2")
        self.assertEqual((o.drop_every, o.rows), (300, "2"))


class Positional(unittest.TestCase):
    def test_records_then_rss_large(self):
        o = parse("1000", "2000")
        self.assertEqual((o.records, o.rss_large), (1000, 2000))

    def test_positional_wins_over_flags_wherever_it_stands(self):
        o = parse("1000", "--records", "5")
        self.assertEqual(o.records, 1000)


class Validation(unittest.TestCase):
    def assert_rejected(self, *argv, message, **env):
        with self.assertRaises(options.UsageError) as caught:
            parse(*argv, **env)
        self.assertIn(message, str(caught.exception))
        return caught.exception

    def test_zero(self):
        self.assert_rejected("--rounds", "0", message="positive integers: '0'")

    def test_not_a_number(self):
        self.assert_rejected("--records", "1e3", message="'1e3'")

    def test_leading_zero(self):
        self.assert_rejected(message="'010'", STARTS="010")

    def test_each_rtt_word(self):
        self.assert_rejected("--rtts", "20 x", message="'x'")

    def test_first_bad_value_in_order(self):
        self.assert_rejected(message="'-1'", RECORDS="-1", ROUNDS="0")

    def test_dup_large_must_exceed_dup_small(self):
        self.assert_rejected("--dup-small", "10", "--dup-large", "10", message="--dup-large must exceed --dup-small")

    def test_unknown_option_shows_usage(self):
        self.assertTrue(self.assert_rejected("--fast", message="unknown option --fast").show_usage)

    def test_flag_without_value(self):
        self.assert_rejected("--rounds", message="--rounds needs a value")

    def test_help(self):
        with self.assertRaises(options.HelpRequested):
            parse("--records", "5", "-h")


class Rows(unittest.TestCase):
    def test_row_selection_is_by_whole_number(self):
        o = parse("--rows", "1,10")
        self.assertEqual([n for n in range(1, 12) if o.row(n)], [1, 10])


class ExitStatus(unittest.TestCase):
    def run_main(self, *argv, **env):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = main_module.main(list(argv), env)
        return status, out.getvalue(), err.getvalue()

    def test_validation_error_exits_64(self):
        status, _, err = self.run_main("--starts", "x")
        self.assertEqual(status, 64)
        self.assertIn("bench: sizes, starts and rounds are positive integers: 'x'", err)

    def test_unknown_option_exits_64_with_usage(self):
        status, out, err = self.run_main("--nope")
        self.assertEqual(status, 64)
        self.assertIn("bench: unknown option --nope", err)
        self.assertIn("Usage: scripts/bench.sh", err)
        self.assertEqual(out, "")

    def test_help_exits_0(self):
        status, out, _ = self.run_main("--help")
        self.assertEqual(status, 0)
        self.assertIn("Usage: scripts/bench.sh [--quick]", out)


class Entry(unittest.TestCase):
    """scripts/bench.sh runs this program with the options as given (no benchmark runs: each is refused or help)."""

    BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench.sh")

    def run_bench(self, *argv):
        return subprocess.run(["bash", self.BENCH, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=60)

    def test_validation_error_exits_64(self):
        done = self.run_bench("--quick", "--rounds", "0")
        self.assertEqual(done.returncode, 64)
        self.assertEqual(done.stderr, "bench: sizes, starts and rounds are positive integers: '0'\n")

    def test_help(self):
        done = self.run_bench("--help")
        self.assertEqual(done.returncode, 0)
        self.assertIn("APNS_BULK_BIN=path", done.stdout)
