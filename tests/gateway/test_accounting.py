"""The price table, costs (unknown is null), and reading native logs that are damaged."""

from __future__ import annotations

from pathlib import Path

import pytest

from lastexam.errors import LastexamError
from lastexam.gateway.models import Usage
from lastexam.gateway.prices import price_table
from lastexam.gateway.providers import parse_model
from lastexam.gateway.wire import SSEParser
from lastexam.trajectory.native import claude_code_steps, codex_steps


def test_price_table_is_versioned_and_complete() -> None:
    table = price_table()
    assert table.version
    for name, price in table.models.items():
        assert price.output >= price.input > 0, name
        if price.cache_read is not None:
            assert price.cache_read < price.input, name


def test_cost_by_kind_and_unknown_is_null() -> None:
    table = price_table()
    u = Usage(input_tokens=2_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert table.cost("openai", "gpt-5", u) == pytest.approx(2.5 + 10 + 0.125)
    assert table.cost("openai", "no-such-model", u) is None
    # gpt-5 publishes no cache-write price: a call that wrote to a cache costs null, not 0
    assert table.cost("openai", "gpt-5", Usage(cache_write_tokens=10)) is None
    assert table.cost("openai", "gpt-5", Usage()) == 0.0


def test_model_names() -> None:
    assert parse_model("openrouter:anthropic/claude-sonnet-4.5").model == "anthropic/claude-sonnet-4.5"
    assert parse_model("scripted:x.yaml").model == str(Path("x.yaml").resolve())
    for bad in ("claude-sonnet-4-5", "nosuch:model", "openai:"):
        with pytest.raises(LastexamError, match="model"):
            parse_model(bad)


def test_sse_parser_handles_split_events_and_crlf() -> None:
    p = SSEParser()
    data = b'event: a\r\ndata: {"x": 1}\r\n\r\ndata: {"y":\n\ndata: [DONE]\n\n'
    for i in range(len(data)):
        p.feed(data[i:i + 1])
    p.close()
    assert p.events[0] == {"x": 1} and "unparsed" in p.events[1] and len(p.events) == 2


def test_native_logs_survive_garbage(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text(
        'not json\n{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use",'
        '"id":"t1","name":"Bash","input":{"command":"ls"}}]}}\n{"broken": \n'
        '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1",'
        '"content":[{"type":"text","text":"a.txt"}]}]}}\n'
    )
    steps = claude_code_steps(log)
    assert steps is not None and len(steps) == 1
    assert steps[0].tool_calls[0].arguments == {"command": "ls"}
    assert steps[0].observation.results[0].content == "a.txt"
    assert codex_steps(tmp_path / "missing.log") is None
