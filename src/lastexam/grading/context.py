"""What a grader is given: where the outputs, reference and inputs are, inside the grading sandbox."""

from __future__ import annotations

import json
from pathlib import Path

TYPE_CHECKING = False  # typing itself costs each grading's fresh Python an import
if TYPE_CHECKING:
    from typing import Any


class GradeContext:
    """Paths inside the grading sandbox (a plain class: see rubric.py on import cost)."""

    __slots__ = ("canary", "inputs", "inputs_after", "inputs_pristine", "output", "probe_answers",
                 "probes", "reference", "scratch", "task")

    def __init__(self, output: Path, reference: Path, inputs: Path, task: Path, scratch: Path,
                 canary: str = "", inputs_after: dict[str, str] | None = None,
                 inputs_pristine: dict[str, str] | None = None,
                 probe_answers: dict[str, dict[str, Any]] | None = None):
        self.output = output  # snapshot of the agent's /task/output, read-only
        self.reference = reference  # the task's hidden reference/, read-only
        self.inputs = inputs  # the task's pristine inputs/, read-only
        self.task = task  # the task folder (grader.py, task.toml), read-only
        self.scratch = scratch  # writable, empty, discarded after grading
        self.canary = canary
        # The agent's inputs/ after the run: relative path -> sha256, "missing" or "not-regular".
        self.inputs_after = inputs_after if inputs_after is not None else {}
        # sha256 of each pristine input, when the harness computed them (None: hash inputs/)
        self.inputs_pristine = inputs_pristine
        # Answers the host recorded for model probes, by probe key (grading/probe.py).
        self.probe_answers = probe_answers if probe_answers is not None else {}
        self.probes: list[dict[str, Any]] = []  # the probes this grading asked, in order

    def out(self, relpath: str) -> Path:
        return self.output / relpath

    def ref(self, relpath: str) -> Path:
        return self.reference / relpath

    def probe(self, question: str, excerpt: str) -> Any:
        """A narrow yes/no question to a model about a quoted excerpt of the deliverable, for
        what no code can decide: an Outcome that passes on "yes" (grading/probe.py)."""
        from lastexam.grading.probe import ask

        return ask(self.probe_answers, self.probes, question, excerpt)

    def reference_json(self, relpath: str) -> Any:
        """The reference is trusted: if it does not parse, that is a grader error and raises."""
        return json.loads((self.reference / relpath).read_text(encoding="utf-8"))

    def to_json(self) -> dict[str, Any]:
        """What the host writes to context.json; from_json reads it back in the sandbox."""
        return {
            **{k: str(getattr(self, k)) for k in _PATHS},
            "canary": self.canary,
            "inputs_after": self.inputs_after,
            "inputs_pristine": self.inputs_pristine,
            "probe_answers": self.probe_answers,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradeContext:
        paths = {k: Path(data[k]) for k in _PATHS}
        return cls(
            **paths, canary=data.get("canary", ""), inputs_after=data.get("inputs_after", {}),
            inputs_pristine=data.get("inputs_pristine"), probe_answers=data.get("probe_answers"),
        )


_PATHS = ("output", "reference", "inputs", "task", "scratch")
