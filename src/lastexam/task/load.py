"""Find task folders and load them into Task objects, with errors that name file and field."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from lastexam.config_file import load_model
from lastexam.errors import LastexamError
from lastexam.task.spec import TaskSpec

TASK_FILE = "task.toml"


@dataclass(frozen=True)
class Task:
    """A task folder on disk:

    tasks/<cluster>/<id>/
        task.toml            metadata (TaskSpec)
        instruction.md       all the agent is told
        inputs/              staged at /task/inputs
        reference/           hidden; only the grading sandbox sees it
        grader.py            def grade(ctx) -> Rubric
        solution/solve.sh    the oracle; writes /task/output
        fixtures/negative/<name>/fixture.toml + output/
        generate.py          optional seeded generator of inputs/ and reference/
    """

    path: Path
    spec: TaskSpec

    sealed: ClassVar[bool] = False  # a task of a sealed pool (pool/sealed.py)
    private: ClassVar[bool] = False  # its score is a private one (not yet released)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def instruction(self) -> Path:
        return self.path / "instruction.md"

    @property
    def inputs_dir(self) -> Path:
        return self.path / "inputs"

    @property
    def reference_dir(self) -> Path:
        return self.path / "reference"

    @property
    def grader(self) -> Path:
        return self.path / "grader.py"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"

    @property
    def negative_fixtures_dir(self) -> Path:
        return self.path / "fixtures" / "negative"

    @property
    def fixtures_lib_dir(self) -> Path:
        """Code the make.sh of the task's fixtures share (docs/task-format.md)."""
        return self.path / "fixtures" / "lib"

    @property
    def generator(self) -> Path:
        return self.path / "generate.py"

    @cached_property
    def content_hash(self) -> str:
        """sha256 over every file of the task folder (paths and bytes)."""
        return tree_hash(self.path)

    @cached_property
    def input_hashes(self) -> dict[str, str]:
        """sha256 of each pristine input, by path relative to inputs/."""
        return {
            p.relative_to(self.inputs_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.inputs_dir.rglob("*")) if p.is_file()
        }

    @property
    def input_sizes(self) -> dict[str, int]:
        return {p.relative_to(self.inputs_dir).as_posix(): p.stat().st_size
                for p in sorted(self.inputs_dir.rglob("*")) if p.is_file()}

    @cached_property
    def uses_probes(self) -> bool:
        """The grader asks model probes (grading/probe.py): a run needs a probe model."""
        try:
            return ".probe(" in self.grader.read_text(errors="replace")
        except OSError:
            return False

    @cached_property
    def grader_hash(self) -> str:
        """The grader version: the grader and its reference, nothing the agent could change."""
        h = hashlib.sha256()
        h.update(self.grader.read_bytes() if self.grader.is_file() else b"")
        h.update(tree_hash(self.reference_dir).encode())
        return h.hexdigest()


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    if root.is_dir():
        for p in sorted(root.rglob("*")):
            if "__pycache__" in p.parts or not p.is_file():
                continue
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def load_task(path: Path) -> Task:
    path = Path(path)
    toml_path = path / TASK_FILE
    if not toml_path.is_file():
        raise LastexamError("no task.toml here: not a task folder", path=path)
    spec = load_model(toml_path, TaskSpec, what="task.toml")
    if path.resolve().name != spec.id:
        raise LastexamError(
            f"id {spec.id!r} must equal the task folder name {path.resolve().name!r}",
            path=toml_path,
            field="id",
        )
    return Task(path=path.resolve(), spec=spec)


def discover_tasks(paths: list[Path], identity: Any = None, day: Any = None) -> list[Task]:
    """Each path is a task folder, a folder searched for task folders, a .txt list of paths,
    or a sealed pool (a folder with pool.toml, opened with the identity, its tasks private or
    public as on `day`, the run's first: pool/sealed.py)."""
    found: list[Path | Task] = []
    for p in paths:
        p = Path(p)
        if (p / "pool.toml").is_file():
            from lastexam.pool.sealed import load_pool

            found.extend(load_pool(p, identity, day))
        elif p.suffix == ".txt" and p.is_file():
            lines = [ln.split("#", 1)[0].strip() for ln in p.read_text().splitlines()]
            found.extend(expand(p.parent / ln) for ln in lines if ln)
        elif not p.exists():
            raise LastexamError("no such task folder or list", path=p)
        else:
            found.append(expand(p))
    tasks: list[Task] = []
    seen: dict[str, Path] = {}
    for item in (f for group in found for f in (group if isinstance(group, list) else [group])):
        task = item if isinstance(item, Task) else load_task(item)
        folder = task.path
        if task.id in seen and seen[task.id] != task.path:
            raise LastexamError(f"task id {task.id!r} also used by {seen[task.id]}", path=folder)
        if task.id not in seen:
            seen[task.id] = task.path
            tasks.append(task)
    return tasks


def expand(p: Path) -> list[Path]:
    if not p.exists():
        raise LastexamError("no such task folder", path=p)
    if (p / TASK_FILE).is_file():
        return [p]
    hits = sorted(t.parent for t in p.rglob(TASK_FILE) if "fixtures" not in t.parts)
    if not hits:
        raise LastexamError("no task folders (with task.toml) under this path", path=p)
    return hits
