"""The local backend: trials run in threads of this process, at most `concurrency` at once,
each in a sandbox on this machine, with the run's model gateway here."""

from __future__ import annotations

import threading
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
            workers = max(1, self.config.concurrency)
            # Recording (files into the run folder, the store's commit, the workspace's release)
            # is one thread's work, done while the next trials run; at most `workers` decided
            # trials wait for it. Its exit waits for every trial handed to it.
            with ThreadPoolExecutor(1, thread_name_prefix="record") as recorder, \
                    ThreadPoolExecutor(max_workers=workers) as pool:
                room = threading.BoundedSemaphore(workers)

                def trial(plan: TrialPlan) -> Future[TrialRecord]:
                    decided = runner.decide(plan)
                    room.acquire()
                    recorded = recorder.submit(runner.record, plan, decided)
                    recorded.add_done_callback(lambda _: room.release())
                    return recorded

                pending: set[Future[Future[TrialRecord]]] = {pool.submit(trial, p) for p in plans}
                try:
                    # as_completed waits on each future once (wait() in a loop walks every
                    # pending one per finished trial: quadratic in the trials of a run). It
                    # copies the set; a yielded trial's record is dropped from ours.
                    for fut in as_completed(pending):
                        pending.discard(fut)
                        yield fut.result().result()  # RunAborted stops the run
                finally:
                    for other in pending:
                        other.cancel()
                    wait(pending)
        finally:
            if gateway is not None:
                gateway.stop()
