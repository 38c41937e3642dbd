"""Many outcomes, or a list of problems, made into the one Outcome a check records."""

from __future__ import annotations

from lastexam.grading.rubric import Outcome

TYPE_CHECKING = False  # typing itself costs each grading's fresh Python an import
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    Part = Outcome | bool | tuple[str, Outcome | bool]

MESSAGES_SHOWN = 3


def all_of(parts: Iterable[Part] | Mapping[str, Outcome | bool], *, show: int = 4) -> Outcome:
    """Passes when every part passes. Parts are Outcomes (or bools), each optionally labelled:
    a list of (label, outcome) pairs or a dict label -> outcome. The message names the failed
    parts; the evidence holds the expected and seen values of the first `show` of them, by
    label. Nothing to combine is a failure: an empty list usually means a missing table."""
    items = list(parts.items()) if isinstance(parts, dict) else list(parts)
    labelled: list[tuple[str, Outcome]] = []
    for i, part in enumerate(items, start=1):
        label, outcome = part if isinstance(part, tuple) else (f"#{i}", part)
        labelled.append((str(label), outcome if isinstance(outcome, Outcome) else Outcome(bool(outcome))))
    if not labelled:
        return Outcome(False, "nothing to check")
    failed = [(label, o) for label, o in labelled if not o.passed]
    if not failed:
        return Outcome(True, f"all {len(labelled)} passed")
    reasons = "; ".join(f"{label}: {o.message}" if o.message else label for label, o in failed[:MESSAGES_SHOWN])
    more = ", ..." if len(failed) > MESSAGES_SHOWN else ""
    return Outcome(
        False,
        f"{len(failed)} of {len(labelled)} failed: {reasons}{more}",
        expected={label: o.expected for label, o in failed[:show]},
        seen={label: o.seen for label, o in failed[:show]},
    )


def no_problems(problems: list[Any], ok: str, *, expected: Any = None, show: int = 6) -> Outcome:
    """Passes when a grader's own list of problems found is empty; the first `show` are the
    evidence. `ok` is the message when there are none."""
    if not problems:
        return Outcome(True, ok, expected=expected)
    return Outcome(False, f"{len(problems)} problem(s)", expected=expected, seen=problems[:show])
