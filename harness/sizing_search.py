"""The sizing search, apart from any launch: bracket by doubling from 1 accelerator, then bisect to a resolution.

A trial is a function N -> {"pass": bool, "au": float, ...} (harness/sizing.py runs the kernel; the tests give a
made-up AU curve). The search asks it again for counts it already measured only through `Memo`, which answers from
the state file: a killed search run again replays its finished trials from there and launches only the rest.
Not a submission: the answer is what the bare kernel measured, never an MLPerf Storage result."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

Trial = Callable[[int], dict]


class SizingError(ValueError):
    """Bad input to the search (exit status 2)."""


class TrialFailed(RuntimeError):
    """A launch failed or left no MLPerf numbers (exit status 1; the state keeps the finished trials)."""


class NoRoom(TrialFailed):
    """DATA's file system cannot hold what a trial would write (exit 2: bad input, nothing written)."""


@dataclass
class Outcome:
    kind: str                   # "max": a largest count found; "feeds_all": RANKS_MAX passes; "fails_at_1"
    largest: int | None         # the largest count measured to pass (None: fails at 1)
    first_fail: int | None      # the smallest count measured to fail above it (None: none failed)
    trials: list = field(default_factory=list)   # the counts in the order the search asked for them


def estimate(ranks_max: int, resolution: int, lo: int | None = None, hi: int | None = None) -> int:
    """About how many trials the whole search takes: the doublings up to RANKS_MAX, then the halvings of the
    bracket [lo, hi] (before it is known: of the widest one, [RANKS_MAX/2, RANKS_MAX])."""
    doublings = math.floor(math.log2(ranks_max)) + 1 + (0 if ranks_max & (ranks_max - 1) == 0 else 1)
    if lo is None or hi is None:
        lo, hi = max(1, ranks_max // 2), ranks_max
    width = max(hi - lo, 1)
    return doublings + max(0, math.ceil(math.log2(width / resolution))) if width > resolution else doublings


def search(trial: Trial, ranks_max: int, resolution: int = 1) -> Outcome:
    """The largest N <= ranks_max with trial(N)["pass"], assuming a pass at N means a pass at every smaller count
    (AU falls as accelerators are added). Bracket: 1, 2, 4, ... while they pass (the last one RANKS_MAX itself);
    bisect: while the bracket [lo pass, hi fail] is wider than `resolution`, its middle. The answer is then within
    `resolution` of the true largest count: lo <= it < hi."""
    if ranks_max < 1:
        raise SizingError(f"RANKS_MAX={ranks_max}: must be >= 1")
    if resolution < 1:
        raise SizingError(f"RESOLUTION={resolution}: must be >= 1")
    asked: list[int] = []

    def run(n: int) -> bool:
        asked.append(n)
        return bool(trial(n)["pass"])

    if not run(1):
        return Outcome("fails_at_1", None, 1, asked)
    lo, hi = 1, None
    while hi is None and lo < ranks_max:
        n = min(lo * 2, ranks_max)
        if run(n):
            lo = n
        else:
            hi = n
    if hi is None:
        return Outcome("feeds_all", lo, None, asked)
    while hi - lo > resolution:
        mid = (lo + hi) // 2
        if run(mid):
            lo = mid
        else:
            hi = mid
    return Outcome("max", lo, hi, asked)


class Memo:
    """A trial function backed by the state's finished trials ({str(N): result}): a count measured before is
    answered from there (resumed: not launched again); a new one is run, then saved through `save` at once."""

    def __init__(self, trial: Trial, done: dict, save: Callable[[dict], None]):
        self.trial, self.done, self.save = trial, done, save
        self.launched = 0

    def __call__(self, n: int) -> dict:
        key = str(n)
        if key not in self.done:
            self.done[key] = self.trial(n)
            self.launched += 1
            self.save(self.done)
        return self.done[key]
