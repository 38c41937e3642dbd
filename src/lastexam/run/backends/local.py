"""The local backend: trials run in threads of this process, at most `concurrency` at once,
each in a sandbox on this machine, with the run's model gateway here."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from typing import TYPE_CHECKING

from lastexam.run.probing import Prober
from lastexam.run.readiness import check_ready
from lastexam.run.session import RunSession
from lastexam.run.trial import TrialPlan
from lastexam.sandbox.base import SandboxProvider
from lastexam.store.models import RunConfig, TrialRecord


def uses_gateway(plans: list[TrialPlan]) -> bool:
    return any(p.model is not None and p.agent.wire_for(p.model) is not None for p in plans)


if TYPE_CHECKING:
    from lastexam.gateway.server import Gateway


class LocalBackend:
    def __init__(self, config: RunConfig):
        self.config = config

    def check(self, plans: list[TrialPlan], provider: SandboxProvider) -> None:
        check_ready(plans, provider, self.config.probe_model)

    def run(self, plans: list[TrialPlan], session: RunSession,
            prober: Prober | None) -> Iterator[TrialRecord]:
        gateway: Gateway | None = None
        if uses_gateway(plans):
            from lastexam.gateway.server import Gateway  # only with a model: slow to import

            gateway = Gateway(session.area.gateway_socket())
            gateway.start()
        try:
            runner = session.trial_runner(gateway, self.config.max_retries, prober)
            with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
                pending: set[Future[TrialRecord]] = {pool.submit(runner.run, p) for p in plans}
                try:
                    # as_completed waits on each future once (wait() in a loop walks every
                    # pending one per finished trial: quadratic in the trials of a run). It
                    # copies the set; a yielded trial's record is dropped from ours.
                    for fut in as_completed(pending):
                        pending.discard(fut)
                        yield fut.result()  # RunAborted stops the run
                finally:
                    for other in pending:
                        other.cancel()
                    wait(pending)
        finally:
            if gateway is not None:
                gateway.stop()
