"""Attacks on the sealed pool (docs/private-pool.md) that need no sandbox: what a sealed
trial's clear record keeps, what a tampered bundle can make the harness do, the key file,
the visibility day and the contamination interval."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import tarfile
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import COLUMN_TOTAL, run_cli, run_json
from lastexam.analysis.metrics import headline, visibility_gap
from lastexam.errors import LastexamError
from lastexam.pool.artifacts import redact_record, seal_files
from lastexam.pool.bundle import SealedBundleError, check_part, members
from lastexam.pool.keys import generate, load_identity, parse_recipient, recipient_of
from lastexam.pool.model import PARTS
from lastexam.pool.sealed import load_manifest, load_pool
from lastexam.run.probing import probe_context
from lastexam.store.models import (
    EarlierTry,
    ExecUsage,
    PolicyDecision,
    TrialKey,
    TrialRecord,
)
from lastexam.store.rows import TrialRow
from lastexam.task.load import load_task

SECRET = "ledger batch 7731 audited at 4410.25"


def _record(**kw) -> TrialRecord:
    return TrialRecord(trial_id="t", run_id="r", key=TrialKey(task_id="sealed-x", agent="nop"),
                       task_path="/pool/sealed-x", cluster="other", subdomain="other", tier="near-term",
                       status="infra_error", score=None, full_pass=False,
                       started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z", **kw)


def test_a_sealed_trial_keeps_no_error_text_or_tamper_quote_in_clear() -> None:
    """Error texts quote whatever the failure saw (a traceback naming an input, a line the
    agent wrote into its exec log): none of it stays in a sealed trial's clear record."""
    record = _record(
        run_error=f"stage: FileExistsError: [Errno 17] inputs/{SECRET}.csv",
        usage=ExecUsage(traced=True, tampered=True,
                        tamper_reason=f"a line the shim did not write: '{SECRET}'"),
        policy=PolicyDecision(kind="harness_error", counts=False, retries=1,
                              earlier=[EarlierTry(kind="harness_error", error=f"agent: {SECRET}")]),
    )
    redact_record(record)
    clear = record.model_dump_json()
    assert SECRET not in clear
    # what went wrong, in kind, stays: failure analysis and the error policy read these
    assert record.run_error and record.usage.tampered and record.policy.earlier[0].kind == "harness_error"


def test_a_sparse_tar_member_cannot_blow_up_into_memory(tmp_path: Path) -> None:
    """Anyone can encrypt to a pool's recipients (they are public, in pool.toml): a part
    rewritten with a sparse member of 10 KB that reads back as 64 MB of zeros (or a terabyte)
    is refused, not unpacked."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("inputs/big.csv")
        info.size = 1
        info.pax_headers = {"GNU.sparse.map": f"{(1 << 26) - 1},1", "GNU.sparse.size": str(1 << 26),
                            "GNU.sparse.name": "inputs/big.csv"}
        tar.addfile(info, io.BytesIO(b"x"))
    where = tmp_path / "agent.tar.age"
    with pytest.raises(SealedBundleError, match=r"inputs/big\.csv") as caught:
        members(buf.getvalue(), where)
    assert str(where) in str(caught.value)


def test_a_key_file_other_users_can_read_is_refused(tmp_path: Path) -> None:
    """keygen writes the secret key 0600; a copy others can read (cp to a shared folder, a
    umask-less tool) opens the whole pool to them, so it is refused, as ssh refuses one."""
    key = tmp_path / "pool.key"
    recipient = generate(key)
    assert recipient_of(load_identity(key)) == recipient
    for mode in (0o644, 0o640, 0o602):
        key.chmod(mode)
        with pytest.raises(LastexamError, match="chmod 600") as caught:
            load_identity(key)
        assert str(key) in str(caught.value)
    key.chmod(0o400)
    assert recipient_of(load_identity(key)) == recipient


def _rows(visibility: str, scores: dict[str, list[float]]) -> list[TrialRow]:
    return [TrialRow(trial_id=f"{task}-{i}", task_id=task, agent="a", model="m", attempt=i + 1,
                     tier="near-term", cluster="other", subdomain="other", status="completed",
                     score=s, full_pass=s == 1.0, visibility=visibility)
            for task, attempts in scores.items() for i, s in enumerate(attempts)]


def test_the_gap_has_no_interval_when_a_side_has_one_task() -> None:
    """Tasks are the unit resampled: one task alone says nothing of how scores vary between
    tasks, so resampling it gives it no variance and the gap's interval would be too narrow
    (a side alone gets no interval under 2 tasks, analysis/metrics.py)."""
    private = _rows("private", {"p1": [0.0, 0.2], "p2": [1.0, 0.8], "p3": [0.5, 0.5]})
    one = _rows("public", {"q1": [1.0, 1.0]})
    gap = visibility_gap(one, private)
    assert headline(one)["ms"]["low"] is None
    assert gap["ms_gap"]["value"] == headline(one)["ms"]["value"] - headline(private)["ms"]["value"]
    assert gap["ms_gap"]["low"] is None and gap["fpr_gap"]["high"] is None
    two = _rows("public", {"q1": [1.0, 1.0], "q2": [0.0, 0.5]})
    gap = visibility_gap(two, private)
    assert gap["ms_gap"]["low"] < gap["ms_gap"]["value"] < gap["ms_gap"]["high"]


def test_pool_commands_name_the_path_they_cannot_write(tmp_path: Path) -> None:
    """A careless --out or --to (under a file, in a folder not writable) is a clear error
    naming the path, exit 2, not a traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    run_cli("seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", tmp_path / "pool")
    for args in (["keygen", "--out", blocker / "k"],
                 ["seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", blocker / "p"],
                 ["pool", "release", tmp_path / "pool", "--until", "2999-01-01", "--to", blocker / "t",
                  "--identity", key]):
        proc = run_cli(*args, check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-600:]
        assert str(blocker) in proc.stderr


def test_validate_refuses_a_sealed_task_with_the_id_of_a_public_one(tmp_path: Path) -> None:
    """A public task and a sealed one of the same id in one validation would share their
    trials' ids (and folders): refused up front naming both, as `run` refuses them."""
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    run_cli("seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", tmp_path / "pool")
    proc = run_cli("validate", COLUMN_TOTAL, tmp_path / "pool", "--identity", key, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-600:]
    assert "column-total" in proc.stderr and str(COLUMN_TOTAL) in proc.stderr


def _copy_task(src: Path, root: Path, task_id: str, canary: str | None = None) -> Path:
    dest = root / "other" / task_id
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    toml = dest / "task.toml"
    text = toml.read_text().replace(f'id = "{src.name}"', f'id = "{task_id}"')
    if canary:
        text = re.sub(r'canary = "[^"]+"', f'canary = "{canary}"', text)
    toml.write_text(text)
    return dest


def test_a_refused_seal_leaves_the_pool_as_it_was(tmp_path: Path) -> None:
    """Two tasks whose canaries differ only in letter case share one canary (the scan finds
    both in any case). seal refuses them with a clear error, before it writes any bundle:
    a task re-sealed in the same call would otherwise no longer match its card."""
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    canary = str(uuid.uuid4())
    first = _copy_task(COLUMN_TOTAL, tmp_path / "src", "first-task", canary)
    second = _copy_task(COLUMN_TOTAL, tmp_path / "src", "second-task", canary.upper())
    pool = tmp_path / "pool"
    run_cli("seal", first, "--recipient", f"{key}.pub", "--out", pool)
    (first / "instruction.md").write_text("changed\n")
    proc = run_cli("seal", first, second, "--recipient", f"{key}.pub", "--out", pool, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-600:]
    assert "first-task" in proc.stderr and str(second) in proc.stderr
    [card] = load_manifest(pool).task
    for part in PARTS:
        check_part(pool / card.id, part, card.bundle[part])


def test_a_canary_the_scan_cannot_find_is_refused(tmp_path: Path) -> None:
    """The canary scan finds the 8-4-4-4-12 form (in any letter case); the 32 hex digits of
    the same GUID without dashes, written in a task's files, would leak unseen."""
    guid = uuid.uuid4()
    task = _copy_task(COLUMN_TOTAL, tmp_path, "column-total", guid.hex)
    with pytest.raises(LastexamError, match="canary") as caught:
        load_task(task)
    assert str(task / "task.toml") in str(caught.value)
    for form in (str(guid), str(guid).upper()):
        (task / "task.toml").write_text(re.sub(r'canary = "[^"]+"', f'canary = "{form}"',
                                               (task / "task.toml").read_text()))
        assert load_task(task).spec.canary == form


def test_a_bundle_file_that_is_a_fifo_or_device_is_refused(tmp_path: Path) -> None:
    """An age file replaced by a FIFO would block the harness forever, by /dev/zero fill its
    memory: only a regular file is read (a link to one is fine)."""
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    pool = tmp_path / "pool"
    run_cli("seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", pool)
    part = pool / "column-total" / "agent.tar.age"
    kept = tmp_path / "agent.tar.age"
    part.rename(kept)
    part.symlink_to(kept)
    run_cli("pool", "release", pool, "--until", "2999-01-01", "--to", tmp_path / "out1", "--identity", key)
    part.unlink()
    os.mkfifo(part)
    proc = run_cli("pool", "release", pool, "--until", "2999-01-01", "--to", tmp_path / "out2",
                   "--identity", key, check=False, timeout=30)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-600:]
    assert str(part) in proc.stderr and "regular file" in proc.stderr


def test_a_card_whose_canary_differs_from_its_task_is_refused(tmp_path: Path) -> None:
    """`canary scan --tasks POOL` reads the canaries on the cards: a card that does not carry
    its sealed task's canary would make the scan look for the wrong one."""
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    pool = tmp_path / "pool"
    run_cli("seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", pool)
    manifest = pool / "pool.toml"
    [card] = load_manifest(pool).task
    manifest.write_text(manifest.read_text().replace(card.canary, str(uuid.uuid4())))
    proc = run_cli("pool", "release", pool, "--until", "2999-01-01", "--to", tmp_path / "out",
                   "--identity", key, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-600:]
    assert "canary" in proc.stderr and str(pool / "column-total") in proc.stderr


def test_sealing_never_writes_plaintext_beside_the_archive(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's probe logs are sealed into RUN_DIR/probes.tar.age: the tar streamed to age
    must not sit in the run directory (a run killed meanwhile would publish it)."""
    import pyrage

    logs = tmp_path / "probe-logs"  # the prober's private temporary folder
    logs.mkdir(mode=0o700)
    (logs / "probe-0001.jsonl").write_text(SECRET)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    seen: list[str] = []
    encrypt = pyrage.encrypt_file

    def spy(src: str, dst: str, recipients) -> None:
        seen.extend(str(p) for p in run_dir.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes())
        encrypt(src, dst, recipients)

    monkeypatch.setattr(pyrage, "encrypt_file", spy)
    identity = tmp_path / "k.key"
    seal_files(logs, run_dir / "probes.tar.age", [generate(identity)])
    assert seen == [] and [p.name for p in run_dir.iterdir()] == ["probes.tar.age"]


def test_a_resumed_run_keeps_the_probe_logs_sealed_before(tmp_path: Path) -> None:
    """The probe logs of a run with sealed tasks are sealed when the run ends; a resume seals
    its own beside them instead of replacing them."""
    script = tmp_path / "probe.yaml"
    script.write_text(json.dumps({"turns": [], "final_text": "no"}))
    key = tmp_path / "k.key"
    recipient = generate(key)
    plans = [SimpleNamespace(task=SimpleNamespace(uses_probes=True, sealed=True, recipients=(recipient,)))]
    run_dir, work = tmp_path / "run", tmp_path / "work"
    run_dir.mkdir()
    work.mkdir()
    for session in ("first", "resumed"):
        with probe_context(f"scripted:{script}", plans, run_dir, work) as prober:
            (prober.log_dir / "probe-0001.jsonl").write_text(session)
    opened = sorted(members(pyrage_decrypt(p, key), p)["probe-0001.jsonl"][0]
                    for p in run_dir.glob("probes*.tar.age"))
    assert opened == [b"first", b"resumed"]


def pyrage_decrypt(path: Path, key: Path) -> bytes:
    import pyrage

    return pyrage.decrypt(path.read_bytes(), [load_identity(key)])


def test_results_cannot_be_sealed_to_a_recipient_slipped_into_pool_toml(tmp_path: Path) -> None:
    """A run seals its trials (outputs, rubrics quoting the reference) to pool.toml's
    recipients. Someone who can write pool.toml but holds no key adds (or swaps in) their
    own recipient: the pool must not open, or the published run would be theirs to read."""
    key, thief = tmp_path / "pool.key", tmp_path / "thief.key"
    run_cli("keygen", "--out", key)
    stolen = run_cli("keygen", "--out", thief).stdout.strip()
    pool = tmp_path / "pool"
    run_cli("seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", pool)
    manifest = pool / "pool.toml"
    honest = manifest.read_text()
    [mine] = load_manifest(pool).recipients
    for slipped in (f'["{mine}", "{stolen}"]', f'["{stolen}"]'):
        manifest.write_text(honest.replace(f'["{mine}"]', slipped))
        assert load_manifest(pool).recipients != [mine]
        proc = run_cli("pool", "release", pool, "--until", "2999-01-01", "--to", tmp_path / "out",
                       "--identity", key, check=False)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-600:]
        assert "recipient" in proc.stderr and not (tmp_path / "out").exists()


def test_a_secret_key_given_as_recipient_is_not_printed(tmp_path: Path) -> None:
    """`seal --recipient pool.key` (the secret key, not pool.key.pub) is a likely slip: the
    error names the file and never echoes its content (CI logs are often public)."""
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    proc = run_cli("seal", COLUMN_TOTAL, "--recipient", key, "--out", tmp_path / "pool", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    secret = key.read_text().split()[-1]
    assert secret.startswith("AGE-SECRET-KEY-1") and secret[16:40] not in proc.stderr.upper()
    assert str(key) in proc.stderr and ".pub" in proc.stderr, proc.stderr


def test_an_agent_part_without_its_instruction_or_with_other_files_is_refused(tmp_path: Path) -> None:
    """The agent part is unpacked into the trial's workspace: one without instruction.md (or
    holding anything but instruction.md and inputs/, e.g. task/grader.py where the grading
    copy goes) is a damaged bundle naming its file, not an infrastructure error retried."""
    import hashlib

    import pyrage

    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    pool = tmp_path / "pool"
    run_cli("seal", COLUMN_TOTAL, "--recipient", f"{key}.pub", "--out", pool)
    part = pool / "column-total" / "agent.tar.age"
    [recipient] = load_manifest(pool).recipients
    honest = (pool / "pool.toml").read_text()
    for members_ in ({"inputs/data.csv": b"1\n"}, {"instruction.md": b"do\n", "task/grader.py": b"x"}):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, data in members_.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        old = hashlib.sha256(part.read_bytes()).hexdigest()
        part.write_bytes(pyrage.encrypt(buf.getvalue(), [parse_recipient(recipient)]))
        (pool / "pool.toml").write_text(honest.replace(old, hashlib.sha256(part.read_bytes()).hexdigest()))
        [task] = load_pool(pool, load_identity(key))
        with pytest.raises(SealedBundleError) as caught:
            task.stage_agent_part(tmp_path / "ws")
        assert str(part) in str(caught.value) and not (tmp_path / "ws").exists()
        honest = (pool / "pool.toml").read_text()


def test_a_sealed_runs_probe_logs_stay_in_its_work_area(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Probe prompts quote the grader's questions: until they are sealed at the run's end they
    live in the run's work area (0700), which the next run sweeps if this one is killed, not
    in TMPDIR, which nothing sweeps."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    script = tmp_path / "probe.yaml"
    script.write_text(json.dumps({"turns": [], "final_text": "no"}))
    recipient = generate(tmp_path / "k.key")
    plans = [SimpleNamespace(task=SimpleNamespace(uses_probes=True, sealed=True, recipients=(recipient,)))]
    work = tmp_path / "work"
    work.mkdir()
    with probe_context(f"scripted:{script}", plans, tmp_path, work) as prober:
        (prober.log_dir / "probe-0001.jsonl").write_text(SECRET)
        assert prober.log_dir.is_relative_to(work) and prober.log_dir.stat().st_mode & 0o077 == 0
        assert not [p for p in (tmp_path / "tmp").rglob("*") if p.is_file() and SECRET in p.read_text()]


def test_a_sealed_task_asking_a_probe_model_keeps_its_probes_sealed(tmp_path: Path,
                                                                    base_env_ready: None) -> None:
    """A sealed task whose grader asks a probe model (no recorded answer): the run scores it,
    and the probe logs, which quote the grader's question, reach the run only sealed."""
    from tests.test_probes import PROBE_GRADER, QUESTION, script, verdict

    task = tmp_path / "src" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task, ignore=shutil.ignore_patterns("fixtures"))
    (task / "grader.py").write_text(PROBE_GRADER)
    key = tmp_path / "pool.key"
    run_cli("keygen", "--out", key)
    run_cli("seal", task, "--recipient", f"{key}.pub", "--out", tmp_path / "pool")
    out = tmp_path / "run"
    result = run_json("run", tmp_path / "pool", "--agent", "oracle", "--identity", key,
                      "--probe-model", f"scripted:{script(tmp_path, 'yes', verdict('yes'))}", "--out", out)
    assert [t["score"] for t in result["trials"]] == [1.0]
    assert (out / "probes.tar.age").is_file() and not (out / "probes").exists()
    assert [p for p in out.rglob("*") if p.is_file() and QUESTION.encode() in p.read_bytes()] == []
    logs = members(pyrage_decrypt(out / "probes.tar.age", key), out / "probes.tar.age")
    assert any(QUESTION.encode() in data for data, _ in logs.values())
