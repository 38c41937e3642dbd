"""A trial's session with the gateway: its token, its upstream, its log, counts and budget."""

from __future__ import annotations

import secrets
import threading
from pathlib import Path
from typing import IO

from lastexam.gateway.models import Budget, CallRecord, SessionSummary, Usage
from lastexam.gateway.prices import PriceTable
from lastexam.gateway.providers import ModelSpec
from lastexam.gateway.upstream import Upstream

# The log holds each request's body (up to 64 MB, the agent's to choose) on the host's disk:
# past this size per trial, calls are logged without their bodies.
MAX_LOG_BYTES = 512 * 1024 * 1024


class Session:
    def __init__(
        self,
        trial_id: str,
        spec: ModelSpec,
        upstream: Upstream,
        budget: Budget,
        log_path: Path,
        prices: PriceTable,
        price_as: tuple[str, str],  # (provider, model) looked up in the price table
    ):
        self.token = "lxg-" + secrets.token_urlsafe(32)
        self.trial_id = trial_id
        self.spec = spec
        self.upstream = upstream
        self.budget = budget
        self.prices = prices
        self.price_as = price_as
        self._lock = threading.Lock()
        self._log: IO[str] = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
        self._seq = 0
        self._log_bytes = 0
        self.summary = SessionSummary(
            model=spec.text, price_table=prices.version, budget=budget
        )
        self._cost_known = True

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def refusal(self) -> str | None:
        """Why a new call must be refused, or None."""
        return self.summary.budget_exhausted

    def cost(self, usage: Usage | None) -> float | None:
        if usage is None:
            return None
        return self.prices.cost(self.price_as[0], self.price_as[1], usage)

    def record(self, call: CallRecord, refused: bool = False) -> None:
        with self._lock:
            s = self.summary
            if refused:
                s.refused_calls += 1
            elif call.counted:
                s.model_calls += 1
                if call.status >= 400:
                    s.failed_calls += 1
                if call.usage is not None:
                    s.usage = s.usage + call.usage
                    if call.cost_usd is None:
                        self._cost_known = False
                    elif self._cost_known:
                        s.cost_usd = round((s.cost_usd or 0.0) + call.cost_usd, 8)
                if not self._cost_known:
                    s.cost_usd = None
                self._check_budget()
            if not self._log.closed:
                line = call.model_dump_json(exclude_none=False)
                if self._log_bytes + len(line) > MAX_LOG_BYTES:
                    line = call.model_copy(update={
                        "request": None, "response": None,
                        "error": (call.error or "") + " [bodies not logged: the trial's gateway "
                        f"log reached {MAX_LOG_BYTES} bytes]",
                    }).model_dump_json(exclude_none=False)
                self._log_bytes += len(line) + 1
                self._log.write(line + "\n")
                self._log.flush()

    def _check_budget(self) -> None:
        s, b = self.summary, self.budget
        if s.budget_exhausted:
            return
        if b.max_tokens is not None and s.usage.total_tokens >= b.max_tokens:
            s.budget_exhausted = (
                f"token budget exhausted: {s.usage.total_tokens} tokens used, "
                f"--max-tokens {b.max_tokens}"
            )
        elif b.max_cost_usd is not None:
            if not self._cost_known:
                s.budget_exhausted = (
                    "cost budget cannot be enforced: the price of a call is unknown"
                )
            elif (s.cost_usd or 0.0) >= b.max_cost_usd:
                s.budget_exhausted = (
                    f"cost budget exhausted: ${s.cost_usd:.4f} spent, --max-cost-usd {b.max_cost_usd}"
                )

    def close(self) -> SessionSummary:
        with self._lock:
            if not self._log.closed:
                self._log.close()
            return self.summary.model_copy(deep=True)
