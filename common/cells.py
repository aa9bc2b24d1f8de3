"""The report's number rules: how a table cell writes a measured value (3 decimals, a ratio as '2.50x', '-' for none,
a match as 'yes'/'NO'). One definition for reports/ (reports/tables.py re-exports them) and the profiles' report
sections (Profile.report_sections), which may not import reports/."""
from __future__ import annotations

import math


def f3(x) -> str:
    """seconds, percentages, samples/s and other measured floats: 3 decimals; '-' when absent"""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.3f}"


def f1(x) -> str:
    """rates (MiB/s): 1 decimal"""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{float(x):.1f}"


def ms(seconds) -> str:
    """seconds as milliseconds, 3 decimals; '-' when absent"""
    return "-" if seconds is None else f3(float(seconds) * 1000.0)


def ratio(a, b) -> str:
    """a/b as '2.50x' ('-' if either is missing or b is 0)"""
    if a is None or b is None or not b:
        return "-"
    return f"{a / b:.2f}x"


def value(v) -> str:
    """A verdict's expected/observed value: ints exact, floats 3 decimals, dicts 'key=value, ...', lists '[...]'."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f3(v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={value(x)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    return str(v)


def yes(ok: bool) -> str:
    """a match cell: 'yes', or 'NO' (the HTML writer colours both)"""
    return "yes" if ok else "NO"

