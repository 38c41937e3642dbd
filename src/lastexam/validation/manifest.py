"""tasks/validation-manifest.json: which tasks passed every gate, for which content.

Each task's key is a sha256 over its folder, its environment's toml and lock, and the grading
library, so that changing any of them invalidates the entry; so does a gate kind added since
the entry was recorded. `lastexam validate --changed` runs the sandboxed gates only on tasks
whose entry is not current."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lastexam.errors import LastexamError, describe_validation_error
from lastexam.paths import package_dir, project_root
from lastexam.validation.selection import ALL_GATES

MANIFEST_NAME = "validation-manifest.json"


class ManifestEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(pattern=r"^[0-9a-f]{64}$")
    passed: bool = True
    kinds: list[str] = []  # the gate kinds run (selection names); absent in older entries
    gates: list[str]
    seconds: dict[str, float]
    date: str
    commit: str

    def current(self, key: str) -> bool:
        """Recorded for this key, with every gate kind there is now."""
        return self.key == key and set(self.kinds) >= ALL_GATES.names


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: dict[str, ManifestEntry] = {}


def default_manifest_path() -> Path:
    return project_root() / "tasks" / MANIFEST_NAME


def load_manifest(path: Path) -> Manifest:
    if not path.is_file():
        return Manifest()
    try:
        return Manifest.model_validate(json.loads(path.read_text()))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LastexamError(f"not valid JSON ({e}); fix it or delete it and rerun with --record",
                            path=path) from None
    except ValidationError as e:
        raise LastexamError(describe_validation_error(e), path=path) from None


def save_manifest(manifest: Manifest, path: Path) -> None:
    """One line per task, sorted: a task's change is a one-line diff."""
    lines = [f"  {json.dumps(t)}: {json.dumps(manifest.tasks[t].model_dump(), sort_keys=True)}"
             for t in sorted(manifest.tasks)]
    body = "{\n" + ",\n".join(lines) + "\n }" if lines else "{}"
    path.write_text('{\n "tasks": ' + body + "\n}\n")


def _add_tree(h: hashlib._Hash, label: str, root: Path, pattern: str = "*") -> None:
    for p in sorted(root.rglob(pattern)):
        if "__pycache__" in p.parts or not p.is_file():
            continue
        h.update(f"{label}/{p.relative_to(root).as_posix()}\0".encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())


def task_key(task_path: Path, env_toml: Path) -> str:
    """sha256 over the task folder, environments/<env>.toml and .lock.txt, and lastexam.grading."""
    h = hashlib.sha256()
    _add_tree(h, "task", task_path)
    for p in (env_toml, env_toml.with_suffix(".lock.txt")):
        h.update(f"env/{p.name}\0".encode())
        h.update(hashlib.sha256(p.read_bytes()).digest() if p.is_file() else b"absent")
    _add_tree(h, "grading", package_dir() / "grading", "*.py")
    return h.hexdigest()


def current_commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=package_dir(),
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def rotating_sample(task_ids: list[str], n: int, day: dt.date) -> list[str]:
    """n of the task ids, sorted, from an offset that moves by n every UTC day."""
    ids = sorted(task_ids)
    if n <= 0 or not ids:
        return []
    start = (day.toordinal() * n) % len(ids)
    return [ids[(start + i) % len(ids)] for i in range(min(n, len(ids)))]
