"""Opening a run: the one way `run`, `validate` and `regrade` get a run id, a claimed work
area, a ready sandbox provider and the run's store, and give them back when they end."""

from __future__ import annotations

import os
import platform
import re
import secrets
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from lastexam import __version__
from lastexam.errors import LastexamError
from lastexam.paths import package_dir
from lastexam.run.faults import point
from lastexam.run.leftovers import claim_run, remove_leftovers, sweep_dead_runs
from lastexam.run.probing import Prober
from lastexam.run.trial import TrialRunner
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import SandboxProvider
from lastexam.sandbox.bwrap import BwrapProvider
from lastexam.store.db import Store, create_store
from lastexam.store.models import HostFacts, Repro, RunConfig

if TYPE_CHECKING:
    from lastexam.gateway.server import Gateway


def new_run_id(agent: str) -> str:
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", agent)[-40:]  # an outside agent is module:Class
    return f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{label}-{secrets.token_hex(2)}"


PROVIDERS = ("bwrap", "podman")


def make_provider(name: str, etc_dir: Path) -> SandboxProvider:
    if name == "podman":
        from lastexam.sandbox.podman import PodmanProvider

        return PodmanProvider(etc_dir)
    if name != "bwrap":
        raise LastexamError(f"unknown sandbox provider {name!r} (known: {', '.join(PROVIDERS)})")
    return BwrapProvider(etc_dir)


@cache
def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(package_dir()), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def host_facts(node: str = "") -> HostFacts:
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return HostFacts(
        cpus=os.cpu_count(), memory_bytes=mem, kernel=platform.release(),
        machine=platform.machine(), python=platform.python_version(), node=node,
    )


def check_sandbox(provider: SandboxProvider) -> None:
    """The default readiness check: the sandbox provider's own preflight."""
    problems = provider.preflight()
    if problems:
        raise LastexamError("sandbox not ready: " + "; ".join(problems))


@dataclass
class RunSession:
    """An open run: everything a trial or a grading needs from the run around it."""

    run_id: str
    run_dir: Path
    area: RunWorkArea
    provider: SandboxProvider
    store: Store

    def repro(self) -> Repro:
        """The run-wide part of each trial's reproducibility record."""
        return Repro(
            harness_version=__version__, git_commit=git_commit(),
            sandbox=self.provider.settings(), host=host_facts(),
        )

    def trial_runner(self, gateway: Gateway | None = None, max_retries: int = 2,
                     prober: Prober | None = None) -> TrialRunner:
        return TrialRunner(
            run_id=self.run_id, run_dir=self.run_dir, store=self.store, provider=self.provider,
            area=self.area, repro=self.repro(), gateway=gateway, max_retries=max_retries,
            prober=prober,
        )


@contextmanager
def claimed_area(
    name: str, sandbox: str, ready: Callable[[SandboxProvider], None] = check_sandbox,
) -> Iterator[tuple[RunWorkArea, SandboxProvider]]:
    """Claim the work area `name` (removing what killed runs left), and a sandbox provider
    that `ready` accepts (it raises when not). On exit the area is removed and released."""
    area = RunWorkArea.for_run(name)
    claim = None
    try:
        claim = claim_run(area)
        sweep_dead_runs(area.root.parent, skip=name)
        # A killed run's leftovers (sandboxes, cgroups, workspaces, task copies) are not reused.
        remove_leftovers(area)
        provider = make_provider(sandbox, area.etc)
        point("preflight", name)
        ready(provider)
        yield area, provider
    finally:
        if claim is not None:
            area.remove()
            claim.release()


@contextmanager
def open_run(
    run_id: str,
    run_dir: Path,
    *,
    create: RunConfig | None = None,
    store: Store | None = None,
    sandbox: str = "bwrap",
    ready: Callable[[SandboxProvider], None] = check_sandbox,
) -> Iterator[RunSession]:
    """Claim the run's work area (removing what killed runs left), check that the sandbox is
    ready (`ready` raises when not), then open the run's store: `store` when already open,
    a new run in `run_dir` when `create` is given, else the run stored in `run_dir`. Nothing
    is written to `run_dir` before `ready` passes. On exit the store is closed and the work
    area removed."""
    if store is None and create is None:
        store = Store(run_dir)  # before anything else: a folder that holds no run is refused
    try:
        with claimed_area(run_id, sandbox, ready) as (area, provider):
            if store is None and create is not None:
                point("create", run_id)
                store = _create_run(run_dir, run_id, create)
            area.prepare()
            yield RunSession(run_id, run_dir, area, provider, store)
    finally:
        if store is not None:
            store.close()


def _create_run(run_dir: Path, run_id: str, config: RunConfig) -> Store:
    """A folder that already holds a run is refused by create_store (atomically)."""
    if run_dir.exists() and not run_dir.is_dir():
        raise LastexamError("this run directory is a file, not a folder", path=run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise LastexamError(f"cannot create the run directory: {e.strerror}", path=run_dir) from None
    return create_store(run_dir, run_id, config, __version__, git_commit())
