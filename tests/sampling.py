"""The per-client cases that CI samples: each case of a test marked `per_client` runs a real
agent client (or adapter) end to end, tens of seconds each. With LASTEXAM_TEST_SAMPLE=N, a test
keeps N of its cases, rotating every UTC day over all of them, unless a file that the cases
exercise changed since LASTEXAM_TEST_CHANGED_SINCE (a git revision): then it keeps them all.
Unset, every case runs (`scripts/test.sh --full`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lastexam.validation.manifest import rotating_sample, today

SAMPLE = "LASTEXAM_TEST_SAMPLE"
CHANGED_SINCE = "LASTEXAM_TEST_CHANGED_SINCE"
# What the per-client cases exercise: a change here runs every case.
WATCHED = ("src/lastexam/agents", "src/lastexam/computer", "src/lastexam/desktop",
           "src/lastexam/gateway", "src/lastexam/trajectory", "src/lastexam/run",
           "src/lastexam/sandbox", "src/lastexam/usage", "src/lastexam/layout.py",
           "tests/agents", "tests/conftest.py", "tests/sampling.py")


def _watched_changed(root: Path) -> bool:
    since = os.environ.get(CHANGED_SINCE)
    if not since:
        return True
    try:
        proc = subprocess.run(["git", "-C", str(root), "diff", "--name-only", since, "--", *WATCHED],
                              capture_output=True, text=True, check=False)
    except OSError:  # no git: unknown, as if changed
        return True
    return proc.returncode != 0 or bool(proc.stdout.strip())  # unknown: as if changed


def sample_per_client(config: pytest.Config, items: list[pytest.Item], root: Path) -> None:
    n = os.environ.get(SAMPLE)
    if not n:
        return
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("per_client") and hasattr(item, "callspec"):
            groups.setdefault(f"{item.path}::{item.originalname}", []).append(item)
    if not groups or _watched_changed(root):
        return
    dropped = []
    for cases in groups.values():
        kept = set(rotating_sample([c.callspec.id for c in cases], int(n), today()))
        dropped += [c for c in cases if c.callspec.id not in kept]
    if dropped:
        gone = set(map(id, dropped))
        items[:] = [i for i in items if id(i) not in gone]
        config.hook.pytest_deselected(items=dropped)
