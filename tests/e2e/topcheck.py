"""A frame of `ingero-ftrace top` as text, read back for the tests."""
import re


class Frame:
    """The window (offsets in s), each op's calls a second, the chain's
    headline and the pids it names as wakers and as preempters."""

    def __init__(self, path):
        self.name = path
        self.text = open(path, encoding="utf-8", errors="replace").read()
        m = re.search(r"^window (\d+\.\d+)s - (\d+\.\d+)s", self.text, re.M)
        if not m:
            raise SystemExit("%s: no window line in the frame:\n%s" % (path, self.text))
        self.lo, self.hi = float(m.group(1)), float(m.group(2))
        self.ops = {}
        rows = re.search(r"^OP .*?\n(.*?)(?:\n\n|\Z)", self.text, re.M | re.S)
        for line in (rows.group(1).splitlines() if rows else []):
            f = line.split()
            if len(f) >= 5 and re.match(r"^\d+\.\d$", f[1]):
                self.ops[f[0]] = float(f[1])
        # the chain: its headline's lines up to "cost", and "woken by" with
        # its continuation lines (indented past the label)
        m = re.search(r"^WHY THE GPU WAITS +\S+ +(.*?)\n    cost ", self.text, re.M | re.S)
        self.chain = " ".join(m.group(1).split()) if m else None
        self.woken, self.preempters = (self._pids("woken by"), self._pids("preempted by"))

    def _pids(self, label):
        """the pids on the chain's LABEL line and its continuation lines
        (indented past the label)"""
        m = re.search(r"^    %s +(.*(?:\n {18}\S.*)*)" % label, self.text, re.M)
        return {int(p) for p in re.findall(r"pid (\d+)", " ".join(m.group(1).split()) if m else "")}
