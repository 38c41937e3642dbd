"""The daily sample of per-client cases (tests/sampling.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sampling import CHANGED_SINCE, SAMPLE, sample_per_client

from conftest import ROOT


@dataclass
class Spec:
    id: str


@dataclass
class Item:
    originalname: str
    case: str
    marked: bool = True
    path: Path = Path("tests/agents/test_x.py")
    callspec: Spec = field(init=False)

    def __post_init__(self) -> None:
        self.callspec = Spec(self.case)

    def get_closest_marker(self, name: str) -> object | None:
        return object() if self.marked and name == "per_client" else None


class Config:
    def __init__(self) -> None:
        self.deselected: list = []
        self.hook = self

    def pytest_deselected(self, items: list) -> None:
        self.deselected += items


def _items() -> list:
    return ([Item("test_a", c) for c in "pqrstu"] + [Item("test_b", c) for c in "xyz"]
            + [Item("test_c", c, marked=False) for c in "mn"])


def test_unchanged_code_keeps_n_cases_per_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SAMPLE, "2")
    monkeypatch.setattr("sampling._watched_changed", lambda root: False)
    items, config = _items(), Config()
    sample_per_client(config, items, ROOT)
    kept = [(i.originalname, i.case) for i in items]
    assert sum(n == "test_a" for n, _ in kept) == 2 and sum(n == "test_b" for n, _ in kept) == 2
    assert ("test_c", "m") in kept and ("test_c", "n") in kept  # unmarked: never sampled
    assert len(config.deselected) == 4 + 1


def test_changed_code_or_no_sample_keeps_every_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SAMPLE, "2")
    monkeypatch.setattr("sampling._watched_changed", lambda root: True)
    items = _items()
    sample_per_client(Config(), items, ROOT)
    assert len(items) == 11
    monkeypatch.delenv(SAMPLE)
    monkeypatch.setattr("sampling._watched_changed", lambda root: False)
    sample_per_client(Config(), items, ROOT)
    assert len(items) == 11


def test_a_change_under_a_watched_folder_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    from sampling import _watched_changed

    monkeypatch.delenv(CHANGED_SINCE, raising=False)
    assert _watched_changed(ROOT)  # no revision to compare with: as if changed
    monkeypatch.setenv(CHANGED_SINCE, "no-such-revision-xyz")
    assert _watched_changed(ROOT)  # git fails: as if changed
    first = _first_commit_touching("src/lastexam/agents")
    monkeypatch.setenv(CHANGED_SINCE, f"{first}~1")
    assert _watched_changed(ROOT)


def _first_commit_touching(path: str) -> str:
    import subprocess

    out = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%H", "-1", "--", path],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out
    return out
