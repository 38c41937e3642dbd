"""The verifier of an exported Harbor task (tests/verify.py) grades what the agent left in
/task/output as lastexam grades it: regular files only. In Harbor the agent shares the
verifier's container, where /tests (the reference with it) appears only once the agent is
done: a link it leaves in /task/output to a file under /tests must not be read as its work."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

from conftest import COLUMN_TOTAL, run_cli
from lastexam.task.load import load_task
from tests.interop.test_harbor_hostile import _nested


def _verify(tests: Path, output: Path, tmp: Path) -> dict:
    """tests/verify.py of the exported task, on `output`, as Harbor runs it after the agent."""
    spec = importlib.util.spec_from_file_location("exported_verify", tests / "verify.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    inputs = tmp / "inputs"
    shutil.copytree(tests / "task" / "inputs", inputs)
    logs = tmp / "logs"
    module.main(output=output, inputs=inputs, logs=logs)
    return json.loads((logs / "reward.json").read_text())


def test_a_link_to_the_reference_is_not_the_agents_work(tmp_path: Path) -> None:
    run_cli("export", "harbor", COLUMN_TOTAL, "--out", tmp_path / "harbor")
    tests = tmp_path / "harbor" / load_task(COLUMN_TOTAL).id / "tests"
    honest, linked = tmp_path / "honest", tmp_path / "linked"
    honest.mkdir()
    shutil.copy(COLUMN_TOTAL / "reference" / "expected.json", honest / "result.json")
    linked.mkdir()
    (linked / "result.json").symlink_to(tests / "task" / "reference" / "expected.json")
    assert _verify(tests, honest, tmp_path / "a")["reward"] == 1.0
    assert _verify(tests, linked, tmp_path / "b")["reward"] == 0.0


def test_folders_nested_past_the_recursion_limit_are_left_out(deep_tmp: Path) -> None:
    tmp_path = deep_tmp
    run_cli("export", "harbor", COLUMN_TOTAL, "--out", tmp_path / "harbor")
    tests = tmp_path / "harbor" / load_task(COLUMN_TOTAL).id / "tests"
    output = tmp_path / "output"
    output.mkdir()
    shutil.copy(COLUMN_TOTAL / "reference" / "expected.json", output / "result.json")
    _nested(output, 1500)
    assert _verify(tests, output, tmp_path / "a")["reward"] == 1.0
