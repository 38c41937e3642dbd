"""The SIGKILL campaign: kill `lastexam run` at moments spread over every phase of a run (set-up,
staging, agent, collection, grading, recording, commit, clean-up), resume it, kill it again,
and so on; then check that every planned trial is recorded exactly once with its correct score,
and that no sandbox process, cgroup, work area, lock or temporary file is left.

    .venv/bin/python tests/faults/campaign.py --kills 27 [--seed N] [--json FIGURES.json]

The seed (--seed, else $LASTEXAM_CAMPAIGN_SEED, else a random one) is printed first, so that a
failing campaign can be replayed with the same schedule of kills.

The harness's fault points (src/lastexam/run/faults.py) write a trace and stretch each phase a
little, so that a kill can be aimed at a phase: the campaign waits for the phase's line in the
trace, then kills at a random moment inside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tests" / "data" / "tasks" / "other"
PHASES = ("preflight", "create", "stage", "agent", "collect", "grade", "record", "commit", "cleanup")
DELAYS = {"preflight": 0.4, "create": 0.3, "stage": 0.3, "agent": 0.2, "collect": 0.3,
          "grade": 0.3, "record": 0.3, "commit": 0.3, "cleanup": 0.2}
# About how long each phase's own work takes after its fault point's delay: a kill lands at a
# random moment of delay + work, so it falls inside the work too (or just after it).
WORK = {"preflight": 0.3, "create": 0.05, "stage": 0.02, "agent": 0.5, "collect": 0.05,
        "grade": 0.5, "record": 0.02, "commit": 0.02, "cleanup": 0.02}
HONEST = ("awk -F, 'NR > 1 { s += $1; n++ } END { printf \"{\\\"total\\\": %.6f, \\\"count\\\": %d}\\n\", "
          "s, n }' /task/inputs/data.csv > /task/output/result.json")
CMD = ("if [ -f /task/inputs/wrong ]; then echo '{\"total\": 1, \"count\": 1}' > /task/output/result.json; "
       "elif [ -f /task/inputs/solve.sh ]; then bash /task/inputs/solve.sh; else " + HONEST + "; fi")
EXPECTED = {"fault-honest": 1.0, "fault-wrong": 0.0, "fault-parse": 1.0}
ATTEMPTS = 3
SEED_VAR = "LASTEXAM_CAMPAIGN_SEED"


@dataclass
class Figures:
    seed: int
    kills_planned: int
    kills: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PHASES, 0))
    finished_before_kill: int = 0
    runs: int = 0
    trials_planned: int = 0
    trials_recorded: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    # What the kills left right away (the next start or resume must remove it).
    left_by_kills: dict[str, int] = field(
        default_factory=lambda: {"processes": 0, "cgroups": 0, "work_areas": 0})
    seconds: float = 0.0

    @property
    def kills_done(self) -> int:
        return sum(self.kills.values())

    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.wrong or self.orphans)


def build_tasks(root: Path) -> Path:
    dest = root / "tasks" / "other"
    for task_id, base in (("fault-honest", "column-total"), ("fault-wrong", "column-total"),
                          ("fault-parse", "deliverable-parse")):
        folder = dest / task_id
        shutil.copytree(TASKS / base, folder, ignore=shutil.ignore_patterns("fixtures"))
        toml = folder / "task.toml"
        toml.write_text(toml.read_text().replace(f'id = "{base}"', f'id = "{task_id}"'))
        if task_id == "fault-wrong":
            (folder / "inputs" / "wrong").write_text("")
        if task_id == "fault-parse":
            shutil.copy(folder / "solution" / "solve.sh", folder / "inputs" / "solve.sh")
    return root / "tasks"


def start(tasks: Path, run_dir: Path, trace: Path, resume: bool, delays: bool = True,
          argv_tail: list[str] | None = None) -> subprocess.Popen:
    env = {**os.environ, "LASTEXAM_FAULT_TRACE": str(trace)}
    if delays:
        env["LASTEXAM_FAULT_DELAY"] = ",".join(f"{k}={v}" for k, v in DELAYS.items())
    argv = [sys.executable, "-m", "lastexam", "run"]
    if argv_tail:
        argv += argv_tail
    else:
        argv += ["--resume"] if resume else [str(tasks), "--agent", "command", "--agent-arg",
                                              f"cmd={CMD}", "--attempts", str(ATTEMPTS)]
        argv += ["--concurrency", "2", "--out", str(run_dir)]
    log = trace.with_name(f"stderr-{time.monotonic_ns()}.log")
    with open(log, "wb") as err:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
    proc.stderr_log = log  # type: ignore[attr-defined]
    return proc


def stderr_of(proc: subprocess.Popen) -> str:
    return proc.stderr_log.read_text(errors="replace")[-500:]  # type: ignore[attr-defined]


def kill_in(proc: subprocess.Popen, trace: Path, phase: str, rng: random.Random, timeout: float = 120) -> bool:
    """SIGKILL the run inside the first `phase` it reaches after a random number of others;
    False when the run ended first."""
    offset = trace.stat().st_size if trace.exists() else 0
    skip = rng.randrange(3) if phase not in ("preflight", "create") else 0
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        with open(trace, "rb") as f:
            f.seek(offset)
            seen = [ln.split()[1].decode() for ln in f.read().splitlines() if len(ln.split()) >= 2]
        if seen.count(phase) > skip:
            time.sleep(rng.uniform(0, DELAYS[phase] + WORK[phase]))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        return True
    return False


def run_ids(trace: Path) -> set[str]:
    if not trace.exists():
        return set()
    return {ln.split()[2] for ln in trace.read_text().splitlines() if len(ln.split()) >= 3} - {"-"}


def lastexam_home() -> Path:
    # Imported from the installed package: putting src/ on sys.path would also expose its
    # lastexam.egg-info, which hides the editable install's metadata (Inspect then registers
    # lastexam's tasks without their "lastexam/" namespace in this process).
    from lastexam.paths import lastexam_home as home

    return home()


def check_run(run_dir: Path, figures: Figures) -> None:
    with sqlite3.connect(run_dir / "results.db") as db:
        rows = db.execute("SELECT trial_id, task_id, status, score FROM trials").fetchall()
    planned = {f"{t}__command__none__{a}" for t in EXPECTED for a in range(1, ATTEMPTS + 1)}
    ids = [r[0] for r in rows]
    figures.trials_planned += len(planned)
    figures.trials_recorded += len(set(ids))
    figures.lost += sorted(planned - set(ids))
    figures.duplicated += sorted({i for i in ids if ids.count(i) > 1})
    for trial_id, task_id, status, score in rows:
        if status != "completed" or score != EXPECTED[task_id]:
            figures.wrong.append(f"{trial_id}: {status} {score}")
    folders = {p.name for p in (run_dir / "trials").iterdir()} if (run_dir / "trials").is_dir() else set()
    if folders != set(ids):
        figures.orphans.append(f"{run_dir}: trial folders {sorted(folders ^ set(ids))}")
    figures.orphans += [str(p) for p in run_dir.glob(".results.db.*")]


def leftovers(ids: set[str]) -> list[str]:
    found: list[str] = []
    check_leftovers(ids, found)
    return found


def sandbox_cgroups() -> list[str]:
    """Every sandbox cgroup on the machine (os.walk: others' cgroups come and go meanwhile)."""
    found = []
    for dirpath, dirnames, _ in os.walk("/sys/fs/cgroup"):
        if os.path.basename(dirpath) == "lastexam":
            found += [os.path.join(dirpath, d) for d in dirnames]
            dirnames.clear()
    return found


def check_leftovers(ids: set[str], orphans: list[str]) -> None:
    cgroups = sandbox_cgroups()
    orphans += [f"cgroup {c}" for c in cgroups if any(os.path.basename(c).startswith(f"{i}.") for i in ids)]
    home = lastexam_home()
    markers = [f"{home}/work/{i}/".encode() for i in ids]
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if any(m in cmdline for m in markers):
            orphans.append(f"process {pid}: {cmdline[:160]!r}")
    for i in ids:
        for path in (home / "work" / i, home / "work" / f"{i}.lock",
                     Path(tempfile.gettempdir()) / f"lastexam-gw-{i}"):
            if path.exists():
                orphans.append(f"area {path}")



def campaign_seed(given: int | None = None) -> int:
    """--seed if given, else $LASTEXAM_CAMPAIGN_SEED, else a new random seed."""
    if given is not None:
        return given
    text = os.environ.get(SEED_VAR, "").strip()
    if not text:
        return random.randrange(1 << 30)
    try:
        return int(text)
    except ValueError:
        raise SystemExit(f"{SEED_VAR}={text!r}: not an integer") from None


def campaign(kills: int, seed: int, workdir: Path, log=print) -> Figures:
    rng = random.Random(seed)
    figures = Figures(seed=seed, kills_planned=kills)
    started = time.monotonic()
    tasks = build_tasks(workdir)
    trace = workdir / "trace.log"
    trace.touch()
    schedule = [PHASES[i % len(PHASES)] for i in range(kills)]
    rng.shuffle(schedule)
    run_dirs: list[Path] = []
    current: Path | None = None
    for n, phase in enumerate(schedule):
        if current is None:
            current = workdir / f"run{len(run_dirs)}"
            run_dirs.append(current)
        resume = (current / "results.db").exists()
        if phase in ("preflight", "create") and resume:
            current = workdir / f"run{len(run_dirs)}"  # aimed at a run's set-up: start a new one
            run_dirs.append(current)
            resume = False
        proc = start(tasks, current, trace, resume)
        killed = kill_in(proc, trace, phase, rng)
        if killed:
            figures.kills[phase] += 1
            for item in leftovers(run_ids(trace)):
                kind = {"process": "processes", "cgroup": "cgroups"}.get(item.split()[0], "work_areas")
                figures.left_by_kills[kind] += 1
        else:
            figures.finished_before_kill += 1
            if proc.returncode != 0:
                figures.wrong.append(f"{current}: exited {proc.returncode}: {stderr_of(proc)!r}")
            current = None
        log(f"kill {n + 1}/{kills} at {phase}: {'killed' if killed else 'run finished first'}")
    for run_dir in run_dirs:
        # Killed before the run existed there: run it again in the same folder, as a user would.
        resume = (run_dir / "results.db").exists()
        proc = start(tasks, run_dir, trace, resume=resume, delays=False)
        proc.wait(timeout=600)
        if proc.returncode != 0:
            figures.wrong.append(f"{run_dir}: resume exited {proc.returncode}: {stderr_of(proc)!r}")
            continue
        figures.runs += 1
        check_run(run_dir, figures)
    # One more run sweeps the leftovers of runs killed before their run directory existed.
    sweeper = [str(TASKS / "column-total"), "--agent", "nop", "--out", str(workdir / "sweeper")]
    start(tasks, workdir / "sweeper", trace, resume=False, delays=False,
          argv_tail=sweeper).wait(timeout=600)
    check_leftovers(run_ids(trace), figures.orphans)
    figures.seconds = round(time.monotonic() - started, 1)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=27)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    a = parser.parse_args()
    seed = campaign_seed(a.seed)
    print(f"campaign seed {seed} (replay: --seed {seed} or {SEED_VAR}={seed})", flush=True)
    workdir = a.keep or Path(tempfile.mkdtemp(prefix="lastexam-campaign-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        figures = campaign(a.kills, seed, workdir)
    finally:
        if a.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    out = {**figures.__dict__, "kills_done": figures.kills_done, "ok": figures.ok()}
    text = json.dumps(out, indent=2)
    print(text)
    if a.json:
        a.json.write_text(text + "\n")
    return 0 if figures.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
