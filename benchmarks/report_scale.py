"""`lastexam show` and `lastexam report --html` on a synthetic store of 100,000 trials.

    python benchmarks/report_scale.py [--trials 100000] [--repeats 3]

Builds one run directory whose results.db holds N trials (40 agent x model cells, 250 tasks
over every cluster and tier, several attempts, 8 checks per trial, gateway usage, exec-log
summaries), then times each command in a subprocess (median of repeats) and reports its peak
memory (max RSS of the child). Targets: show < 5 s, HTML report < 20 s, memory < 1 GB.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lastexam.store.db import Store, now_iso
from lastexam.store.models import RunConfig
from lastexam.taxonomy import load_taxonomy

TIERS = ("near-term", "full-spectrum", "last-exam")


def build(run_dir: Path, trials: int) -> None:
    rng = random.Random(7)
    store = Store(run_dir, create=True)
    store.create_run("synthetic", RunConfig(task_paths=[], agent="synthetic"), "bench", None)
    subs = load_taxonomy().subdomains
    tasks = [(f"task-{i:03d}", subs[i % len(subs)], TIERS[i % 3]) for i in range(250)]
    cells = [(f"agent-{a}", f"model-{m}") for a in range(5) for m in range(8)]
    attempts = max(1, trials // (len(tasks) * len(cells)))
    conn = store.conn
    conn.execute("BEGIN")
    n = 0
    grade_id = 0
    for agent, model in cells:
        skill = rng.random()
        for task_id, sub, tier in tasks:
            for attempt in range(1, attempts + 1):
                if n >= trials:
                    break
                n += 1
                passed = [rng.random() < skill for _ in range(8)]
                gate_ok = rng.random() > 0.1
                score = (sum(passed) / 8) if gate_ok else 0.0
                full = gate_ok and all(passed)
                status = rng.choices(["completed", "timeout", "agent_error", "infra_error"], [90, 5, 4, 1])[0]
                trial_id = f"{task_id}__{agent}__{model}__{attempt}"
                cost = None if rng.random() < 0.02 else rng.uniform(0.01, 3)
                tokens = (rng.randint(10**4, 10**6), rng.randint(10**3, 10**5))
                calls, agent_s = rng.randint(5, 80), rng.uniform(30, 3000)
                missing = int(rng.random() < 0.05)
                used, share = int(rng.random() < 0.7), rng.random()
                ended_by = "timeout" if status == "timeout" else "exit"
                record = {
                    "ended_by": ended_by, "timings": {"agent": agent_s},
                    "missing_outputs": ["report.json"] * missing,
                    "gateway": {"cost_usd": cost, "model_calls": calls,
                                "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}},
                    "usage": {"used_declared": bool(used), "script_share": share},
                }
                conn.execute(
                    "INSERT INTO trials VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (trial_id, "synthetic", task_id, agent, model, attempt, sub.cluster, sub.id, tier,
                     status, None if status == "infra_error" else score, int(full), now_iso(), now_iso(),
                     ended_by, agent_s, cost, tokens[0], tokens[1], 0, 0, calls, missing, used, share,
                     int(status != "infra_error"), None, json.dumps(record),
                     "harness_error" if status == "infra_error" else status.replace("agent_error", "agent_exit"),
                     0, "[]"),
                )
                if status == "infra_error":
                    continue
                grade_id += 1
                conn.execute(
                    "INSERT INTO grades VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (grade_id, trial_id, "v1", 1, score, int(full), None, now_iso(), 0.5,
                     int(not gate_ok), 8, sum(passed)),
                )
                conn.execute("UPDATE trials SET grade_id=? WHERE trial_id=?", (grade_id, trial_id))
                checks = [(grade_id, 0, "output parses", 0.0, 1, int(gate_ok), 0.0, "", "{}")]
                checks += [
                    (grade_id, i + 1, f"check {i}", 1.0, 0, int(p), float(p), "within tolerance",
                     json.dumps({"expected": 1.5, "seen": 1.5 if p else 2.0}))
                    for i, p in enumerate(passed)
                ]
                conn.executemany("INSERT INTO checks VALUES (?,?,?,?,?,?,?,?,?)", checks)
    conn.execute("COMMIT")
    store.close()


def timed(argv: list[str], repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return statistics.median(times), peak_kib / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        run = Path(d) / "synthetic"
        run.mkdir()
        started = time.perf_counter()
        build(run, args.trials)
        print(f"built {args.trials} trials in {time.perf_counter() - started:.1f} s "
              f"({(run / 'results.db').stat().st_size / 1e6:.0f} MB)")
        lx = [sys.executable, "-m", "lastexam"]
        show_s, show_mb = timed([*lx, "show", str(run)], args.repeats)
        print(f"lastexam show:          median {show_s:.2f} s, peak RSS so far {show_mb:.0f} MB")
        html = Path(d) / "report.html"
        rep_s, rep_mb = timed([*lx, "report", str(run), "--html", str(html)], args.repeats)
        print(f"lastexam report --html: median {rep_s:.2f} s, peak RSS so far {rep_mb:.0f} MB, "
              f"{html.stat().st_size / 1e6:.1f} MB file")


if __name__ == "__main__":
    main()
