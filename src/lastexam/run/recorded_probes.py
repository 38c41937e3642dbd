"""A task's recorded probe answers (`probes.json` in the task folder): what the probe model
answered, once, for each question its grader asks about the oracle's output, the fixtures and
the malformed outputs. Every run and every validation replays them for their exact question and
excerpt, so that validation and the calibration agents need no model and give the same result
every time; `validate --probe-model M` asks only the questions not recorded yet and adds their
answers to the file (review them, then commit it with the task)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from lastexam.errors import LastexamError
from lastexam.grading.probe import PROBES_CHECK
from lastexam.store.models import GradeRecord
from lastexam.task.load import Task

PROBES_FILE = "probes.json"


def load_recorded(task: Task) -> dict[str, dict[str, Any]]:
    path = task.path / PROBES_FILE
    if task.sealed:
        sealed = task.part_files("hidden").get(PROBES_FILE)
        if sealed is None:
            return {}
        text = sealed[0].decode("utf-8", errors="replace")
    elif not path.is_file():
        return {}
    else:
        text = path.read_text()
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise LastexamError(f"not valid JSON: {e}", path=path) from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("answer"), bool)
        for k, v in data.items()
    ):
        raise LastexamError("must map each probe key to an object with a boolean 'answer'", path=path)
    return data


def answered_in(grade: GradeRecord | None) -> dict[str, dict[str, Any]]:
    """The probes a grading asked with their answers, as probes.json holds them."""
    if grade is None:
        return {}
    for check in grade.checks:
        if check.name == PROBES_CHECK:
            return {p["key"]: {k: p.get(k) for k in ("answer", "model", "raw", "question", "excerpt")}
                    for p in check.evidence.get("probes", [])
                    if isinstance(p, dict) and isinstance(p.get("answer"), bool)}
    return {}


class RecordedProbes:
    """Each task's recorded answers, loaded once, shared by its gradings (which run in
    threads), and written back when a probe model answered new ones."""

    def __init__(self) -> None:
        self._by_task: dict[str, dict[str, dict[str, Any]]] = {}
        self._new: set[str] = set()
        self._lock = threading.Lock()

    def of(self, task: Task) -> dict[str, dict[str, Any]]:
        with self._lock:
            if task.id not in self._by_task:
                self._by_task[task.id] = load_recorded(task)
            return dict(self._by_task[task.id])

    def add(self, task: Task, grade: GradeRecord | None) -> None:
        found = answered_in(grade)
        with self._lock:
            known = self._by_task.setdefault(task.id, {})
            for key, answer in found.items():
                if key not in known:
                    known[key] = answer
                    self._new.add(task.id)

    def save(self, task: Task) -> Path | None:
        with self._lock:
            if task.id not in self._new or task.sealed:  # a sealed task's file is in its bundle
                return None
            path = task.path / PROBES_FILE
            path.write_text(json.dumps(self._by_task[task.id], indent=1, sort_keys=True) + "\n")
            self._new.discard(task.id)
            return path
