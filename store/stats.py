"""Two samples of one number compared: the difference of their means, a bootstrap 95% interval of it, Cohen's d,
and whether the difference is within noise. A sample is a run's repetitions (the timing profile's REPEAT launches
within a run) or, pooled, the repetitions of every run repeating it (the same config hash, storage and ranks)."""
from __future__ import annotations

import math

import numpy as np

RESAMPLES = 10000   # bootstrap resamples per metric
SEED = 20261128     # numpy's default_rng seed: the same store compares the same way every time
ONE_EACH = "one value each: no spread, no noise estimate"


def cohens_d(a: list[float], b: list[float]) -> float | None:
    """(mean b - mean a) / the pooled standard deviation (sample variances, n - 1, weighted by n - 1); None when a
    side has fewer than 2 values or both sides have no spread."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return None
    pooled = math.sqrt(((na - 1) * np.var(a, ddof=1) + (nb - 1) * np.var(b, ddof=1)) / (na + nb - 2))
    return None if pooled == 0 else (float(np.mean(b)) - float(np.mean(a))) / pooled


def bootstrap_interval(a: list[float], b: list[float], resamples: int = RESAMPLES,
                       seed: int = SEED) -> tuple[float, float]:
    """The percentile bootstrap 95% interval of mean(b) - mean(a): each side resampled with replacement at its own
    size, `resamples` times, with numpy's default_rng(seed)."""
    rng = np.random.default_rng(seed)
    xa, xb = np.asarray(a, float), np.asarray(b, float)
    ma = xa[rng.integers(0, len(xa), (resamples, len(xa)))].mean(axis=1)
    mb = xb[rng.integers(0, len(xb), (resamples, len(xb)))].mean(axis=1)
    lo, hi = np.percentile(mb - ma, [2.5, 97.5])
    return float(lo), float(hi)


def compare(a: list[float], b: list[float], resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """One metric of A against B: n, means, B - A (and relative to A), the interval, d and the verdict: "within
    noise" (the interval holds 0), "differs" (it does not), or no noise estimate when a side has one value."""
    ma, mb = float(np.mean(a)), float(np.mean(b))
    out = {"n_a": len(a), "n_b": len(b), "mean_a": ma, "mean_b": mb, "diff": mb - ma,
           "rel": (mb - ma) / ma if ma else None, "interval": None, "resamples": None, "cohens_d": None}
    if len(a) < 2 or len(b) < 2:
        out["verdict"] = ONE_EACH if len(a) == len(b) == 1 else \
            f"{'A' if len(a) < 2 else 'B'} has one value: no spread on that side, no noise estimate"
        return out
    lo, hi = bootstrap_interval(a, b, resamples, seed)
    out.update(interval=[lo, hi], resamples=resamples, cohens_d=cohens_d(a, b),
               verdict="within noise" if lo <= 0 <= hi else "differs")
    return out
