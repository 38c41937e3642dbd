"""Tables: rows indexed by key, and every reference value of many rows compared in one check."""

from __future__ import annotations

import math
from collections import abc

from lastexam.grading.rubric import Outcome
from lastexam.grading.values import as_number, is_empty

TYPE_CHECKING = False  # typing itself costs each grading's fresh Python an import
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
    from typing import Any

    Key = str | tuple[str, ...] | Callable[[Mapping[str, Any]], Any]

KEYS_SHOWN = 5
# How bad a miss is, worst first: a row that is not there, a value that cannot be compared,
# then numbers by how many tolerances they are off.
_NO_ROW, _NOT_COMPARABLE, _OFF = 0, 1, 2


class Keyed(dict):
    """Rows by key, the first row of each key. What did not fit is kept beside them:
    `duplicates` (keys given by more than one row) and `unkeyed` (rows without a key)."""

    __slots__ = ("duplicates", "unkeyed")

    def __init__(self) -> None:
        super().__init__()
        self.duplicates: list[Any] = []
        self.unkeyed = 0

    def coverage(self, expected: Iterable[Hashable]) -> Outcome:
        """Exactly one row for each expected key: none missing, none unexpected, no key
        repeated, no row without a key."""
        want = set(expected)
        missing, extra = _sorted(want - set(self)), _sorted(set(self) - want)
        dups = _sorted(set(self.duplicates))
        ok = not (missing or extra or dups or self.unkeyed)
        msg = (f"{len(self)} keys: {len(missing)} missing, {len(extra)} unexpected, "
               f"{len(dups)} repeated, {self.unkeyed} rows without a key")
        seen = None if ok else {"missing": missing[:KEYS_SHOWN], "unexpected": extra[:KEYS_SHOWN],
                                "repeated": dups[:KEYS_SHOWN]}
        return Outcome(ok, f"one row for each of the {len(want)} keys" if ok else msg,
                       expected=f"{len(want)} keys", seen=seen)


def rows_by(rows: Iterable[Mapping[str, Any]] | None, key: Key) -> Keyed:
    """Index rows (from load_csv, say) by a column, a tuple of columns, or a function of the
    row. Text keys are stripped; a row whose key is missing, blank or unhashable (a function may
    return None, or raise KeyError, TypeError, ValueError, AttributeError or ArithmeticError, as
    int(float("inf")) does) counts as unkeyed."""
    keyed = Keyed()
    for row in rows or []:
        k = _key_of(row, key)
        if k is None:
            keyed.unkeyed += 1
        elif k in keyed:
            keyed.duplicates.append(k)
        else:
            keyed[k] = row
    return keyed


def _key_of(row: Any, key: Key) -> Any:
    if not isinstance(row, dict):
        return None
    if callable(key):
        try:
            k = key(row)
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError):
            return None
    elif isinstance(key, tuple):
        k = tuple(_clean(row.get(c)) for c in key)
        if all(part is None for part in k):
            return None
    else:
        k = _clean(row.get(key))
    try:
        hash(k)  # a key from JSON may be a list or an object
    except TypeError:
        return None
    return None if k is None or k == "" else k


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def match_rows(
    seen: Mapping[Any, Mapping[str, Any]] | None,
    ref: Mapping[Any, Mapping[str, Any]],
    fields: str | Sequence[str],
    *,
    rel: float = 0.0,
    abs: float = 0.0,
    exact: bool = False,
    text: bool = True,
    only: bool = False,
    show: int = 6,
) -> Outcome:
    """Every reference value ref[key][field] against seen[key][field], in one Outcome.

    Numbers pass within max(abs, rel * |expected|); text must be equal after stripping; an
    expected None means the cell must be empty. exact=True says no tolerance is meant (it
    cannot be combined with rel or abs). text=False refuses numbers written as text (for
    spreadsheet cells). only=True also fails rows of `seen` whose key is not in `ref`. The
    evidence lists the worst misses first: missing rows, values that cannot be compared,
    then numbers by how many tolerances they are off."""
    if exact and (rel or abs):
        raise ValueError("match_rows: exact=True takes no rel or abs tolerance")
    seen = seen or {}
    fields = [fields] if isinstance(fields, str) else list(fields)
    misses: list[tuple[tuple[int, float, int], dict[str, Any]]] = []  # (how bad, order), evidence
    total = values_off = rows_missing = 0
    for key, want_row in ref.items():
        row = seen.get(key)
        total += len(fields)
        if not isinstance(row, abc.Mapping):  # absent, or agent output that is not a row
            values_off += len(fields)
            rows_missing += 1
            what = "no row" if row is None else "not a row"
            misses.append(((_NO_ROW, 0.0, len(misses)), {"key": key, "seen": what}))
            continue
        for f in fields:
            want, got = want_row[f], row.get(f)
            badness = _miss(got, want, rel, abs, text)
            if badness is not None:
                values_off += 1
                misses.append(((badness[0], -badness[1], len(misses)),
                               {"key": key, "field": f, "expected": want, "seen": got}))
    extra = _sorted(k for k in seen if k not in ref) if only else []
    for k in extra:
        misses.append(((_NO_ROW, 0.0, len(misses)), {"key": k, "seen": "row not in the reference"}))
    tolerance = "exact" if not (rel or abs) else f"rel {rel:g}, abs {abs:g}"
    if not misses:
        return Outcome(True, f"all {total} values match ({tolerance})")
    parts = [f"{values_off} of {total} values differ ({tolerance})"]
    if rows_missing:
        parts.append(f"{rows_missing} rows missing")
    if extra:
        parts.append(f"{len(extra)} rows not in the reference")
    misses.sort(key=lambda m: m[0])
    return Outcome(False, "; ".join(parts), expected="reference values",
                   seen=[entry for _, entry in misses[:show]])


def _miss(got: Any, want: Any, rel: float, abs_tol: float, text: bool) -> tuple[int, float] | None:
    """None when got matches want, else (kind of miss, how many tolerances off)."""
    if want is None:
        return None if is_empty(got) else (_NOT_COMPARABLE, 0.0)
    if isinstance(want, str):
        ok = isinstance(got, (str, int, float)) and not isinstance(got, bool) and str(got).strip() == want
        return None if ok else (_NOT_COMPARABLE, 0.0)
    if isinstance(want, bool) or not isinstance(want, (int, float)):
        ok = got == want and isinstance(got, bool) == isinstance(want, bool)
        return None if ok else (_NOT_COMPARABLE, 0.0)
    value = as_number(got, text=text)
    if value is None:
        return (_NOT_COMPARABLE, 0.0)
    tol = max(abs_tol, rel * math.fabs(want))
    diff = math.fabs(value - want)
    if diff <= tol:
        return None
    return (_OFF, diff / tol if tol > 0 else diff)


def _sorted(keys: Iterable[Any]) -> list[Any]:
    keys = list(keys)
    try:
        return sorted(keys)
    except TypeError:  # keys of mixed types
        return sorted(keys, key=repr)
