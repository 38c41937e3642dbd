"""What a grader is given: where the outputs, reference and inputs are, inside the grading sandbox."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GradeContext:
    output: Path  # snapshot of the agent's /task/output, read-only
    reference: Path  # the task's hidden reference/, read-only
    inputs: Path  # the task's pristine inputs/, read-only
    task: Path  # the task folder (grader.py, task.toml), read-only
    scratch: Path  # writable, empty, discarded after grading
    canary: str = ""
    # The agent's inputs/ after the run: relative path -> sha256, "missing" or "not-regular".
    inputs_after: dict[str, str] = field(default_factory=dict)

    def out(self, relpath: str) -> Path:
        return self.output / relpath

    def ref(self, relpath: str) -> Path:
        return self.reference / relpath

    def reference_json(self, relpath: str) -> Any:
        """The reference is trusted: if it does not parse, that is a grader error and raises."""
        return json.loads((self.reference / relpath).read_text(encoding="utf-8"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradeContext:
        paths = {k: Path(data[k]) for k in ("output", "reference", "inputs", "task", "scratch")}
        return cls(
            **paths, canary=data.get("canary", ""), inputs_after=data.get("inputs_after", {})
        )
