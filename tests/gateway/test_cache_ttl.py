"""Red-team review, a neighbour of attack 4 of issue 9 (spending without being charged): a
prompt cached for an hour (`cache_control: {"type": "ephemeral", "ttl": "1h"}`, no beta
needed) is billed by Anthropic at twice the input price, against 1.25 times for the default
five minutes. The gateway priced every cache write as a five-minute one: an agent asking for
the longer cache was charged, and held to its cost budget, about 40% under what the provider
bills for those tokens. The fake provider answers with Anthropic's body, split included."""

from __future__ import annotations

from pathlib import Path

import pytest

from lastexam.gateway.models import Budget
from lastexam.gateway.prices import price_table
from lastexam.gateway.server import Gateway

from .conftest import Client

MODEL = "claude-sonnet-4-5"
USAGE = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 0,
         "cache_creation_input_tokens": 50_000,
         "cache_creation": {"ephemeral_5m_input_tokens": 10_000,
                            "ephemeral_1h_input_tokens": 40_000}}
ANSWER = {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
          "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": USAGE}


def test_an_hour_long_cache_write_is_charged_at_its_price(
        gateway: Gateway, client: Client, provider, tmp_path: Path) -> None:
    provider.answer = ANSWER
    session = gateway.open_session("t", f"anthropic:{MODEL}", Budget(), tmp_path / "l.jsonl")
    system = [{"type": "text", "text": "x" * 5000, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    body = {"model": "m", "max_tokens": 100, "system": system,
            "messages": [{"role": "user", "content": "hi"}]}
    status, _, _ = client.post("/v1/messages", body, {"x-api-key": session.token})
    assert status == 200
    summary = gateway.close_session(session.token)
    price = price_table().price("anthropic", MODEL)
    assert price is not None and price.cache_write is not None
    split = USAGE["cache_creation"]
    billed = (USAGE["input_tokens"] * price.input + USAGE["output_tokens"] * price.output
              + split["ephemeral_5m_input_tokens"] * price.cache_write
              + split["ephemeral_1h_input_tokens"] * 2 * price.input) / 1_000_000
    assert summary.cost_usd == pytest.approx(billed)
