"""Rubric: gates and weighted checks, each with evidence.

This module and the rest of `lastexam.grading` import only the standard library: they run
inside the grading sandbox under the task environment's python3, not the harness's.
"""

from __future__ import annotations

import json
import math

TYPE_CHECKING = False  # typing itself costs each grading's fresh Python an import
if TYPE_CHECKING:
    from typing import Any

EVIDENCE_MAX_CHARS = 600
# Plain slotted classes rather than dataclasses: every grading starts a fresh Python, and the
# dataclasses module (with inspect and typing) costs it several milliseconds to import.


class Outcome:
    """What a comparison found: passed or not, why, and the values compared."""

    __slots__ = ("expected", "message", "passed", "seen")

    def __init__(self, passed: bool, message: str = "", expected: Any = None, seen: Any = None):
        self.passed = passed
        self.message = message
        self.expected = expected
        self.seen = seen

    def __bool__(self) -> bool:
        return bool(self.passed)

    def __repr__(self) -> str:
        return f"Outcome(passed={self.passed!r}, message={self.message!r})"


class Check:
    __slots__ = ("evidence", "gate", "message", "name", "passed", "points", "weight")

    def __init__(self, name: str, weight: float, gate: bool, passed: bool, points: float,
                 message: str, evidence: dict[str, Any] | None = None):
        self.name = name
        self.weight = weight
        self.gate = gate
        self.passed = passed
        self.points = points
        self.message = message
        self.evidence = evidence if evidence is not None else {}

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in
                ("name", "weight", "gate", "passed", "points", "message", "evidence")}


def _jsonable(value: Any) -> Any:
    """Evidence must survive json.dumps and stay small: floats that are not finite become
    strings, containers are kept if short, anything else is shown by a clipped repr."""
    if value is None or isinstance(value, (bool, int, str)):
        return value if not isinstance(value, str) else value[:EVIDENCE_MAX_CHARS]
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    try:
        text = json.dumps(value, default=repr, allow_nan=False)
        if len(text) <= EVIDENCE_MAX_CHARS:
            return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep, or an int too long to print
        text = f"<{type(value).__name__} too deep or too long to show>"
    return text if len(text) <= EVIDENCE_MAX_CHARS else text[: EVIDENCE_MAX_CHARS - 3] + "..."


class Rubric:
    """Collects gates and checks in the order the grader states them.

    score = 0 if any gate failed, else sum(points) / sum(weights) over weighted checks.
    full pass iff every gate and every check passed.
    """

    def __init__(self) -> None:
        self.checks: list[Check] = []

    def _add(self, name: str, weight: float, gate: bool, outcome: Outcome | bool) -> bool:
        if not isinstance(outcome, Outcome):
            outcome = Outcome(bool(outcome))
        if weight < 0 or not math.isfinite(weight):
            raise ValueError(f"check {name!r}: weight must be a finite number >= 0")
        if any(c.name == name for c in self.checks):
            raise ValueError(f"check name {name!r} used twice in one rubric")
        passed = bool(outcome.passed)
        evidence = {}
        if outcome.expected is not None:
            evidence["expected"] = _jsonable(outcome.expected)
        if outcome.seen is not None:
            evidence["seen"] = _jsonable(outcome.seen)
        self.checks.append(
            Check(
                name=name,
                weight=float(weight),
                gate=gate,
                passed=passed,
                points=float(weight) if passed else 0.0,
                message=outcome.message[:EVIDENCE_MAX_CHARS],
                evidence=evidence,
            )
        )
        return passed

    def gate(self, name: str, outcome: Outcome | bool) -> bool:
        """A precondition: if it fails, the score is 0 whatever else passes."""
        return self._add(name, 0.0, True, outcome)

    def check(self, name: str, weight: float, outcome: Outcome | bool) -> bool:
        return self._add(name, weight, False, outcome)

    @property
    def score(self) -> float:
        return score_of(self.checks)

    @property
    def full_pass(self) -> bool:
        return full_pass_of(self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "full_pass": self.full_pass,
            "checks": [c.as_dict() for c in self.checks],
        }


def score_of(checks: list[Check]) -> float:
    if any(c.gate and not c.passed for c in checks):
        return 0.0
    total = sum(c.weight for c in checks if not c.gate)
    if total <= 0:
        return 0.0
    return round(sum(c.points for c in checks if not c.gate) / total, 6)


def full_pass_of(checks: list[Check]) -> bool:
    return bool(checks) and all(c.passed for c in checks) and any(not c.gate for c in checks)
