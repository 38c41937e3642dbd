"""Harness overhead per trial against the physical floor, in one invocation.

    python benchmarks/harness_overhead.py [--trials 200] [--concurrency 1 8]

Harness: the nop agent on the trivial task tests/data/tasks/other/column-total through the
real run machinery (stage, agent sandbox, snapshot, grading sandbox, record), N trials.
Floor: per trial, two bare launches of bwrap with the same namespaces and mounts running
/bin/true (no cgroup, no uid switch, no supervision), plus one SQLite commit of a row. Both run sequentially and with K threads.
Also: the median step timings of the harness's trials (stage, agent, collect, grade, record
from each trial.json), and the wall time of a whole one-trial `lastexam run` from process
start to printed result; and, when inspect_ai is installed (the [interop] extra), Inspect's
local sandbox with its mock model per sample (benchmarks/inspect_overhead.py), in the same run.
Harness, floor and Inspect run in alternation, round by round. Prints medians and ratios, and
what a new file costs on the disk before and after (benchmarks/inode_cost.py: on an ext4
without a journal it grows with what runs removed in the last minutes, and moves the harness's
figures, not the floor's; --settle SECONDS first waits for the disk to settle); run by hand
(shared machines are noisy).
The same script measures another checkout when run with that checkout's Python (its venv).
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

from lastexam.paths import lastexam_home
from lastexam.run.runner import execute, new_run_id
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import SandboxLimits, SandboxRequest
from lastexam.sandbox.bwrap import BwrapProvider
from lastexam.store.models import RunConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
import inode_cost  # benchmarks/ is not a package

ROOT = Path(__file__).resolve().parent.parent
TASK = ROOT / "tests" / "data" / "tasks" / "other" / "column-total"


STEPS = ("stage", "agent", "collect", "grade", "record")
_CLI_RUNS = itertools.count()  # each one-trial run gets a new --out folder


def harness(trials: int, concurrency: int, tmp: Path, steps: dict[str, list[float]],
            cpu: list[tuple[float, float]] | None = None) -> float:
    """Seconds per trial; each trial's step timings (trial.json) are added to `steps`, and the
    harness process's own CPU seconds per trial (user, system) to `cpu`."""
    config = RunConfig(task_paths=[str(TASK)], agent="nop", attempts=trials, concurrency=concurrency)
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    outcome = execute(config, tmp / f"run-{concurrency}-{time.monotonic_ns()}")
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    if cpu is not None:
        cpu.append(((after.ru_utime - before.ru_utime) / trials, (after.ru_stime - before.ru_stime) / trials))
    assert len(outcome.trials) == trials and all(t.status == "completed" for t in outcome.trials)
    for t in outcome.trials:
        for step in STEPS:
            if (value := getattr(t.timings, step)) is not None:
                steps.setdefault(step, []).append(value)
    return elapsed / trials


def floor(trials: int, concurrency: int, tmp: Path) -> float:
    """Two bare bwrap launches (same namespaces and mounts as a trial's, running /bin/true,
    without the harness's cgroup, uid switch or supervision) and one SQLite commit."""
    area = RunWorkArea.for_run(new_run_id("floor"))
    area.prepare()
    provider = BwrapProvider(area.etc)
    provider.preflight()
    request = SandboxRequest(
        name="floor", argv=["/bin/true"], mounts=[], env={"PATH": "/usr/bin"}, cwd="/",
        limits=SandboxLimits(wall_s=30, memory_mb=512, max_processes=64, watch_bytes=0),
        stdout=Path("/dev/null"), stderr=Path("/dev/null"),
    )
    argv = ["bwrap", *provider._isolation_args(), *provider._filesystem_args(request), "--", "/bin/true"]
    db = sqlite3.connect(tmp / f"floor-{concurrency}-{time.monotonic_ns()}.db", check_same_thread=False,
                         isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    lock = threading.Lock()

    def one(i: int) -> None:
        for _ in range(2):
            subprocess.run(argv, check=True)
        with lock:
            db.execute("INSERT INTO t (v) VALUES (?)", (str(i),))

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(trials)))
    elapsed = time.perf_counter() - started
    area.remove()
    return elapsed / trials


def one_trial_cli(repeats: int, tmp: Path, pythonpath: str | None = None, warm_up: bool = True) -> list[float]:
    """Wall times of whole one-trial runs, after one untimed run, with Python's bytecode cache
    on (as an installed lastexam runs: PYTHONDONTWRITEBYTECODE would compile every module of
    every run). pythonpath: another checkout's src/, put first."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    times = []
    for _ in range(repeats + int(warm_up)):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "lastexam", "run", str(TASK), "--agent", "oracle", "--json",
             "--out", str(tmp / f"cli-{next(_CLI_RUNS)}")],
            check=True, capture_output=True, env=env,
        )
        times.append(time.perf_counter() - started)
    return times[int(warm_up):]


def _inspect_module(tmp: Path) -> ModuleType | None:
    """benchmarks/inspect_overhead.py, warmed up, or None without inspect_ai."""
    try:
        import inspect_overhead
    except ImportError:
        print("(inspect_ai not installed: no Inspect column; pip install -e '.[interop]')")
        return None
    inspect_overhead.warm_up(tmp)
    return inspect_overhead


SETTLED_MS = 0.06  # a quiet ext4 here: 0.03 ms; minutes after tens of thousands of removals: 0.26


def settle(limit_s: float) -> None:
    """Wait until a new file on LASTEXAM_HOME's disk costs under SETTLED_MS (or limit_s has
    passed): on an ext4 without a journal every new inode first passes over those freed in the
    last minutes, so another run's removals would be measured as this harness's cost."""
    started = time.monotonic()
    while (ms := inode_cost.file_made(lastexam_home(), 100)) >= SETTLED_MS:
        if time.monotonic() - started > limit_s:
            print(f"the disk did not settle in {limit_s:.0f} s (a file made in {ms:.3f} ms): measuring anyway")
            return
        time.sleep(20)
    print(f"the disk settled (a file made in {ms:.3f} ms) after {time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--rounds", type=int, default=3, help="repeat each measurement; medians")
    parser.add_argument("--settle", type=float, default=0, metavar="SECONDS",
                        help="first wait, up to SECONDS, until making a file costs under "
                        f"{SETTLED_MS} ms (removals of the last minutes slow it on some disks)")
    args = parser.parse_args()
    if args.settle > 0:
        settle(args.settle)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print(f"{args.trials} trials per measurement, {args.rounds} rounds, medians in ms per trial")
        inspect = _inspect_module(tmp)
        print(f"{'concurrency':>11} {'harness':>9} {'floor':>9} {'ratio':>7}"
              + (f" {'inspect':>9}" if inspect else ""))
        steps: dict[int, dict[str, list[float]]] = {}
        ratios: dict[int, list[float]] = {}  # each round's harness over its own floor
        cpu: dict[int, list[tuple[float, float]]] = {}
        disk = [inode_cost.run(lastexam_home(), 300)]
        for k in args.concurrency:
            steps[k], cpu[k] = {}, []
            # Harness, floor and Inspect in alternation, round by round: the machine drifts
            # (each run's removals slow the next runs' new files for minutes), and alternation
            # spreads the drift over all three.
            hs, fs, ins = [], [], []
            for _ in range(args.rounds):
                hs.append(harness(args.trials, k, tmp, steps[k], cpu[k]))
                fs.append(floor(args.trials, k, tmp))
                if inspect:
                    ins.append(inspect.per_sample(args.trials, k, tmp))
            h, f = statistics.median(hs), statistics.median(fs)
            i = statistics.median(ins) if ins else None
            print(f"{k:>11} {h * 1000:>9.1f} {f * 1000:>9.1f} {h / f:>6.2f}x"
                  + (f" {i * 1000:>9.1f}" if i is not None else ""))
            ratios[k] = [x / y for x, y in zip(hs, fs, strict=True)]
        print("each round's ratio (harness / the floor measured right after it):")
        for k, of_k in ratios.items():
            print(f"  concurrency {k}: " + ", ".join(f"{r:.2f}x" for r in of_k))
        print("median step timings of those trials (trial.json), ms:")
        for k, by_step in steps.items():
            parts = [f"{s} {statistics.median(by_step[s]) * 1000:.1f}" for s in STEPS if s in by_step]
            print(f"  concurrency {k}: " + ", ".join(parts))
        print("the harness process's own CPU per trial (medians of the rounds), ms:")
        for k, rounds in cpu.items():
            print(f"  concurrency {k}: user {statistics.median(u for u, _ in rounds) * 1000:.1f}, "
                  f"system {statistics.median(s for _, s in rounds) * 1000:.1f}")
        cli = one_trial_cli(5, tmp)
        print(f"one-trial `lastexam run` (oracle) wall time, median of 5: {statistics.median(cli):.3f} s")
        disk.append(inode_cost.run(lastexam_home(), 300))
        print("the disk, per entry (benchmarks/inode_cost.py --n 300), before and after:")
        for line in disk:
            print(f"  {line.strip()}")


if __name__ == "__main__":
    main()
