"""Option parsing shared by commands."""

from __future__ import annotations

from pathlib import Path

from lastexam.errors import LastexamError


def parse_kv(pairs: list[str], flag: str) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LastexamError(f"{flag} {pair!r}: expected KEY=VALUE")
        result[key] = value
    return result


def task_paths(paths: list[Path] | None) -> list[Path]:
    if paths:
        return paths
    from lastexam.paths import default_tasks_dir

    tasks = default_tasks_dir()
    if not tasks.is_dir():
        raise LastexamError("no task paths given and no tasks/ folder found", path=tasks)
    return [tasks]
