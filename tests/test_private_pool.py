"""The sealed private pool (docs/private-pool.md): seal, run, validate, report, release, with
the real age encryption and the real sandbox. Each sealed task is a renamed copy of a test
task with a line of its own in the instruction and the reference, so that a search for those
lines cannot be confused by another test's copies of the public task."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
import sqlite3
import subprocess
import tomllib
import uuid
from pathlib import Path

import httpx
import pytest

from conftest import LASTEXAM, ROOT, TEST_TASKS, Point, run_cli, run_json, run_watching
from lastexam.paths import home_subdir
from lastexam.pool.artifacts import SEALED_ARCHIVE, open_trial_folder
from lastexam.pool.keys import load_identity
from lastexam.run.workspace import RunWorkArea
from lastexam.task.load import tree_hash

pytestmark = pytest.mark.usefixtures("base_env_ready")

SOURCES = ("column-total", "deliverable-parse")


def _secret_copy(src: Path, dest_root: Path) -> tuple[Path, list[bytes]]:
    """A copy of a test task under a new id and canary, its instruction and reference each
    given a line no other file anywhere holds; returns the folder and the lines to look for."""
    tag = uuid.uuid4().hex[:10]
    task_id = f"sealed-{src.name}-{tag}"
    dest = dest_root / "other" / task_id
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    old = re.search(r'canary = "([0-9a-f-]+)"', (src / "task.toml").read_text()).group(1)
    new = str(uuid.uuid4())
    for p in dest.rglob("*"):
        if p.is_file():
            data = p.read_bytes().replace(old.encode(), new.encode())
            p.write_bytes(data)
    toml = dest / "task.toml"
    toml.write_text(toml.read_text().replace(f'id = "{src.name}"', f'id = "{task_id}"'))
    instruction_line = f"The regional office tallies ledger batch {tag}-instr before noon."
    reference_line = f"reference note {tag}-ref: the audited figure stands"
    with (dest / "instruction.md").open("a") as f:
        f.write(f"\n{instruction_line}\n")
    (dest / "reference" / "notes.txt").write_text(reference_line + "\n")
    ref_lines = [ln.strip() for p in (dest / "reference").rglob("*") if p.is_file()
                 for ln in p.read_bytes().splitlines() if len(ln.strip()) >= 12]
    return dest, [instruction_line.encode(), *ref_lines]


@pytest.fixture
def pool(tmp_path: Path) -> dict:
    key = tmp_path / "keys" / "pool.key"
    recipient = run_cli("keygen", "--out", key).stdout.strip()
    assert recipient.startswith("age1") and (key.stat().st_mode & 0o777) == 0o600
    originals, secrets = [], []
    for name in SOURCES:
        folder, lines = _secret_copy(TEST_TASKS / "other" / name, tmp_path / "src")
        originals.append(folder)
        secrets += lines
    pool_dir = tmp_path / "pool"
    run_cli("seal", *originals, "--recipient", f"{key}.pub", "--out", pool_dir)
    return {"key": key, "dir": pool_dir, "originals": originals, "secrets": secrets,
            "tmp": tmp_path}


def _hits(roots: list[Path], secrets: list[bytes]) -> list[str]:
    found = []
    for root in roots:
        for p in [root] if root.is_file() else root.rglob("*"):
            if p.is_file() and not p.is_symlink():
                data = p.read_bytes()
                found += [f"{p}: {s[:40]!r}" for s in secrets if s in data]
    return found


def test_oracle_and_nop_on_a_sealed_pool_leave_no_plaintext(pool: dict) -> None:
    tmp = pool["tmp"] / "tmpdir"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp)}
    work = home_subdir("work")
    before = set(work.iterdir()) if work.is_dir() else set()
    runs = {}
    for agent in ("oracle", "nop"):
        runs[agent] = pool["tmp"] / f"run-{agent}"
        result = run_json("run", pool["dir"], "--agent", agent, "--identity", pool["key"],
                          "--out", runs[agent], env=env)
        scores = sorted(t["score"] for t in result["trials"])
        assert scores == ([1.0, 1.0] if agent == "oracle" else [0.0, 0.0])
        assert all(not c["message"] and re.fullmatch(r"check \d+", c["name"])
                   for t in result["trials"] for c in t["checks"])
    # every trial folder holds its record and one sealed archive, nothing else
    for run in runs.values():
        for trial in (run / "trials").iterdir():
            assert sorted(p.name for p in trial.iterdir()) == [SEALED_ARCHIVE, "trial.json"]
    after = set(work.iterdir()) if work.is_dir() else set()
    leftovers = sorted(after - before)
    assert _hits([*runs.values(), tmp, *leftovers], pool["secrets"]) == []
    # the sealed archive holds the outputs: the key opens it
    trial = runs["oracle"] / "trials" / next(p.name for p in (runs["oracle"] / "trials").iterdir()
                                             if "column-total" in p.name)
    files = open_trial_folder(trial, load_identity(pool["key"]))
    assert "output/result.json" in files and "grader/result.json" in files
    record = json.loads((trial / "trial.json").read_text())
    assert record["sealed"] is True and record["visibility"] == "private"


def test_an_agent_searching_its_file_system_finds_no_reference_line(pool: dict) -> None:
    refs = [s for s in pool["secrets"] if b"-instr " not in s]
    patterns = pool["tmp"] / "patterns"
    patterns.write_bytes(b"\n".join(refs) + b"\n")
    encoded = patterns.read_bytes().hex()
    # /usr is the host's system tree, read-only (8 GB: too slow to read here); the mount table
    # shows what else is there, and that no folder of the harness's work area is mounted.
    cmd = (f"mkdir -p /tmp/pat.d && echo {encoded} | xxd -r -p > /tmp/pat.d/p; "
           "ls -laR / --ignore=proc --ignore=sys --ignore=usr > /task/output/ls.txt 2>&1; "
           "grep -rlF -f /tmp/pat.d/p --exclude-dir=pat.d --exclude-dir=proc --exclude-dir=sys "
           "--exclude-dir=usr --exclude-dir=dev / > /task/output/hits.txt 2>/dev/null; "
           "cat /proc/self/mountinfo > /task/output/mounts.txt")
    run = pool["tmp"] / "run"
    result = run_json("run", pool["dir"], "--agent", "command", "--agent-arg", f"cmd={cmd}",
                      "--identity", pool["key"], "--out", run)
    identity = load_identity(pool["key"])
    for t in result["trials"]:
        files = open_trial_folder(run / "trials" / t["trial_id"], identity)
        assert len(files["output/ls.txt"][0]) > 1000  # it did list the file system
        assert files["output/hits.txt"][0] == b""
        mounts = files["output/mounts.txt"][0].decode()
        assert "/task" in mounts and "/trials/" in mounts  # its own workspace, and no other
        assert not re.search(r"/trials/[^ ]+/task[ /]|/tasks/|reference", mounts)


def test_wrong_key_tampered_and_damaged_bundles_are_clear_errors(pool: dict) -> None:
    other = pool["tmp"] / "other.key"
    run_cli("keygen", "--out", other)
    proc = run_cli("run", pool["dir"], "--identity", other, "--out", pool["tmp"] / "r1", check=False)
    assert proc.returncode == 2 and "not one of the bundle's recipients" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("run", pool["dir"], "--out", pool["tmp"] / "r0", check=False)
    assert proc.returncode == 2 and "needs a key" in proc.stderr
    # one flipped byte: the card's hash says so before anything runs
    first, second = sorted(p for p in pool["dir"].iterdir() if p.is_dir())  # run in this order
    part = second / "hidden.tar.age"
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 1
    part.write_bytes(bytes(data))
    proc = run_cli("run", pool["dir"], "--identity", pool["key"], "--out", pool["tmp"] / "r2",
                   check=False)
    assert proc.returncode == 2 and str(part) in proc.stderr and "hash on its card" in proc.stderr
    # the card rewritten to match: age itself refuses the altered file, and the run stops
    # with the trial already recorded kept
    manifest = pool["dir"] / "pool.toml"
    card = next(c for c in tomllib.loads(manifest.read_text())["task"] if c["id"] == second.name)
    manifest.write_text(manifest.read_text().replace(card["bundle"]["hidden"],
                                                     hashlib.sha256(bytes(data)).hexdigest()))
    run = pool["tmp"] / "r3"
    proc = run_cli("run", pool["dir"], "--identity", pool["key"], "--out", run, check=False)
    assert proc.returncode == 2 and str(part) in proc.stderr and "damaged" in proc.stderr
    assert "Traceback" not in proc.stderr
    with sqlite3.connect(run / "results.db") as db:
        kept = db.execute("SELECT task_id, score FROM trials").fetchall()
    assert kept == [(first.name, 1.0)]
    # truncated: the same
    part.write_bytes(bytes(data[: len(data) // 3]))
    proc = run_cli("validate", pool["dir"], "--identity", pool["key"], check=False)
    assert proc.returncode == 2 and str(part) in proc.stderr


def test_reports_show_sealed_trials_by_card_unless_revealed(pool: dict) -> None:
    run = pool["tmp"] / "run"
    run_json("run", pool["dir"], "--agent", "nop", "--identity", pool["key"], "--out", run)
    html = pool["tmp"] / "r.html"
    run_cli("report", run, "--html", html, "--csv", pool["tmp"] / "r.csv")
    shown = run_cli("show", run).stdout + html.read_text()
    assert "is missing" not in shown and "summary.json" not in shown  # no check names or messages
    proc = run_cli("report", run, "--html", html, "--reveal", check=False)
    assert proc.returncode == 2 and "--reveal needs the pool's key" in proc.stderr
    run_cli("report", run, "--html", html, "--reveal", "--identity", pool["key"])
    assert "is missing" in html.read_text()
    revealed = run_json("show", run, "--reveal", "--identity", pool["key"])["revealed"]
    assert len(revealed) == 2 and all(c["message"] for checks in revealed.values() for c in checks)
    regrade = run_cli("regrade", run, check=False)
    assert "sealed" in regrade.stdout + regrade.stderr
    # the viewer: the card, numbered checks, no files
    proc = subprocess.Popen([*LASTEXAM, "view", str(run), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        trial = next((run / "trials").iterdir()).name
        page = httpx.get(f"{url}/run/{run.name}/trial/{trial}", timeout=30).text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "sealed pool" in page and "check 1" in page
    assert "is missing" not in page and "Trajectory" not in page


def test_release_unseals_due_tasks_and_visibility_follows_the_date(pool: dict) -> None:
    dest = pool["tmp"] / "released"
    manifest = (pool["dir"] / "pool.toml").read_text()
    due = dt.date.fromisoformat(re.search(r"release_date = (\S+)", manifest).group(1))
    run_cli("pool", "release", pool["dir"], "--until", str(due - dt.timedelta(days=1)),
            "--to", dest, "--identity", pool["key"])
    assert not dest.exists() or not any(dest.rglob("task.toml"))
    run_cli("pool", "release", pool["dir"], "--until", str(due), "--to", dest,
            "--identity", pool["key"])
    for original in pool["originals"]:
        released = dest / "other" / original.name
        assert tree_hash(released) == tree_hash(original)
    again = run_cli("pool", "release", pool["dir"], "--until", str(due), "--to", dest,
                    "--identity", pool["key"], check=False)
    assert again.returncode == 2 and "never overwrites" in again.stderr
    # a task sealed with a release date already past is public on the run's day
    past = pool["tmp"] / "past"
    run_cli("seal", pool["originals"][0], "--recipient", f"{pool['key']}.pub", "--out", past,
            "--release-date", "2020-01-01")
    run = pool["tmp"] / "mixed"
    result = run_json("run", past, "--agent", "nop", "--identity", pool["key"], "--out", run)
    assert json.loads((run / "trials" / result["trials"][0]["trial_id"] / "trial.json")
                      .read_text())["visibility"] == "public"


def test_validate_a_sealed_pool_removes_what_it_unsealed(pool: dict) -> None:
    work = home_subdir("work")
    proc = run_cli("validate", pool["dir"], "--identity", pool["key"], "--concurrency", "1")
    assert "2/2 tasks pass every gate" in proc.stdout
    assert not list(work.glob("unsealed-*"))
    proc = run_cli("validate", pool["dir"], "--identity", pool["key"], "--record", check=False)
    assert proc.returncode == 2 and "in clear" in proc.stderr


def test_public_and_private_side_by_side(pool: dict) -> None:
    run = pool["tmp"] / "run"
    public = TEST_TASKS / "other" / "column-total"
    run_json("run", public, pool["dir"], "--agent", "oracle", "--identity", pool["key"], "--out", run)
    view = run_json("show", run)["metrics"]
    [gap] = view["contamination"]
    assert gap["public"]["tasks"] == 1 and gap["private"]["tasks"] == 2
    assert gap["fpr_gap"]["value"] == 0.0
    csv = pool["tmp"] / "board.csv"
    run_cli("report", run, "--csv", csv)
    header, row = csv.read_text().splitlines()[:2]
    assert dict(zip(header.split(","), row.split(","), strict=True))["fpr_private"] == "1.0"


def test_a_sealed_task_with_model_probes_replays_its_sealed_answers(tmp_path: Path) -> None:
    """The recorded probe answers (probes.json) are in the sealed bundle: the oracle needs no
    probe model, as with the public task."""
    key = tmp_path / "k.key"
    run_cli("keygen", "--out", key)
    task = next((ROOT / "tasks").rglob("cli-catalogue-tm-update/task.toml")).parent
    run_cli("seal", task, "--recipient", f"{key}.pub", "--out", tmp_path / "pool")
    result = run_json("run", tmp_path / "pool", "--identity", key, "--out", tmp_path / "run")
    assert [t["score"] for t in result["trials"]] == [1.0]


def test_grading_copy_lives_only_while_grading(pool: dict) -> None:
    """The hidden parts are decrypted into the trial's own task/ for the oracle and the
    grading, and gone before the trial is recorded; a nop trial never has them before grading."""
    seen: dict[str, bool] = {}

    def on_point(point: Point, _proc) -> None:
        ws = home_subdir("work") / point.run_id / "trials" / point.trial_id
        if point.phase in ("collect", "record"):
            seen[f"{point.phase} {point.trial_id.split('__')[1]}"] = (ws / "task").exists()

    for agent in ("oracle", "nop"):
        watched = run_watching(["run", pool["dir"], "--agent", agent, "--identity", pool["key"],
                                "--out", pool["tmp"] / f"run-{agent}"],
                               pool["tmp"] / f"watch-{agent}", on_point,
                               delays={"collect": 0.3, "record": 0.3})
        assert watched.returncode == 0, watched.stderr[-2000:]
    assert seen == {"collect oracle": True, "record oracle": False,
                    "collect nop": False, "record nop": False}


def test_an_agent_cannot_copy_its_instruction_into_the_clear_record(pool: dict) -> None:
    """The exec log's FIFO is writable by the agent; a line the shim did not write is quoted in
    the tamper reason. For a sealed task that quote would carry the instruction into
    trial.json and results.db: it must stay in the sealed archive only."""
    lines = [s for s in pool["secrets"] if b"-instr " in s]
    cmd = "grep -F -- '-instr ' /task/instruction.md > \"$LASTEXAM_EXEC_LOG\"; exit 3"
    run = pool["tmp"] / "run"
    result = run_json("run", pool["dir"], "--agent", "command", "--agent-arg", f"cmd={cmd}",
                      "--identity", pool["key"], "--out", run)
    records = [json.loads((run / "trials" / t["trial_id"] / "trial.json").read_text())
               for t in result["trials"]]
    assert all(r["usage"]["tampered"] for r in records)  # the agent did write its line
    assert _hits([run], lines) == []


def test_a_resumed_run_keeps_the_visibility_of_the_day_it_started(pool: dict) -> None:
    """A run started the day before its tasks' release and resumed on the day of release:
    its trials are private, those run after the resume too (docs: visibility on the day the
    run started), so that one run never counts a task on both sides of the gap."""
    today = dt.datetime.now(dt.UTC).date()
    due = pool["tmp"] / "due-today"
    run_cli("seal", *pool["originals"], "--recipient", f"{pool['key']}.pub", "--out", due,
            "--release-date", str(today))
    run = pool["tmp"] / "run"
    run_json("run", due, "--agent", "nop", "--identity", pool["key"], "--out", run)
    yesterday = (today - dt.timedelta(days=1)).isoformat() + "T12:00:00.000+00:00"
    with sqlite3.connect(run / "results.db") as db:  # as if started yesterday, one trial unfinished
        db.execute("UPDATE runs SET created_at = ?", (yesterday,))
        lost = db.execute("SELECT trial_id FROM trials ORDER BY trial_id").fetchone()[0]
        grade_ids = [r[0] for r in db.execute("SELECT grade_id FROM grades WHERE trial_id = ?", (lost,))]
        db.executemany("DELETE FROM checks WHERE grade_id = ?", [(g,) for g in grade_ids])
        db.execute("DELETE FROM grades WHERE trial_id = ?", (lost,))
        db.execute("DELETE FROM trials WHERE trial_id = ?", (lost,))
    shutil.rmtree(run / "trials" / lost)
    run_cli("run", "--resume", "--out", run, "--identity", pool["key"])
    record = json.loads((run / "trials" / lost / "trial.json").read_text())
    assert record["visibility"] == "private"


def test_a_killed_validation_leaves_no_plaintext_past_the_next_run(
        pool: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """validate unseals a pool and runs its trials; killed (SIGKILL: no cleanup runs) while a
    trial runs, it leaves the unsealed tasks and the trials' outputs behind. The next run
    removes them, as it removes a killed run's work area."""
    tmp = pool["tmp"] / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    work = home_subdir("work")
    before = set(work.iterdir()) if work.is_dir() else set()

    def kill_at_grade(point: Point, proc) -> None:
        if point.phase == "grade":
            proc.kill()

    watched = run_watching(["validate", pool["dir"], "--identity", pool["key"], "--concurrency", "1"],
                           pool["tmp"] / "watch", kill_at_grade, delays={"grade": 0.5})
    assert watched.returncode == -9 and any(p.phase == "grade" for p in watched.points)
    run_json("run", TEST_TASKS / "other" / "column-total", "--agent", "nop",
             "--out", pool["tmp"] / "next")
    leftovers = sorted((set(work.iterdir()) if work.is_dir() else set()) - before)
    assert _hits([tmp, *leftovers], pool["secrets"]) == []


def test_decrypted_files_are_closed_to_other_local_users(pool: dict) -> None:
    """LASTEXAM_HOME/work can be listed and a trial's folder name follows from the public
    cards: the decrypted instruction, inputs and hidden parts keep no group or other
    permission (the sandbox's user owns them, the harness's can read them anyway)."""
    loose: dict[str, list[str]] = {}

    def on_point(point: Point, _proc) -> None:
        trial = RunWorkArea(home_subdir("work") / point.run_id).trial(point.trial_id)
        ws = trial.root
        if point.phase == "collect":
            paths = [trial.instruction, *(ws / "inputs").rglob("*"), ws / "task",
                     *(ws / "task").rglob("*")]
            loose[point.trial_id] = [f"{p} {p.stat().st_mode & 0o777:o}"
                                     for p in paths if p.stat().st_mode & 0o077]

    watched = run_watching(["run", pool["dir"], "--agent", "oracle", "--identity", pool["key"],
                            "--out", pool["tmp"] / "run"], pool["tmp"] / "watch", on_point,
                           delays={"collect": 0.3})
    assert watched.returncode == 0, watched.stderr[-2000:]
    assert len(loose) == 2 and all(v == [] for v in loose.values()), loose


def test_staging_never_opens_a_decrypted_file_to_others(pool: dict, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Through every step of staging (each chown and folder renewal), the decrypted instruction
    (in the run's fast folder) and inputs keep no group or other permission, nor does inputs/."""
    from lastexam.pool.sealed import load_pool
    from lastexam.run import workspace

    task = load_pool(pool["dir"], load_identity(pool["key"]))[0]
    fast = tmp_path / "fast"
    fast.mkdir(mode=0o711)
    (tmp_path / "trials").mkdir()
    ws = workspace.TrialWorkspace(tmp_path / "trials" / "t1", fast, None)
    seen: list[str] = []

    def open_to_others(p: Path) -> bool:
        """Readable (or listable) by a user neither owner nor in the group: every folder on the
        way from the fast folder or the workspace (both 0711) lets others through."""
        if not p.exists() or not p.stat().st_mode & 0o004:
            return False
        folders = [] if p == ws.instruction else [ws.inputs, *[q for q in p.parents if ws.inputs in q.parents]]
        return all(f.stat().st_mode & 0o001 for f in folders)

    def modes(_step: str) -> None:
        for p in (ws.instruction, ws.inputs, *ws.inputs.rglob("*")):
            if open_to_others(p):
                seen.append(f"{_step}: {p} {p.stat().st_mode & 0o777:o}")

    def spied(fn, step):
        def call(*a, **k):
            modes(f"before {step}")
            return fn(*a, **k)
        return call

    monkeypatch.setattr(workspace, "_chown_tree", spied(workspace._chown_tree, "chown"))
    monkeypatch.setattr(workspace.recycle, "renew", spied(workspace.recycle.renew, "renew"))
    ws.stage(task, None)
    modes("end")
    assert ws.instruction.parent == fast and not (ws.root / "instruction.md").exists()
    assert ws.instruction.read_bytes() and list(ws.inputs.rglob("*"))
    assert seen == [], seen
