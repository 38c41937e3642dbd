"""Per-trial overhead of the Ray backend against the local one, on the same machine.

    python benchmarks/ray_overhead.py [--trials 50] [--rounds 3]

The nop agent on the trivial task tests/data/tasks/other/column-total, N trials one at a time:
locally (--concurrency 1), then with --backend ray on a local Ray cluster (a head without CPUs
and one worker node of 1 CPU, so that trials also run one at a time). The cluster's start is
not counted; each run's node check is (it is part of every run). Prints the medians over the
rounds of wall time per trial and their difference, and the size of the archive a worker sends
back per trial (what crosses the network on a real cluster). Needs `pip install -e '.[ray]'`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

from lastexam.paths import lastexam_home
from lastexam.run.backends.ray_worker import pack
from lastexam.run.runner import execute
from lastexam.store.models import RunConfig

ROOT = Path(__file__).resolve().parent.parent
TASK = ROOT / "tests" / "data" / "tasks" / "other" / "column-total"


def per_trial(trials: int, backend: str, tmp: Path) -> tuple[float, Path]:
    config = RunConfig(task_paths=[str(TASK)], agent="nop", attempts=trials, backend=backend)
    started = time.perf_counter()
    outcome = execute(config, tmp / f"{backend}-{time.monotonic_ns()}")
    elapsed = time.perf_counter() - started
    assert len(outcome.trials) == trials and all(t.status == "completed" for t in outcome.trials)
    return elapsed / trials, outcome.run_dir


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    cluster.add_node(num_cpus=1, env_vars={"LASTEXAM_HOME": str(lastexam_home())})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            local, remote, sizes = [], [], []
            for _ in range(args.rounds):
                local.append(per_trial(args.trials, "local", tmp)[0])
                seconds, run_dir = per_trial(args.trials, "ray", tmp)
                remote.append(seconds)
                sizes += [len(pack(p)) for p in (run_dir / "trials").iterdir()]
            lo, re = statistics.median(local), statistics.median(remote)
            print(f"{args.trials} nop trials per run, {args.rounds} rounds, medians, ms per trial")
            print(f"local {lo * 1000:.1f}  ray {re * 1000:.1f}  overhead {(re - lo) * 1000:.1f}")
            print(f"rounds: local {[round(x * 1000, 1) for x in local]} "
                  f"ray {[round(x * 1000, 1) for x in remote]}")
            print(f"trial archive sent back: median {statistics.median(sizes) / 1024:.1f} KiB")
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
