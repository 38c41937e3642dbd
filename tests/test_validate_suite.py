"""benchmarks/validate_suite.py: validation seconds per task and gate kind, from a manifest or
from `lastexam validate --json`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from lastexam.validation.manifest import Manifest, ManifestEntry, save_manifest

SCRIPT = ROOT / "benchmarks" / "validate_suite.py"


def _module():
    spec = importlib.util.spec_from_file_location("validate_suite", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["validate_suite"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


SLOW = {"schema and taxonomy": 0.5, "oracle scores 1.0": 301.0, "nop scores 0": 1.0,
        "negative fixture a": 2.0, "negative fixture b": 3.0, "positive fixture c": 4.0,
        "grading is deterministic": 5.0, "malformed outputs": 6.0,
        "generate.py reproduces inputs and reference": 7.0,
        "reproducible under other BLAS kernels": 8.0}


def _manifest(path: Path) -> Path:
    entry = {"key": "0" * 64, "gates": list(SLOW), "date": "2026-12-03", "commit": "abc"}
    fast = {"oracle scores 1.0": 10.0, "generate.py reproduces inputs and reference": 121.0}
    save_manifest(Manifest(tasks={"slow-oracle": ManifestEntry(seconds=SLOW, **entry),
                                  "slow-generator": ManifestEntry(seconds=fast, **entry)}), path)
    return path


def test_seconds_are_summed_per_gate_kind_and_the_budget_is_flagged(tmp_path: Path) -> None:
    vs = _module()
    rows = {r.task: r for r in vs.from_manifest(_manifest(tmp_path / "m.json"))}
    slow = rows["slow-oracle"]
    assert slow.by_kind == {"oracle": 301.0, "nop": 1.0, "negative": 5.0, "positive": 4.0,
                            "determinism": 5.0, "malformed": 6.0, "generate": 7.0, "blas": 8.0,
                            "other": 0.5}
    assert slow.total == sum(SLOW.values())
    assert slow.over_budget() == ["oracle 301 s > 300 s"]
    assert rows["slow-generator"].over_budget() == ["generate 121 s > 120 s"]


def test_a_fresh_run_is_read_from_the_json_of_lastexam_validate() -> None:
    vs = _module()
    data = {"tasks": [{"task": "t", "passed": False, "gates": [
        {"name": "oracle scores 1.0", "seconds": 2.5}, {"name": "negative fixture x", "seconds": 1.5}]}]}
    (row,) = vs.from_validate_json(data)
    assert (row.task, row.passed, row.by_kind["oracle"], row.by_kind["negative"]) == ("t", False, 2.5, 1.5)


def test_the_table_ends_with_the_suite_total(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, SCRIPT, "--manifest", _manifest(tmp_path / "m.json"), "--markdown"],
                          capture_output=True, text=True, check=True)
    last = done.stdout.strip().splitlines()[-1]
    total = sum(SLOW.values()) + 10.0 + 121.0
    assert last.startswith("| all 2 tasks |") and f"| {total:.1f} |" in last
