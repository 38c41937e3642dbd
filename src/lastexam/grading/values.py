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


_GROUPED = re.compile(r"[+-]?\d{1,3}(?:([,\u00a0\u202f ])\d{3})(?:\1\d{3})*(?:\.\d*)?(?:[eE][+-]?\d+)?")
_EMPTY_TEXT = {"", "nan", "none", "na", "n/a", "null"}
_MAX_NUMBER_CHARS = 100


def as_number(value: Any, *, text: bool = True) -> float | None:
    """A finite float, or None; never raises. Text is read as a person writes numbers:
    surrounding whitespace, a trailing "%" (dropped: "12.5%" is 12.5), thousands grouped by
    commas or spaces ("1,234.5", "1 234") and a Unicode minus are accepted; "1,5" (a decimal
    comma) is not a number. text=False accepts only real numbers, for spreadsheet cells where
    the text "12" is not the number 12. Booleans are never numbers."""
    if isinstance(value, bool) or value is None or value is MISSING:
        return None
    if isinstance(value, str):
        if not text:
            return None
        return _parse_number(value)
    if isinstance(value, (bytes, bytearray)) or not hasattr(value, "__float__"):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):  # an int too large for a float, say
        return None
    return f if math.isfinite(f) else None


def _parse_number(raw: str) -> float | None:
    s = raw.strip().replace("\u2212", "-")
    if s.endswith("%"):
        s = s[:-1].rstrip()
    if not s or len(s) > _MAX_NUMBER_CHARS:
        return None
    if _GROUPED.fullmatch(s):
        s = re.sub(r"[,\u00a0\u202f ]", "", s)
    elif "," in s or " " in s:
        return None
    try:
        f = float(s)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def is_empty(value: Any) -> bool:
    """No value: missing, None, NaN, blank text or a spelled-out null ("NA", "null", "nan")."""
    if value is None or value is MISSING:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.strip().lower() in _EMPTY_TEXT


def near(seen: Any, expected: float | None, *, rel: float = 0.0, abs: float = 0.0) -> Outcome:
    """|seen - expected| <= max(abs, rel * |expected|). An expected None means the value must be
    left empty (see is_empty): a median not reached, a ratio undefined."""
    if expected is None:
        ok = is_empty(seen)
        return Outcome(ok, "empty as expected" if ok else "should be empty", expected=None,
                       seen=_shown(seen))
    tol = max(abs, rel * math.fabs(expected))
    value = as_number(seen)
    if value is None:
        return Outcome(False, f"not a number: {seen!r}", expected=expected, seen=_shown(seen))
    diff = math.fabs(value - expected)
    ok = diff <= tol
    msg = f"off by {diff:.6g} ({'within' if ok else 'outside'} tolerance {tol:.6g})"
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


def _shown(value: Any) -> Any:
    return "<missing>" if value is MISSING else value
