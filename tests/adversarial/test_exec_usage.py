"""Each real client, driven by a scripted model, imports the software its task declares and
then tries to remove the exec log: the use is seen, and the log cannot be removed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_cli, run_json, trial_dir

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("base_env_ready")]

NPM_AGENTS = ("claude-code", "codex", "gemini-cli")
SCRIPT = """
turns:
  - shell: |
      python3 -c 'import pandas; print("pandas", pandas.__version__)' && echo '{"total": 6.75, "count": 3}' > /task/output/result.json
  - shell: |
      rm -f /run/lastexam/exec/* 2>&1; mv /run/lastexam/exec/exec.fifo /tmp/x 2>&1; echo tried
  - text: Done.
"""


@pytest.fixture(scope="module")
def pandas_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """column-total in an environment with pandas, declaring pandas as its software."""
    task = tmp_path_factory.mktemp("tasks") / "other" / "pandas-total"
    shutil.copytree(COLUMN_TOTAL, task)
    toml = task / "task.toml"
    lines = []
    for line in toml.read_text().splitlines():
        if line.startswith("id = "):
            line = 'id = "pandas-total"'
        elif line.startswith("software = "):
            line = 'software = ["pandas"]'
        elif line.startswith("environment = "):
            line = 'environment = "econ"'
        lines.append(line)
    toml.write_text("\n".join(lines) + "\n")
    if run_cli("env", "check", "econ", check=False).returncode != 0:
        pytest.skip("the econ environment (pandas) is not installed")
    return task


@pytest.mark.parametrize("agent", ("lastexam-agent", *NPM_AGENTS))
def test_client_use_of_declared_software_is_seen(agent: str, pandas_task: Path, tmp_path: Path) -> None:
    if agent in NPM_AGENTS:
        run_cli("agents", "install", agent, timeout=1800)
    script = tmp_path / "pandas.yaml"
    script.write_text(SCRIPT)
    out = tmp_path / "run"
    trial = run_json("run", pandas_task, "--agent", agent, "--model", f"scripted:{script}",
                     "--out", out, "--max-tokens", "10000000")["trials"][0]
    assert trial["status"] == "completed", trial["error"]
    assert trial["score"] == 1.0
    usage = json.loads((trial_dir(out, trial) / "trial.json").read_text())["usage"]
    assert usage["traced"] and not usage["tampered"], usage
    assert usage["execs"] > 0 and usage["python_imports"].get("pandas", 0) >= 1, usage
    assert usage["declared_software"] == {"pandas": True} and usage["used_declared"] is True
