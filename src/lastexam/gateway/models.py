"""The gateway's records: token usage, one model call, a trial's totals and its budget.

Token kinds follow one convention whatever the wire format: `input_tokens` are prompt tokens
read without a cache hit, `cache_read_tokens` and `cache_write_tokens` are the cached part
(read from, written to), `output_tokens` include reasoning, and `reasoning_tokens` are the
part of the output the provider reports as reasoning (informational, already counted).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lastexam.errors import describe_validation_error

# The longest line of a gateway log: the gateway writes longer calls without their bodies,
# and readers skip longer lines without holding them.
MAX_LOG_LINE = 16 * 1024 * 1024
# The characters kept of a name a request chose (the model it asks for, a field or tool the
# gateway dropped), and how many dropped names a call lists: a record stays small whatever
# the request held.
MAX_NAME, MAX_DROPPED = 200, 20


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # the part of cache_write_tokens written for an hour (Anthropic's ttl "1h"), billed higher
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Every token the model read, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class Budget(BaseModel):
    """Per-trial limits; None is no limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_cost_usd: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)


class Allowances(BaseModel):
    """Capabilities a session may forward to the provider; each is refused unless allowed
    (by the task or experiment that opens the session). See gateway/policy.py."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server_tools: bool = False  # tools the provider runs: web search and fetch, code execution
    mcp: bool = False  # remote MCP servers the provider connects to
    service_tier: bool = False  # a paid tier other than the default
    beta: bool = False  # anthropic-beta / openai-beta values outside the harmless list
    # content the provider fetches (URLs) or holds for the operator's account (file ids,
    # stored responses) instead of the request carrying it
    remote_content: bool = False


class CallRecord(BaseModel):
    """One model call as the gateway saw it (one line of the trial's gateway log)."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    started_at: str
    wire: str  # anthropic | chat | responses | gemini
    path: str
    stream: bool
    requested_model: str  # what the client asked for
    model: str  # what answered (the trial's model)
    status: int  # HTTP status returned to the client
    latency_ms: float  # request received -> last byte sent
    ttfb_ms: float | None = None  # request received -> first body byte sent
    usage: Usage | None = None  # None when the call failed before any usage was reported
    cost_usd: float | None = None  # None when the price is unknown
    # True when usage is an upper bound, not the provider's count: the stream was cut, the
    # trial ended with the call open, or the answer reported no usage.
    estimated: bool = False
    dropped: list[str] | None = None  # body fields and header values not forwarded
    counted: bool = True  # False for requests that are not model calls (token counting)
    error: str | None = None
    request: Any = None
    response: Any = None  # the JSON body, or the list of streamed event payloads


class SessionSummary(BaseModel):
    """A trial's model traffic, as recorded on its TrialRecord."""

    model_config = ConfigDict(extra="forbid")

    model: str
    model_calls: int = 0
    failed_calls: int = 0
    refused_calls: int = 0  # refused by the budget or the forwarding policy
    estimated_calls: int = 0  # calls charged an upper bound (see CallRecord.estimated)
    usage: Usage = Usage()
    cost_usd: float | None = None  # None when any call's price is unknown
    price_table: str | None = None  # version of the price table used
    budget: Budget = Budget()
    budget_exhausted: str | None = None  # why the budget ended the trial's model access


class TurnUsage(BaseModel):
    """Token counts a scripted turn claims (otherwise estimated from the bytes exchanged)."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    cache_read_tokens: int = Field(0, ge=0)
    cache_write_tokens: int = Field(0, ge=0)


class ToolTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    input: dict[str, Any] = {}


# The computer-use tools (docs/agents.md, "Computer use"): each action's arguments, checked
# when a script is loaded (names, types, coordinates 0-1000; the server enforces its own
# caps on durations and counts when the call is made).
Coord = Annotated[int, Field(strict=True, ge=0, le=1000)]
Button = Literal["left", "right", "middle"]
Seconds = Annotated[float, Field(ge=0)]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeysArgs(_Args):
    keys: str = Field(min_length=1)


class KeyArgs(_Args):
    key: str = Field(min_length=1)


class HoldKeyArgs(KeyArgs):
    seconds: Seconds


class TypeArgs(_Args):
    text: str


class PointArgs(_Args):
    x: Coord
    y: Coord


class ClickArgs(PointArgs):
    button: Button = "left"
    count: int = Field(1, strict=True, ge=1)


class DragArgs(_Args):
    x1: Coord
    y1: Coord
    x2: Coord
    y2: Coord


class ButtonArgs(_Args):
    button: Button = "left"


class ScrollArgs(PointArgs):
    direction: Literal["up", "down", "left", "right"] = "down"
    amount: int = Field(3, strict=True, ge=1)


class WaitArgs(_Args):
    seconds: Seconds


class ScreenshotArgs(_Args):
    save: bool = True


COMPUTER_ACTIONS: dict[str, type[_Args]] = {
    "key": KeysArgs, "key_down": KeyArgs, "key_up": KeyArgs, "hold_key": HoldKeyArgs,
    "type": TypeArgs, "mouse_move": PointArgs, "click": ClickArgs, "drag": DragArgs,
    "mouse_down": ButtonArgs, "mouse_up": ButtonArgs, "scroll": ScrollArgs, "wait": WaitArgs,
    "screenshot": ScreenshotArgs, "cursor_position": _Args, "get_screen_size": _Args,
}


def computer_call_problem(turn: dict[str, Any]) -> str | None:
    """What is wrong with a `computer:` turn ({action: NAME, ...arguments}), or None."""
    action = turn.get("action")
    if action is None:
        return "no action: a computer turn is {action: NAME, ...arguments}"
    if not isinstance(action, str) or action not in COMPUTER_ACTIONS:
        return f"unknown action {action!r} (actions: {', '.join(COMPUTER_ACTIONS)})"
    try:
        COMPUTER_ACTIONS[action].model_validate({k: v for k, v in turn.items() if k != "action"})
    except ValidationError as e:
        return f"action {action!r}: {describe_validation_error(e)}"
    return None


class ScriptTurn(BaseModel):
    """One answer of the scripted upstream: exactly one of shell, tool, computer or text."""

    model_config = ConfigDict(extra="forbid")

    shell: str | None = None  # a call of the shell tool the client declared
    tool: ToolTurn | None = None  # a call of any tool the client declared, by name
    # a call of a computer-use tool, in the client's own naming: {action: NAME, ...arguments}
    computer: dict[str, Any] | None = None
    text: str | None = None  # a final answer
    reasoning: str | None = None
    usage: TurnUsage | None = None
    # Answers every request whose text contains this, without being consumed (recorded labels,
    # e.g. a probe's verdict for one excerpt); turns without it answer the others in order.
    when: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptTurn:
        given = [k for k in ("shell", "tool", "computer", "text") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a turn needs exactly one of shell, tool, computer, text "
                             f"(got {given or 'none'})")
        return self

    @property
    def computer_args(self) -> dict[str, Any]:
        return {k: v for k, v in (self.computer or {}).items() if k != "action"}


class Script(BaseModel):
    """A scripted upstream's file: turns answering the client's model requests in order."""

    model_config = ConfigDict(extra="forbid")

    turns: list[ScriptTurn]
    final_text: str = "Done."  # the answer once the turns have run out
    price_as: str | None = None  # price calls as this model of the price table (else null)

    @model_validator(mode="after")
    def _computer_turns(self) -> Script:
        problems = [f"turn {i} (computer): {problem}"
                    for i, turn in enumerate(self.turns, start=1) if turn.computer is not None
                    if (problem := computer_call_problem(turn.computer))]
        if problems:
            raise ValueError("; ".join(problems))
        return self
