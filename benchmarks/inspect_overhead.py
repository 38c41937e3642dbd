"""Inspect AI's per-sample overhead, the comparison point of harness_overhead.py.

    python benchmarks/inspect_overhead.py [--trials 200] [--concurrency 1 8]

One sample stands for one lastexam nop trial: Inspect's mock model answers once (the agent's
turn), the solver runs one process in Inspect's `local` sandbox (the agent's process; that
sandbox is a temporary folder on the host, no isolation at all), and the scorer reads the
sample's output file through the sandbox in-process (Inspect scorers run in the eval process,
where lastexam grades in a sandbox). Concurrency is Inspect's max_samples. One untimed eval
first, so that imports and registries are warm (the harness side is measured the same way:
in-process, after imports). Seconds per sample = eval wall time / samples.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox


@solver
def _one_process():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        result = await sandbox().exec(["sh", "-c", "echo '{\"total\": 0}' > result.json"])
        assert result.success, result.stderr
        return state
    return solve


@scorer(metrics=[accuracy()])
def _read_output():
    async def score(state: TaskState, target: Target) -> Score:
        text = await sandbox().read_file("result.json")
        return Score(value=1.0 if '"total": 0' in text else 0.0)
    return score


def _model(samples: int):
    # Usage given: the mock model otherwise counts tokens with tiktoken, whose encoding it
    # would download.
    out = ModelOutput.from_content(model="mockllm/model", content="done")
    out.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
    return get_model("mockllm/model", custom_outputs=[out] * samples)


def per_sample(samples: int, concurrency: int, tmp: Path) -> float:
    """Seconds per sample of one eval of `samples` samples at `concurrency`."""
    task = Task(dataset=[Sample(input="nop", id=i) for i in range(samples)],
                solver=_one_process(), scorer=_read_output(), sandbox="local")
    started = time.perf_counter()
    (log,) = eval(task, model=_model(samples), max_samples=concurrency, max_subprocesses=concurrency,
                  log_dir=str(tmp / f"logs-{time.monotonic_ns()}"), display="none",
                  log_samples=True, score_display=False)
    elapsed = time.perf_counter() - started
    assert log.status == "success" and log.results is not None, log.error
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    return elapsed / samples


def warm_up(tmp: Path) -> None:
    per_sample(2, 1, tmp)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        warm_up(tmp)
        for k in args.concurrency:
            t = statistics.median(per_sample(args.trials, k, tmp) for _ in range(args.rounds))
            print(f"Inspect local sandbox, concurrency {k}: {t * 1000:.1f} ms per sample")


if __name__ == "__main__":
    main()
