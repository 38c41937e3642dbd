"""Where a run's trials execute: on this machine (local) or on a Ray cluster (ray). The driver
(run/runner.py) plans the trials, opens the run and records every trial whichever backend ran
it; a backend checks that its machines are ready and turns plans into decided trials."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from lastexam.run.probing import Prober
from lastexam.run.session import RunSession
from lastexam.run.trial import TrialPlan
from lastexam.sandbox.base import SandboxProvider
from lastexam.store.models import RunConfig, TrialRecord


class Backend(Protocol):
    def check(self, plans: list[TrialPlan], provider: SandboxProvider) -> None:
        """Raise LastexamError, naming each problem, when the trials cannot start."""

    def run(self, plans: list[TrialPlan], session: RunSession,
            prober: Prober | None) -> Iterator[TrialRecord]:
        """Run the trials; yield each one once it is recorded in the session's store. Raises
        RunAborted when no further trial can be recorded."""


def make_backend(config: RunConfig) -> Backend:
    """The one place that decides where trials run."""
    if config.backend == "ray":
        from lastexam.run.backends.ray_backend import RayBackend

        return RayBackend(config)
    from lastexam.run.backends.local import LocalBackend

    return LocalBackend(config)
