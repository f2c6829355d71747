"""What the benchmarks' tables share: a row of min, median and max, and a
verdict on a target that speaks only when the whole range of the
repetitions is on one side of it.

A median alone calls a target met or missed on the noise of this machine:
with two repetitions, or ranges wider than the difference judged, the
figures cannot tell, and the verdict says so.  The scripts in
contrib/bench import it with sys.path set to this directory.
"""
import statistics

# fewer repetitions than this decide nothing: one odd run is half of two
MIN_REPS = 3


def results(path):
    """bench_alternate's results file (lib.sh) as {tool: [[value, ...] per
    repetition]}, in the order the repetitions ran."""
    res = {}
    for line in open(path):
        tool, *v = line.split()
        res.setdefault(tool, []).append([float(x) for x in v])
    return res


def row(name, xs, fmt="%.3f"):
    """A markdown table row: NAME, then min, median and max of XS."""
    xs = sorted(xs)
    return ("| %s | " + fmt + " | " + fmt + " | " + fmt + " |") % (
        name, xs[0], statistics.median(xs), xs[-1])


def mmm(xs, fmt="%.0f"):
    """min / median / max of XS in one cell."""
    xs = sorted(xs)
    return (fmt + " / " + fmt + " / " + fmt) % (xs[0], statistics.median(xs), xs[-1])


def verdict(xs, ok, fmt="%.3f"):
    """"met" when OK(x) holds for every repetition, "**missed**" when for
    none, otherwise "within noise" with the range; "cannot decide" under
    MIN_REPS repetitions."""
    xs = sorted(xs)
    if len(xs) < MIN_REPS:
        return "cannot decide at %d repetition%s (at least %d)" % (
            len(xs), "" if len(xs) == 1 else "s", MIN_REPS)
    good = [bool(ok(x)) for x in xs]
    if all(good):
        return "met"
    if not any(good):
        return "**missed**"
    return ("within noise (" + fmt + " to " + fmt + ")") % (xs[0], xs[-1])


def verdicts(groups, ok, fmt="%.3f"):
    """One verdict over several figures that must all meet the target
    (each a list of repetitions): missed if any is missed, met if all are
    met, otherwise the first undecided one's words."""
    vs = [verdict(xs, ok, fmt) for xs in groups]
    for v in vs:
        if v.startswith("cannot"):
            return v
    if any(v == "**missed**" for v in vs):
        return "**missed**"
    if all(v == "met" for v in vs):
        return "met"
    return next(v for v in vs if v.startswith("within"))


if __name__ == "__main__":
    # the rules, on made-up repetitions: python3 benchstat.py
    below = lambda x: x <= 1.0
    assert verdict([0.9, 0.95, 1.0], below) == "met"
    assert verdict([1.1, 1.2, 1.3], below) == "**missed**"
    assert verdict([0.9, 1.1, 1.2], below).startswith("within noise (0.900 to 1.200")
    assert verdict([0.5, 0.6], below).startswith("cannot decide at 2 repetitions")
    assert verdicts([[0.9] * 3, [1.2] * 3], below) == "**missed**"
    assert verdicts([[0.9] * 3, [0.8, 1.1, 0.9]], below).startswith("within noise")
    assert verdicts([[0.9] * 3, [0.8] * 3], below) == "met"
    assert row("x", [3, 1, 2], "%.0f") == "| x | 1 | 2 | 3 |"
    print("benchstat: ok")
