"""Inspect interop: `lastexam/suite` through Inspect's entry point, each sample in the
"lastexam" sandbox, scored by the task's grader. The mock model does nothing (score 0, every
check in the score's metadata); the oracle solver, run by `inspect eval`, scores 1.0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, ROOT

inspect_ai = pytest.importorskip("inspect_ai", reason="the [interop] extra is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402
from inspect_ai.util import sandbox  # noqa: E402

from lastexam.paths import lastexam_home  # noqa: E402

pytestmark = pytest.mark.usefixtures("base_env_ready")
GRADER_CHECKS = ["inputs untampered", "result.json parses as a JSON object", "total", "count"]


def _mock_model():
    # Usage given: Inspect's mock model otherwise counts tokens with tiktoken, whose encoding
    # it downloads (no network here).
    out = ModelOutput.from_content(model="mockllm/model", content="I did nothing.")
    out.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
    return get_model("mockllm/model", custom_outputs=[out])


def _eval(tmp_path: Path, **kw):
    (log,) = inspect_eval("lastexam/suite", task_args={"tasks": str(COLUMN_TOTAL)},
                          model=_mock_model(), log_dir=str(tmp_path / "logs"), display="none", **kw)
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def _no_work_left() -> None:
    work = lastexam_home() / "work"
    assert not [p for p in work.glob("inspect-*")] if work.is_dir() else True


def test_mock_model_scores_zero_with_every_check(tmp_path: Path) -> None:
    log = _eval(tmp_path)
    (sample,) = log.samples
    assert sample.id == "column-total" and "# Column total" in sample.input
    assert {k: sample.metadata[k] for k in ("task_id", "tier", "cluster")} == \
        {"task_id": "column-total", "tier": "near-term", "cluster": "other"}
    score = sample.scores["lastexam_grader"]
    assert score.value == 0.0 and score.metadata["full_pass"] is False
    checks = score.metadata["checks"]
    assert [c["name"] for c in checks] == GRADER_CHECKS
    assert next(c for c in checks if c["name"] == "total")["evidence"]["expected"] == 6.75
    _no_work_left()


def test_the_oracle_through_inspect_eval_scores_one(tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "lastexam/suite",
         "-T", f"tasks={COLUMN_TOTAL}", "--solver", "lastexam/oracle", "--model", "mockllm/model",
         "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    (sample,) = log.samples
    score = sample.scores["lastexam_grader"]
    assert score.value == 1.0 and score.metadata["full_pass"] is True
    assert all(c["passed"] for c in score.metadata["checks"])
    assert log.results.scores[0].metrics["mean"].value == 1.0
    _no_work_left()


@solver
def _probe_sandbox():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        box, seen = sandbox(), {}
        await box.write_file("output/sub/data.bin", b"\x00\xff binary")
        seen["read"] = (await box.read_file("/task/output/sub/data.bin", text=False)).hex()
        ran = await box.exec(["sh", "-c", "cat; pwd; id -un"], input="piped\n", cwd="output")
        seen["exec"] = (ran.returncode, ran.stdout)
        await box.write_file("/home/agent/note.txt", "kept")
        seen["home"] = (await box.exec(["cat", "/home/agent/note.txt"])).stdout
        seen["fail"] = (await box.exec(["sh", "-c", "echo oops >&2; exit 3"])).returncode
        for name, call in (("missing", box.read_file("/task/output/none.txt")),
                           ("readonly", box.write_file("/task/instruction.md", "x")),
                           ("timeout", box.exec(["sleep", "30"], timeout=1))):
            try:
                await call
                seen[name] = "no error"
            except (OSError, TimeoutError) as e:  # Inspect may wrap them in subclasses
                seen[name] = next(k.__name__ for k in (FileNotFoundError, PermissionError, TimeoutError)
                                  if isinstance(e, k))
        state.metadata["seen"] = seen
        return state

    return solve


def test_the_sandbox_reads_writes_and_runs_in_the_workspace(tmp_path: Path) -> None:
    (sample,) = _eval(tmp_path, solver=_probe_sandbox()).samples
    seen = sample.metadata["seen"]
    assert seen["read"] == b"\x00\xff binary".hex()
    assert seen["exec"] == [0, "piped\n/task/output\nagent\n"]
    assert seen["home"] == "kept" and seen["fail"] == 3
    assert (seen["missing"], seen["readonly"], seen["timeout"]) == \
        ("FileNotFoundError", "PermissionError", "TimeoutError")
    # The files it left are graded: data.bin is no result.json.
    assert sample.scores["lastexam_grader"].value == 0.0


def test_the_entry_point_names_the_registry_module() -> None:
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="inspect_ai") if e.name == "lastexam"]
    assert ep.value == "lastexam.interop.inspect_registry"
    assert (ROOT / "src" / "lastexam" / "interop" / "inspect_registry.py").is_file()
