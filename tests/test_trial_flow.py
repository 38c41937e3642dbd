"""docs/trial-flow.md names real code: every `module:attribute` in it exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from conftest import ROOT

DOC = ROOT / "docs" / "trial-flow.md"
REFERENCE = re.compile(r"`(lastexam(?:\.\w+)*):(\w+(?:\.\w+)*)`")


def missing_references(text: str) -> tuple[int, list[str]]:
    found = REFERENCE.findall(text)
    missing = []
    for module, attr in found:
        try:
            obj: object = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            missing.append(f"{module}:{attr}")
    return len(found), missing


def test_every_hop_names_existing_code() -> None:
    count, missing = missing_references(DOC.read_text())
    assert count >= 40 and missing == []


def test_a_stale_name_is_caught(tmp_path: Path) -> None:
    count, missing = missing_references(
        "`lastexam.run.trial:TrialRunner.run` `lastexam.run.trial:TrialRunner.gone` `lastexam.nope:x`"
    )
    assert count == 3 and missing == ["lastexam.run.trial:TrialRunner.gone", "lastexam.nope:x"]
