"""Start-up cost of one sandbox and of one whole trial, per sandbox provider.

    python benchmarks/sandbox_startup.py [--sandboxes 20] [--trials 5] [--providers bwrap podman]

Sandbox: provider.run of /bin/true with the `base` environment's venv mounted, as a trial's
sandboxes are started (limits, supervision, teardown and the survivors' check included).
Trial: the nop agent on tests/data/tasks/other/column-total through the real run machinery
(two sandboxes per trial: the agent's and the grader's), sequentially.
Prints the median of each, per provider; run by hand (shared machines are noisy). The
podman provider needs `lastexam env build-image base` first.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from lastexam.envs import manage
from lastexam.run.runner import execute, new_run_id
from lastexam.run.session import make_provider
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import SandboxLimits, SandboxRequest
from lastexam.store.models import RunConfig

ROOT = Path(__file__).resolve().parent.parent
TASK = ROOT / "tests" / "data" / "tasks" / "other" / "column-total"


def sandbox_starts(provider_name: str, count: int) -> list[float]:
    area = RunWorkArea.for_run(new_run_id(f"bench-{provider_name}"))
    area.prepare()
    provider = make_provider(provider_name, area.etc)
    problems = provider.preflight()
    if problems:
        raise SystemExit(f"{provider_name}: {problems}")
    env = manage.load("base", ROOT)
    times = []
    try:
        for i in range(count):
            request = SandboxRequest(
                name=f"{area.root.name}.bench-{i}", argv=["/bin/true"], mounts=env.mounts(),
                env=env.variables(), cwd="/",
                limits=SandboxLimits(wall_s=60, memory_mb=512, max_processes=64, watch_bytes=0),
                stdout=Path("/dev/null"), stderr=area.root / "bench.err",
            )
            started = time.perf_counter()
            result = provider.run(request)
            times.append(time.perf_counter() - started)
            assert result.exit_code == 0 and not result.survivors, result
    finally:
        area.remove()
    return times


def trials(provider_name: str, count: int, tmp: Path) -> list[float]:
    times = []
    for i in range(count):
        config = RunConfig(task_paths=[str(TASK)], agent="nop", sandbox=provider_name)
        started = time.perf_counter()
        outcome = execute(config, tmp / f"run-{provider_name}-{i}")
        times.append(time.perf_counter() - started)
        assert [t.status for t in outcome.trials] == ["completed"]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sandboxes", type=int, default=20)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--providers", nargs="+", default=["bwrap", "podman"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.providers:
            starts = sandbox_starts(name, args.sandboxes)
            whole = trials(name, args.trials, Path(tmp))
            print(f"{name}: sandbox start-to-end median {statistics.median(starts) * 1000:.0f} ms "
                  f"(n={len(starts)}); nop trial median {statistics.median(whole):.2f} s "
                  f"(n={len(whole)})")


if __name__ == "__main__":
    main()
