"""The exec log: programs run in the sandbox, short-lived ones included, Python imports, and
whether the declared software was used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_metrics import row

from conftest import run_command_agent, trial_dir
from lastexam.analysis.metrics import software_usage
from lastexam.usage.declared import signals_for, usage
from lastexam.usage.execlog import parse

SAMPLE = (
    "exec\t10\t1\t1795970972.788775\t/usr/bin/dash\tsh\x1f-c\x1fls /x; samtools view a.bam\n"
    "exec\t11\t10\t1795970972.792794\t/usr/bin/ls\tls\x1f/x\n"
    "exit\t11\t2\n"
    "exec\t12\t10\t1795970972.797638\t/usr/bin/samtools\tsamtools\x1fview\x1fa \"quoted\" arg\n"
    "signal\t12\t9\n"
    "exec\t13\t10\t1795970972.8\t/usr/bin/mawk\tawk\x1fBEGIN{}\n"
    "not a line of the shim\n"
    "exec\tx\t1\t2\t/usr/bin/ls\tls\n"
    "exit\t10\t0\n"
)


def test_parse_exec_log(tmp_path: Path) -> None:
    (tmp_path / "exec.log").write_text(SAMPLE)
    (tmp_path / "py-5.txt").write_text("rdkit numpy\n")
    log = parse(tmp_path)
    assert log.traced and log.total == 4  # malformed lines are skipped
    assert [e.program for e in log.events] == ["dash", "ls", "samtools", "mawk"]
    assert [e.exit_status for e in log.events] == ["0", "2", "killed by signal 9", None]
    assert log.events[2].argv == ["samtools", "view", 'a "quoted" arg']
    assert log.script_execs == 1
    assert usage(["samtools", "RDKit", "ngspice", "awk", "Unheard-of CAD"], log) == {
        "samtools": True, "RDKit": True, "ngspice": False, "awk": True, "Unheard-of CAD": None,
    }


def test_untraced_usage_is_unknown(tmp_path: Path) -> None:
    assert usage(["samtools"], parse(tmp_path)) == {"samtools": None}


def test_every_suite_software_name_is_known() -> None:
    """Each software a public task declares must map to exec-log signals, or its use is unknown."""
    from lastexam.paths import default_tasks_dir
    from lastexam.task.load import discover_tasks

    tasks = discover_tasks([default_tasks_dir()])
    unknown = sorted({s for t in tasks for s in t.spec.software if signals_for(s) is None})
    assert unknown == []


@pytest.mark.usefixtures("base_env_ready")
def test_exec_log_in_a_real_trial(tmp_path: Path) -> None:
    cmd = (
        "for i in 1 2 3 4 5; do /bin/true; done; "
        "awk 'BEGIN{print 1}' >/dev/null; python3 -c 'import openpyxl'"
    )
    trial = run_command_agent(cmd, tmp_path / "run")
    record = json.loads((trial_dir(tmp_path / "run", trial) / "trial.json").read_text())
    used = record["usage"]
    assert used["traced"] and used["programs"]["true"] == 5
    assert used["declared_software"] == {"awk": True} and used["used_declared"] is True
    assert used["python_imports"].get("openpyxl") == 1
    events = (trial_dir(tmp_path / "run", trial) / "agent" / "exec.jsonl").read_text().splitlines()
    assert len(events) == used["execs"] >= 8


def test_software_usage_metric() -> None:
    rows = [
        row("A", 1, True, 1.0, used_software=True, script_share=0.5),
        row("B", 1, False, 0.2, used_software=False, script_share=1.0),
        row("C", 1, True, 1.0, used_software=True, script_share=0.0),
        row("D", 1, False, 0.0, used_software=None),
    ]
    u = software_usage(rows)["a"]
    assert u["known"] == 3 and u["used_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert u["fpr_used"] == 1.0 and u["fpr_not_used"] == 0.0
    assert u["script_share"] == 0.5
