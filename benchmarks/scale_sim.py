"""A full evaluation in miniature, on a local Ray cluster: thousands of trials of a sleeping
agent, time-scaled, at 1, 2 and 4 nodes; and the driver's own limit, the store's commit rate.

    python benchmarks/scale_sim.py [--trials 2000] [--slots 4] [--hour-s 0.2] [--nodes 1 2 4]

Durations (seeded): 85% log-uniform between 10 min and 2 h, 15% uniform between 2 h and the
5 h cap (mean 69 min). One simulated hour lasts --hour-s real seconds. Each node is a Cluster
node with --slots CPUs; each trial is a Ray task of 1 CPU that sleeps its duration and returns
an archive of --archive-kib (a nop trial's folder is about 30 KiB), which the driver records
as run/backends/ray_backend.py does: one store commit per trial (a synthetic record with a
grade of 9 checks). Throughput is trials per simulated hour of wall time; efficiency is the
throughput at n nodes over n times that at one node. Also prints the rate at which one
process commits such records to a results.db (record_trial), the ceiling of any backend.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import tempfile
import time
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

from lastexam.store.db import create_store, now_iso
from lastexam.store.models import (
    CheckResult,
    GradeRecord,
    PolicyDecision,
    RunConfig,
    TrialKey,
    TrialRecord,
)

MIN, HOUR, CAP = 60.0, 3600.0, 5 * 3600.0


def durations(n: int, seed: int) -> list[float]:
    """Simulated seconds per trial."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.85:
            out.append(10 * MIN * (2 * HOUR / (10 * MIN)) ** rng.random())
        else:
            out.append(rng.uniform(2 * HOUR, CAP))
    return out


def record(i: int, run_id: str) -> TrialRecord:
    checks = [CheckResult(name=f"check {c}", weight=1.0, gate=c == 0, passed=c % 3 != 1,
                          points=float(c % 3 != 1), message="ok") for c in range(9)]
    now = now_iso()
    key = TrialKey(task_id=f"task-{i % 1490:04d}", agent="sim", model="m", attempt=1 + i // 1490)
    return TrialRecord(
        trial_id=key.trial_id, run_id=run_id, key=key, task_path="/tasks/x", cluster="other",
        subdomain="other", tier="standard", status="completed", score=0.5, full_pass=False,
        started_at=now, finished_at=now,
        grade=GradeRecord(grader_version="g", ok=True, score=0.5, full_pass=False, checks=checks,
                          created_at=now, duration_s=0.1),
        policy=PolicyDecision(kind="completed", counts=True),
    )


def sleeper(seconds: float, archive_bytes: int) -> bytes:
    time.sleep(seconds)
    return bytes(archive_bytes)


def simulate(nodes: int, slots: int, real: list[float], archive: int, tmp: Path) -> float:
    """Wall seconds to run every trial on `nodes` nodes, recording each in a store."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(nodes):
        cluster.add_node(num_cpus=slots)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
    task = ray.remote(num_cpus=1, max_retries=0)(sleeper)
    run_dir = tmp / f"sim-{nodes}"
    run_dir.mkdir()
    store = create_store(run_dir, "sim", RunConfig(task_paths=[], agent="sim"), "0", None)
    try:
        ray.get([task.remote(0, 0) for _ in range(nodes * slots)])  # workers started
        queue = list(enumerate(real))
        window = 2 * nodes * slots
        inflight: dict = {}
        started = time.perf_counter()
        while queue or inflight:
            while queue and len(inflight) < window:
                i, seconds = queue.pop(0)
                inflight[task.remote(seconds, archive)] = i
            [ref], _ = ray.wait(list(inflight), num_returns=1)
            i = inflight.pop(ref)
            ray.get(ref)
            store.record_trial(record(i, "sim"))
        return time.perf_counter() - started
    finally:
        store.close()
        ray.shutdown()
        cluster.shutdown()


def commit_rate(n: int, tmp: Path) -> float:
    run_dir = tmp / "commits"
    run_dir.mkdir()
    store = create_store(run_dir, "sim", RunConfig(task_paths=[], agent="sim"), "0", None)
    records = [record(i, "sim") for i in range(n)]
    started = time.perf_counter()
    for r in records:
        store.record_trial(r)
    elapsed = time.perf_counter() - started
    store.close()
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--slots", type=int, default=4, help="CPUs (trials at once) per node")
    parser.add_argument("--hour-s", type=float, default=0.2, help="real seconds per simulated hour")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--archive-kib", type=int, default=30)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    simulated = durations(args.trials, args.seed)
    real = [s / HOUR * args.hour_s for s in simulated]
    print(f"{args.trials} trials, mean {statistics.mean(simulated) / MIN:.0f} min, median "
          f"{statistics.median(simulated) / MIN:.0f} min, {sum(simulated) / HOUR:.0f} trial-hours;"
          f" 1 h = {args.hour_s} s; {args.slots} slots per node")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base = None
        print(f"{'nodes':>5} {'wall s':>8} {'trials/sim h':>13} {'linear':>8} {'efficiency':>10} "
              f"{'busy':>6}")
        for n in args.nodes:
            wall = simulate(n, args.slots, real, args.archive_kib * 1024, tmp)
            per_hour = args.trials / (wall / args.hour_s)
            base = base or per_hour / n
            busy = sum(real) / (wall * n * args.slots)  # share of slot time spent in trials
            print(f"{n:>5} {wall:>8.1f} {per_hour:>13.1f} {base * n:>8.1f} "
                  f"{per_hour / (base * n):>9.1%} {busy:>6.1%}")
        rate = commit_rate(5000, tmp)
        print(f"store: {rate:.0f} record_trial commits per second (5000 records, 9 checks each)")


if __name__ == "__main__":
    main()
