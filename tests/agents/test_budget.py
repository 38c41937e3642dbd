"""A trial whose script would go past --max-tokens is stopped by the gateway, and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_json, trial_dir

from .conftest import CLIENTS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("agents_ready")]

SCRIPT = """
turns:
  - shell: echo step one
    usage: {input_tokens: 3000, output_tokens: 1000}
  - shell: echo step two
    usage: {input_tokens: 3000, output_tokens: 1000}
  - shell: |
      echo '{"total": 6.75, "count": 3}' > /task/output/result.json
  - text: Done.
"""


@pytest.mark.parametrize("agent", CLIENTS)
def test_gateway_stops_a_trial_over_its_token_budget(agent: str, tmp_path: Path) -> None:
    script = tmp_path / "budget.yaml"
    script.write_text(SCRIPT)
    out = tmp_path / "run"
    trial = run_json("run", COLUMN_TOTAL, "--agent", agent, "--model", f"scripted:{script}",
                     "--max-tokens", "6000", "--out", out)["trials"][0]
    assert trial["ended_by"] == "budget_exhausted"
    assert trial["status"] == "budget_exhausted"
    assert "token budget exhausted" in trial["error"] and "--max-tokens 6000" in trial["error"]
    usage = trial["gateway"]
    assert usage["model_calls"] == 2  # the third call, which would write the result, is refused
    assert usage["refused_calls"] >= 1
    assert usage["usage"]["input_tokens"] + usage["usage"]["output_tokens"] == 8000
    assert trial["score"] == 0.0  # graded as left: the result was never written
    folder = trial_dir(out, trial)
    calls = [json.loads(line) for line in (folder / "gateway.jsonl").read_text().splitlines()]
    refused = [c for c in calls if c["status"] == 400]
    assert refused and "budget is exhausted" in refused[0]["error"]
    traj = json.loads((folder / "trajectory.json").read_text())
    assert traj["final_metrics"]["extra"]["budget_exhausted"] == usage["budget_exhausted"]


def test_cost_budget_stops_a_priced_trial(tmp_path: Path) -> None:
    script = tmp_path / "priced.yaml"
    script.write_text("""
price_as: claude-sonnet-4-5
turns:
  - shell: echo one
    usage: {input_tokens: 100000, output_tokens: 10000}
  - shell: echo two
    usage: {input_tokens: 100000, output_tokens: 10000}
  - text: Done.
""")
    trial = run_json("run", COLUMN_TOTAL, "--agent", "lastexam-agent", "--model", f"scripted:{script}",
                     "--max-cost-usd", "0.5", "--out", tmp_path / "run")["trials"][0]
    # $0.45 a call (100k x $3 + 10k x $15 per million): the second call crosses $0.50
    assert trial["status"] == "budget_exhausted"
    assert "cost budget exhausted" in trial["error"]
    assert trial["gateway"]["cost_usd"] == pytest.approx(0.9)
    assert trial["gateway"]["model_calls"] == 2 and trial["gateway"]["refused_calls"] == 1
