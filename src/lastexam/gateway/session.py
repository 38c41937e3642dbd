"""A trial's session with the gateway: its token, its upstream, its log, counts and budget."""

from __future__ import annotations

import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic_core import PydanticSerializationError

from lastexam.gateway.models import (
    MAX_LOG_LINE,
    Allowances,
    Budget,
    CallRecord,
    SessionSummary,
    Usage,
)
from lastexam.gateway.prices import PriceTable
from lastexam.gateway.providers import ModelSpec
from lastexam.gateway.upstream import Upstream

# The log holds each request's body (the agent's to choose) on the host's disk: past this
# size per trial, or in a line longer than MAX_LOG_LINE, calls are logged without bodies.
MAX_LOG_BYTES = 512 * 1024 * 1024
# Lines without bodies are small but come as fast as the agent sends requests (thousands a
# second of refused ones): past this size the log ends, and only the summary counts calls.
MAX_LOG_TOTAL = MAX_LOG_BYTES + 64 * 1024 * 1024
ENDED_OPEN = "the trial ended with this call still open: charged its upper bound"
# Of a call logged without bodies, its path and error (which may quote the request) are kept
# to this many characters.
MAX_FIELD = 1000
# A trial's gateway token: the prefix, then TOKEN_BYTES random bytes in URL-safe base64.
TOKEN_PREFIX = "lxg-"
TOKEN_BYTES = 32
TOKEN_PATTERN = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{43}")  # 32 bytes: 43 chars


@dataclass
class _Open:
    """A call in flight: its record so far and the upper bound it holds against the budget."""

    call: CallRecord
    bound: Usage
    bound_cost: float


def charge_estimate(bound: Usage, seen: Usage | None) -> Usage:
    """What a call whose answer did not end normally is charged: the usage seen so far
    where it counts the prompt, else the bound's input; output at the bound."""
    if seen is not None and seen.prompt_tokens > 0:
        return seen.model_copy(update={"output_tokens": max(seen.output_tokens,
                                                             bound.output_tokens)})
    seen_out = seen.output_tokens if seen is not None else 0
    return Usage(input_tokens=bound.input_tokens,
                 output_tokens=max(seen_out, bound.output_tokens))


def _without_bodies(call: CallRecord, why: str) -> CallRecord:
    """The call as logged past the caps: a line of bounded size, whatever the request held
    (the names it chose are bounded when the record is made: models.MAX_NAME)."""
    return call.model_copy(update={
        "request": None, "response": None, "path": call.path[:MAX_FIELD],
        "error": (call.error or "")[:MAX_FIELD] + f" [bodies not logged: {why}]",
    })


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
        allow: Allowances | None = None,
    ):
        self.token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        self.trial_id = trial_id
        self.spec = spec
        self.upstream = upstream
        self.budget = budget
        self.allow = allow or Allowances()
        self.closed = threading.Event()  # set when the trial ends; open streams are cut
        self._open: dict[int, _Open] = {}
        self.prices = prices
        self.price_as = price_as
        self._lock = threading.Lock()
        self._log: IO[str] = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
        self._seq = 0
        self._log_bytes = 0
        self._log_full = False  # MAX_LOG_TOTAL reached: no more lines
        self.summary = SessionSummary(
            model=spec.text, price_table=prices.version, budget=budget
        )
        self._cost_known = True

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def begin(self, call: CallRecord, bound: Usage) -> str | None:
        """Reserve a model call's upper bound against the budget until it is settled; why
        it is refused, or None."""
        with self._lock:
            if self.closed.is_set():
                return "the trial's session is closed"
            if self.summary.budget_exhausted:
                return f"the trial's budget is exhausted ({self.summary.budget_exhausted})"
            why = self._over_budget(bound, list(self._open.values()))
            if why is not None:
                alone = self._over_budget(bound, [])
                if alone is not None:  # not even once the calls in flight are settled
                    self.summary.budget_exhausted = f"budget cannot cover the next call: {alone}"
                return f"the trial's budget cannot cover this call: {why}"
            self._open[call.seq] = _Open(call, bound, self.cost(bound) or 0.0)
            return None

    def _over_budget(self, bound: Usage, in_flight: list[_Open]) -> str | None:
        s, b = self.summary, self.budget
        if not bound.total_tokens:
            return None
        held = sum((o.bound for o in in_flight), Usage())
        if b.max_tokens is not None:
            total = s.usage.total_tokens + held.total_tokens + bound.total_tokens
            if total > b.max_tokens:
                return (
                    f"this call could use up to {bound.total_tokens} tokens ({bound.input_tokens}"
                    f" estimated from its body's size, {bound.output_tokens} of output at its "
                    f"limit); with {s.usage.total_tokens} used and {held.total_tokens} held by "
                    f"calls in flight, that would pass --max-tokens {b.max_tokens}"
                )
        if b.max_cost_usd is not None:
            cost = self.cost(bound)
            if cost is None or not self._cost_known:
                return "cost budget cannot be enforced: the price of a call is unknown"
            spent = (s.cost_usd or 0.0) + sum(o.bound_cost for o in in_flight)
            if spent + cost > b.max_cost_usd:
                return (
                    f"this call could cost up to ${cost:.4f}; with ${spent:.4f} spent or held "
                    f"by calls in flight, that would pass --max-cost-usd {b.max_cost_usd}"
                )
        return None

    def settle(self, call: CallRecord, usage: Usage | None, complete: bool) -> None:
        """Charge a call that `begin` let through (or one that is not a model call) and log
        it; a call already charged when the session closed is left as charged then."""
        with self._lock:
            held = self._open.pop(call.seq, None)
            if call.counted and held is None:
                return
            if held is not None and (not complete or (usage is None and call.status < 400)):
                usage, call.estimated = charge_estimate(held.bound, usage), True
            call.usage, call.cost_usd = usage, self.cost(usage)
            self._record(call)

    def cost(self, usage: Usage | None) -> float | None:
        if usage is None:
            return None
        return self.prices.cost(self.price_as[0], self.price_as[1], usage)

    def record(self, call: CallRecord, refused: bool = False) -> None:
        with self._lock:
            self._record(call, refused)

    def _record(self, call: CallRecord, refused: bool = False) -> None:
        s = self.summary
        if refused:
            s.refused_calls += 1
        elif call.counted:
            s.model_calls += 1
            if call.status >= 400:
                s.failed_calls += 1
            if call.estimated:
                s.estimated_calls += 1
            if call.usage is not None:
                s.usage = s.usage + call.usage
                if call.cost_usd is None:
                    self._cost_known = False
                elif self._cost_known:
                    s.cost_usd = round((s.cost_usd or 0.0) + call.cost_usd, 8)
            if not self._cost_known:
                s.cost_usd = None
            self._check_budget()
        if not self._log.closed and not self._log_full:
            try:
                line = call.model_dump_json(exclude_none=False)
            except PydanticSerializationError:  # a request nested deeper than it writes
                line = _without_bodies(call, "nested too deep").model_dump_json()
            if len(line) > MAX_LOG_LINE or self._log_bytes + len(line) > MAX_LOG_BYTES:
                line = _without_bodies(call, f"over {MAX_LOG_LINE} bytes, or the trial's log "
                                       f"reached {MAX_LOG_BYTES}").model_dump_json()
            if self._log_bytes + len(line) > MAX_LOG_TOTAL:
                self._log_full = True
                line = _without_bodies(call, f"the trial's log reached {MAX_LOG_TOTAL} bytes; this "
                                       "is its last line: the gateway summary counts every call"
                                       ).model_dump_json()
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
        """Ends the session: calls still open are charged their upper bound and logged."""
        with self._lock:
            self.closed.set()
            for held in self._open.values():
                usage = charge_estimate(held.bound, None)
                self._record(held.call.model_copy(update={
                    "usage": usage, "cost_usd": self.cost(usage), "estimated": True,
                    "error": ENDED_OPEN}))
            self._open.clear()
            if not self._log.closed:
                self._log.close()
            return self.summary.model_copy(deep=True)
