"""Every attack in attacks.py, run by a real agent through `lastexam run`, is contained: the
score is not inflated, the trial's status and evidence say what happened, nothing survives the
trial, the host and the honest trials beside it are unaffected, and the run goes on."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

from .attacks import ATTACKS, Attack, render
from .conftest import BYSTANDERS, AttackRun, Outcome, processes_with, trial_rows

pytestmark = pytest.mark.usefixtures("base_env_ready")


def _check(name: str, o: Outcome) -> dict:
    return next(c for c in o.trial["checks"] if c["name"] == name)


def _many_files(o: Outcome, run: AttackRun) -> None:
    assert o.record["outputs"]["files"] == 100_000
    assert o.record["outputs"]["dropped_count"] == 20_001  # f100000.. and result.json


def _oversize(o: Outcome, run: AttackRun) -> None:
    assert o.record["outputs"]["bytes"] <= 5 * 1024 * 1024
    assert any(d["path"] == "zz-big" and "cap" in d["why"] for d in o.dropped)


def _nested(o: Outcome, run: AttackRun) -> None:
    assert any(d["why"] == "folder nested deeper than 32 levels" for d in o.dropped)
    assert o.trial["score"] == 1.0  # the deliverable beside the tree still counts


def _deep_tree(o: Outcome, run: AttackRun) -> None:
    assert any("longer than" in d["why"] or "nested deeper" in d["why"] for d in o.dropped)


def _bad_names(o: Outcome, run: AttackRun) -> None:
    names = set(os.listdir(os.fsencode(o.folder / "output")))
    assert {b"new\nline", b"bad\xff\xfe", b"esc\x1b[2J\x1b[31mred", b"[bold]x", b" -rf"} <= names
    assert (o.folder / "output" / os.fsdecode(b"dir\xff") / "f").read_text() == "1\n"


def _log_flood(o: Outcome, run: AttackRun) -> None:
    size = (o.folder / "agent" / "agent.stdout.log").stat().st_size
    assert 0 < size <= 10 * 1024 * 1024  # RLIMIT_FSIZE at twice the 5 MB output cap


def _late_daemon(o: Outcome, run: AttackRun) -> None:
    assert (o.folder / "output" / "result.json").read_text().strip() == '{"total": 1, "count": 1}'
    assert not (o.folder / "output" / "grade-ls.txt").exists()


def _poison(o: Outcome, run: AttackRun) -> None:
    assert not _check("result.json parses as a JSON object", o)["passed"] or o.trial["score"] == 0.0
    assert _check("inputs untampered", o)["passed"]  # the real grader ran, not the planted one


def _tampered(o: Outcome, run: AttackRun) -> None:
    gate = _check("inputs untampered", o)
    assert not gate["passed"] and "data.csv" in gate["message"]


def _deleted(o: Outcome, run: AttackRun) -> None:
    assert "removed: ['data.csv']" in _check("inputs untampered", o)["message"]
    assert not _check("total", o)["passed"]  # graded against the pristine input


def _json_gate_failed(o: Outcome, run: AttackRun) -> None:
    assert not _check("summary.json parses as a JSON object", o)["passed"]


def _json_nan(o: Outcome, run: AttackRun) -> None:
    assert _check("summary.json parses as a JSON object", o)["passed"]
    assert not _check("summary total", o)["passed"]


def _xlsx_refused(why: str) -> Callable[[Outcome, AttackRun], None]:
    def check(o: Outcome, run: AttackRun) -> None:
        opened = _check("book.xlsx opens", o)
        assert not opened["passed"] and why in opened["message"], opened["message"]
    return check


def _spoof(o: Outcome, run: AttackRun) -> None:
    assert o.trial["score"] == 0.0 and not o.trial["full_pass"]
    assert o.record["status"] == "completed" and o.record["score"] == 0.0
    shown = run_cli("show", run.run_dir).stdout
    assert "\x1b[2J" not in shown and "PASS 1.0" not in shown


def _exec_log(o: Outcome, run: AttackRun) -> None:
    text = (o.folder / "trial.json").read_text()
    hostname = Path("/etc/hostname").read_text().strip()
    usage = o.record["usage"]
    imports = usage.get("python_imports", {})
    assert hostname not in imports and not any(k.startswith("root:") for k in imports)
    assert "root:" not in text.replace('"root:', "")  # no line of /etc/shadow
    # The forged "awk ran" line does not count: the log is marked tampered, awk not used.
    assert usage["tampered"] and usage["tamper_reason"], usage
    assert usage["declared_software"] == {"awk": False} and usage["used_declared"] is False


def _exec_log_kept(o: Outcome, run: AttackRun) -> None:
    usage = o.record["usage"]
    assert "Read-only file system" in o.log or "Permission denied" in o.log
    assert usage["traced"] and not usage["tampered"], usage
    assert usage["python_imports"].get("openpyxl", 0) >= 1
    assert usage["declared_software"] == {"openpyxl": True} and usage["used_declared"] is True


def _exec_log_flooded(o: Outcome, run: AttackRun) -> None:
    usage = o.record["usage"]
    assert usage["tampered"] and "flooded" in usage["tamper_reason"], usage
    assert usage["used_declared"] is False


def _many_folders(o: Outcome, run: AttackRun) -> None:
    # Killed at the watch's folder cap; empty folders are neither copied nor stored.
    assert sorted(os.listdir(o.folder / "output")) == ["result.json"]
    assert o.trial["score"] == 1.0  # still graded: the deliverable beside them counts


def _agent_exit(o: Outcome, run: AttackRun) -> None:
    t = o.trial
    assert t["policy"]["kind"] == "agent_exit" and t["policy"]["retries"] == 0, t["policy"]
    how = o.record["key"]["task_id"].removeprefix("atk-exit-").split("-")[0]
    signalled = {"sigkill": 128 + 9, "sigsegv": 128 + 11}
    expected = signalled[how] if how in signalled else int(how)
    assert o.record["agent_exit_code"] == expected, (how, o.record["agent_exit_code"])


def _toolchain(o: Outcome, run: AttackRun) -> None:
    assert "Read-only file system" in o.log or "Permission denied" in o.log


CHECKS: dict[str, Callable[[Outcome, AttackRun], None]] = {
    "out-many-files": _many_files,
    "out-oversize": _oversize,
    "out-nested": _nested,
    "out-deep-tree": _deep_tree,
    "out-bad-names": _bad_names,
    "out-log-flood": _log_flood,
    "grade-time-daemon": _late_daemon,
    "poison-grader-imports": _poison,
    "inputs-rewrite": _tampered,
    "inputs-symlink": _tampered,
    "inputs-sparse": _tampered,
    "inputs-dir": _tampered,
    "inputs-delete": _deleted,
    "grader-json-deep": _json_gate_failed,
    "grader-json-bigint": _json_gate_failed,
    "grader-json-nan": _json_nan,
    "grader-xlsx-bomb": _xlsx_refused("zip bomb"),
    "grader-xlsx-garbage": _xlsx_refused("not a valid zip"),
    "grader-xlsx-lying-sizes": _xlsx_refused("not a readable XLSX"),
    "spoof-harness-output": _spoof,
    "spoof-exec-log": _exec_log,
    "exec-log-remove": _exec_log_kept,
    "exec-log-flood": _exec_log_flooded,
    "out-many-folders": _many_folders,
    "res-toolchain": _toolchain,
}


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
def test_attack_is_contained(attack: Attack, attack_run: AttackRun) -> None:
    o = attack_run.outcomes[attack.task_id]
    t = o.trial
    assert t["status"] in attack.statuses, (t["status"], t["ended_by"], t["error"])
    assert (t["score"] or 0.0) <= attack.max_score
    # Nothing an agent does takes its trial out of the metrics (a grader error counts as 0).
    assert t["policy"]["counts"], t["policy"]
    if attack.ended_by:
        assert t["ended_by"] == attack.ended_by
    if attack.error_has:
        assert attack.error_has in (t["error"] or ""), t["error"]
    for path, why in attack.dropped:
        assert {"path": path, "why": why} in o.dropped, o.dropped
    log = o.log
    for text in attack.log_has:
        assert text in log, log[-2000:]
    for text in attack.log_lacks:
        assert text not in log, log[-2000:]
    if attack.id in CHECKS:
        CHECKS[attack.id](o, attack_run)
    if attack.group == "exits":
        _agent_exit(o, attack_run)


def test_every_trial_recorded_once_and_bystanders_unaffected(attack_run: AttackRun) -> None:
    assert len(attack_run.outcomes) == len(ATTACKS) + len(BYSTANDERS)
    rows = trial_rows(attack_run.run_dir)
    assert len(rows) == len(attack_run.outcomes) and {n for _, n in rows} == {1}
    for task_id in BYSTANDERS:
        t = attack_run.outcomes[task_id].trial
        assert t["status"] == "completed" and t["score"] == 1.0, t


def test_nothing_survives_the_run(attack_run: AttackRun) -> None:
    assert processes_with(attack_run.mark) == []
    run_id = attack_run.run_id()
    home = _lastexam_home()
    assert not (home / "work" / run_id).exists()
    assert not (home / "work" / f"{run_id}.lock").exists()
    from tests.faults.campaign import sandbox_cgroups

    assert [c for c in sandbox_cgroups() if os.path.basename(c).startswith(f"{run_id}.")] == []
    # No file the attacks tried to plant (named with the marker) exists outside their trials.
    places = [str(home), "/tmp", "/var/tmp", "/root", "/etc", "/usr/lib/python3", str(ROOT)]
    found = subprocess.run(
        ["find", *places, "-xdev", "-name", f"*{attack_run.mark}*", "-not", "-path",
         f"{attack_run.run_dir}/*"], capture_output=True, text=True,
    ).stdout.split()
    assert found == []


def test_reports_read_the_attacked_run(attack_run: AttackRun, tmp_path: Path) -> None:
    """Odd names, dropped entries, fake files and grader errors do not break the readers."""
    html = tmp_path / "report.html"
    run_cli("report", attack_run.run_dir, "--html", html, "--json", tmp_path / "m.json")
    assert "\x1b" not in html.read_text() and html.stat().st_size > 10_000


def _lastexam_home() -> Path:
    from lastexam.paths import lastexam_home

    return lastexam_home()


def test_docs_list_every_attack() -> None:
    doc = (ROOT / "docs" / "integrity.md").read_text()
    assert render() in doc, "regenerate the table: .venv/bin/python -m tests.adversarial.attacks"
