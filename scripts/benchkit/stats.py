"""The figures: series of rounds, best / min / median / max, ratios, per-request division, goals, and the parsing
of what the tools print (/usr/bin/time, h2load, callgrind)."""
import re
import statistics


class Series:
    """Named lists of figures, one value a round (the old script's v.NAME files)."""

    def __init__(self):
        self._values = {}

    def add(self, name, value):
        self._values.setdefault(name, []).append(float(value))

    def get(self, name):
        if name not in self._values:
            raise KeyError(f"no figures in series {name}")
        return list(self._values[name])

    def has(self, name):
        return bool(self._values.get(name))


def best(values, higher):
    """The best of the rounds: the highest for a rate, the lowest for a cost."""
    return max(values) if higher else min(values)


def spread(values):
    """(min, median, max) of the rounds."""
    if not values:
        raise ValueError("no values")
    return min(values), statistics.median(values), max(values)


def fmt(x):
    """A figure as printed: thousands separated from 1,000, one decimal from 10, else two."""
    return f"{x:,.0f}" if abs(x) >= 1000 else (f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}")


# The figures of one run, rounded as the old script's awk printf did (the series hold these values).
def wall_seconds(t0, t1):
    return round(t1 - t0, 6)


def cpu_seconds(user, system):
    return round(user + system, 2)


def rate(n, seconds):
    """Items per second, to the unit."""
    return float(f"{n / seconds:.0f}")


def per_request_us(cpu, n):
    """CPU seconds over n requests, in microseconds a request."""
    return round(cpu / n * 1e6, 3)


def server_us(ticks_before, ticks_after, tick, n):
    """A server's CPU (clock ticks from /proc/PID/stat) over n requests, in microseconds a request."""
    return round((ticks_after - ticks_before) / tick / n * 1e6, 3)


def mib(kib):
    return round(kib / 1024, 1)


def per_connection(doubt, drops):
    """Records in doubt per lost connection (at least one connection counted)."""
    return round(doubt / max(drops, 1), 1)


def drops_of(requests, drop_every):
    """The connections the mock dropped: one every drop_every requests, at least one."""
    return max(requests // drop_every, 1)


def per_item(small, large, n):
    """Instructions an item: the count at 2n less the count at n, over n (the start and the set-up drop out)."""
    return (large - small) / n


def filter_slope(n_small, kib_small, n_large, kib_large):
    """Row 5: (bytes per distinct pair above the base, the flat base in bytes, bytes per pair of the whole RSS)."""
    slope = (kib_large - kib_small) * 1024 / (n_large - n_small)
    base = kib_small * 1024 - slope * n_small
    return slope, base, kib_large * 1024 / n_large


def parse_rusage(text):
    """/usr/bin/time -f '%U %S %M' output (its last line; a "Command exited ..." line may come first):
    (user s, sys s, peak RSS KiB)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError("no /usr/bin/time output")
    fields = lines[-1].split()
    if len(fields) != 3:
        raise ValueError(f"not '%U %S %M': {lines[-1]!r}")
    return float(fields[0]), float(fields[1]), int(fields[2])


def parse_peak_rss(text):
    """/usr/bin/time -f '%M' output: peak RSS in KiB."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[-1].strip().isdigit():
        raise ValueError(f"not '%M': {text!r}")
    return int(lines[-1])


def h2load_all_2xx(text, n):
    """Whether h2load's summary says all n requests got a 2xx answer."""
    return re.search(rf"^status codes: {n} 2xx", text, re.MULTILINE) is not None


def h2load_rate(text):
    """h2load's own req/s, as it prints it (commas removed), from its `finished in` line; None without one."""
    for line in text.splitlines():
        if line.startswith("finished in"):
            fields = line.split()
            if len(fields) >= 4:
                return fields[3].replace(",", "")
    return None


def h2load_summary(text):
    """h2load's `requests:` and `status codes:` lines (for a failure message)."""
    return "\n".join(line for line in text.splitlines() if re.match(r"^(requests|status codes):", line))


def callgrind_summary(text):
    """The instruction count of a callgrind output file (its `summary:` line); None without one."""
    for line in text.splitlines():
        if line.startswith("summary:"):
            fields = line.split()
            return int(fields[1]) if len(fields) > 1 else None
    return None


def count_lines_with(text, needle):
    """Lines containing needle (grep -c)."""
    return sum(1 for line in text.splitlines() if needle in line)


class Goal:
    """A row's goal as printed: "<= 1.5x" (on the ratio), "send < 100 ms" or "<= 40 MB" (on the figure);
    "none" and prose cannot be checked (parse gives None)."""

    PATTERN = re.compile(r"^(?:(?P<subject>[A-Za-z][\w-]*) )?(?P<op><=|>=|<|>) (?P<limit>[0-9]+(?:\.[0-9]+)?)"
                         r"\s*(?P<unit>x|[A-Za-z].*)?$")

    def __init__(self, op, limit, on_ratio):
        self.op, self.limit, self.on_ratio = op, limit, on_ratio

    @classmethod
    def parse(cls, text):
        m = cls.PATTERN.match(text.strip())
        if not m:
            return None
        return cls(m.group("op"), float(m.group("limit")), m.group("unit") == "x")

    def holds(self, value):
        return {"<=": value <= self.limit, ">=": value >= self.limit,
                "<": value < self.limit, ">": value > self.limit}[self.op]


def verdict(goal_text, best_value, median_value=None):
    """", met", ", met at best only" or ", missed" for a checkable goal (best and median of the figure it is on);
    "" for one that is not."""
    goal = Goal.parse(goal_text)
    if goal is None:
        return ""
    at_best = goal.holds(best_value)
    at_median = at_best if median_value is None else goal.holds(median_value)
    if at_best and at_median:
        return ", met"
    if at_best:
        return ", met at best only"
    if at_median:
        return ", met at median only"
    return ", missed"
