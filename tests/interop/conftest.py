"""The Harbor venv (scripts/harbor-venv.sh) the Harbor interop tests run Harbor's own code in,
and a tmp_path that folders nested past the recursion limit can be left in."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT
from lastexam.untrusted import remove_tree

HARBOR_CHECK = Path(__file__).resolve().parent / "harbor_check.py"


def harbor_python() -> Path | None:
    given = os.environ.get("LASTEXAM_HARBOR_PYTHON")
    path = Path(given) if given else ROOT / ".venv-harbor" / "bin" / "python"
    return path if path.exists() else None


@pytest.fixture(scope="session")
def harbor() -> Path:
    python = harbor_python()
    if python is None:
        why = "no Harbor venv: run scripts/harbor-venv.sh (needs a Python 3.12+)"
        if os.environ.get("CI") == "true":  # CI's machines have one: missing there is a failure
            pytest.fail(why)
        pytest.skip(why)
    return python


def harbor_read(python: Path, kind: str, *paths: Path) -> dict:
    """What Harbor's own models read from task folders or trajectory files."""
    proc = subprocess.run([str(python), str(HARBOR_CHECK), kind, *map(str, paths)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture
def deep_tmp(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, removed after the test by lastexam's remove_tree: pytest's own cleanup recurses
    and crashes on folders nested past the recursion limit."""
    yield tmp_path
    remove_tree(tmp_path)
