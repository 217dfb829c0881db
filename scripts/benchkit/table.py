"""The printed rows of the report: each side's best and the spread of its rounds (min, median, max), the ratio,
the goal (and whether it is met); the summary table that gathers them at the end."""
import sys

from . import stats


def _side(label, values, higher, unit):
    lo, mid, hi = stats.spread(values)
    b = stats.best(values, higher)
    return (f"{label} best {stats.fmt(b)} {unit} (min {stats.fmt(lo)}, median {stats.fmt(mid)}, max {stats.fmt(hi)})",
            b, mid)


def pair_line(title, unit, higher, label_a, a, label_b, b, goal):
    """Two sides of a row: A / B at best and at median. A goal in x is on that ratio, one in the row's unit on A.
    With as many rounds on each side (run interleaved, A then B), each round's own ratio too: the worst of them,
    and for a goal on the ratio whether it held in every round or in which rounds it did not."""
    side_a, best_a, median_a = _side(label_a, a, higher, unit)
    side_b, best_b, median_b = _side(label_b, b, higher, unit)
    ratio_best, ratio_median = best_a / best_b, median_a / median_b
    goal_obj = stats.Goal.parse(goal)
    on_ratio = goal_obj is not None and goal_obj.on_ratio
    if on_ratio:
        check = stats.verdict(goal, ratio_best, ratio_median)
    else:
        check = stats.verdict(goal, best_a, median_a)
    rounds = ""
    if len(a) == len(b) and len(a) > 1:
        ratios = [x / y for x, y in zip(a, b)]
        worst = min(ratios) if higher else max(ratios)
        rounds = f", worst round {worst:.2f}x"
        if on_ratio:
            missed = [str(i + 1) for i, r in enumerate(ratios) if not goal_obj.holds(r)]
            check += f"; missed in round {', '.join(missed)}" if missed else "; in every round"
    return (f"{title}: {side_a} | {side_b} | ratio best {ratio_best:.2f}x, median {ratio_median:.2f}x{rounds}"
            f" (goal {goal}{check}) [{len(a)}+{len(b)} runs]")


def one_line(title, unit, higher, values, goal):
    """One side: its best and the spread of its rounds."""
    lo, mid, hi = stats.spread(values)
    b = stats.best(values, higher)
    return (f"{title}: best {stats.fmt(b)} {unit} (min {stats.fmt(lo)}, median {stats.fmt(mid)}, max {stats.fmt(hi)}"
            f" {unit}) (goal {goal}{stats.verdict(goal, b, mid)}) [{len(values)} runs]")


def count_line(title, unit, label_a, counts_a, label_b, counts_b, n, goal, orientation):
    """Row 9: each side's instructions an item from its counts at n and 2n; the ratio A / B as a cost, or B / A
    (`rate`) where higher is better. One count at each size: no rounds, so no spread."""
    a, b = stats.per_item(*counts_a, n), stats.per_item(*counts_b, n)
    ratio = f"{a / b:.2f}x" if orientation == "cost" else f"{b / a:.2f}x ({label_b} / {label_a}, as a rate)"
    return f"{title}: {label_a} {a:,.0f} {unit} | {label_b} {b:,.0f} | ratio {ratio} (goal {goal}) [callgrind]"


def filter_line(n_small, kib_small, n_large, kib_large, goal):
    """Row 5: the duplicate filter's peak RSS at two sizes, the slope between them and the base under it."""
    slope, base, whole = stats.filter_slope(n_small, kib_small, n_large, kib_large)
    return (f"5  duplicate filter: peak RSS {kib_small / 1024:.0f} MiB at {n_small:,} pairs, {kib_large / 1024:.0f}"
            f" MiB at {n_large:,}: {slope:.1f} bytes per distinct pair above a flat base of {base / 2**20:.0f} MiB"
            f" ({whole:.1f} bytes per pair counting the whole RSS at {n_large:,}) (goal {goal}"
            f"{stats.verdict(goal, slope)})")


class Table:
    """The rows as they are measured (printed at once) and again together at the end."""

    def __init__(self, out=None):
        self.lines = []
        self._out = out

    def add(self, line):
        print(line, file=self._out or sys.stdout, flush=True)
        self.lines.append(line)
