"""Comparisons that never raise: a missing or malformed value is a failed Outcome with a reason."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from lastexam.grading.rubric import Outcome


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def get(obj: Any, path: str, default: Any = MISSING) -> Any:
    """get(data, "summary.rows[2].total"): MISSING (or default) where the path does not exist."""
    cur = obj
    for name, index in _PATH_TOKEN.findall(path):
        try:
            cur = cur[int(index)] if index else cur[name]
        except (KeyError, IndexError, TypeError, ValueError):
            return default
    return cur


def as_number(value: Any) -> float | None:
    """A finite float from a number or a numeric string ("1,234.5" and "12%" are not numbers)."""
    if isinstance(value, bool) or value is None or value is MISSING:
        return None
    if isinstance(value, (int, float)):
        f = float(value)
    elif isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return f if math.isfinite(f) else None


def near(seen: Any, expected: float, *, rel: float = 0.0, abs: float = 0.0) -> Outcome:
    """|seen - expected| <= max(abs, rel * |expected|)."""
    tol = max(abs, rel * math.fabs(expected))
    value = as_number(seen)
    if value is None:
        return Outcome(False, f"not a number: {seen!r}", expected=expected, seen=_shown(seen))
    diff = math.fabs(value - expected)
    ok = diff <= tol
    msg = f"off by {diff:.6g} (tolerance {tol:.6g})" if not ok else f"within {tol:.6g}"
    return Outcome(ok, msg, expected=expected, seen=value)


def equal(seen: Any, expected: Any) -> Outcome:
    ok = seen == expected and seen is not MISSING
    return Outcome(ok, "equal" if ok else "differs", expected=expected, seen=_shown(seen))


def within(seen: Any, lo: float, hi: float) -> Outcome:
    value = as_number(seen)
    if value is None:
        return Outcome(False, f"not a number: {seen!r}", expected=[lo, hi], seen=_shown(seen))
    ok = lo <= value <= hi
    return Outcome(ok, "in range" if ok else "out of range", expected=[lo, hi], seen=value)


def same_set(seen: Any, expected: Sequence[Any]) -> Outcome:
    if not isinstance(seen, (list, tuple, set, frozenset)):
        return Outcome(False, f"not a list: {seen!r}", expected=sorted(expected), seen=_shown(seen))
    s, e = set(seen), set(expected)
    if s == e:
        return Outcome(True, "same items", expected=sorted(e, key=str), seen=sorted(s, key=str))
    msg = f"missing {sorted(e - s, key=str)}; unexpected {sorted(s - e, key=str)}"
    return Outcome(False, msg, expected=sorted(e, key=str), seen=sorted(s, key=str))


def all_near(
    seen: Any, expected: Sequence[float], *, rel: float = 0.0, abs: float = 0.0
) -> Outcome:
    """Element-wise `near` over two sequences of equal length; evidence shows the worst misses."""
    if not isinstance(seen, (list, tuple)) and not hasattr(seen, "tolist"):
        return Outcome(False, "not a sequence", expected=f"{len(expected)} numbers", seen=_shown(seen))
    seen_list = list(seen.tolist() if hasattr(seen, "tolist") else seen)
    if len(seen_list) != len(expected):
        return Outcome(
            False,
            f"length {len(seen_list)}, expected {len(expected)}",
            expected=len(expected),
            seen=len(seen_list),
        )
    misses = []
    for i, (s, e) in enumerate(zip(seen_list, expected, strict=True)):
        if not near(s, e, rel=rel, abs=abs).passed:
            misses.append((i, e, s))
    if not misses:
        return Outcome(True, f"all {len(expected)} values within tolerance")
    shown = [{"index": i, "expected": e, "seen": _shown(s)} for i, e, s in misses[:5]]
    return Outcome(
        False,
        f"{len(misses)} of {len(expected)} values out of tolerance (rel={rel}, abs={abs})",
        expected="see misses",
        seen=shown,
    )


def _shown(value: Any) -> Any:
    return "<missing>" if value is MISSING else value
