"""The lines of windows.jsonl, the desktop's window log (Contract C of issue 13): a window
mapped, unmapped or focused, or, about once a second while input arrives, the keys and buttons
sent to the focused window; past its caps the monitor writes one `capped` line and stops.
Fields the harness does not read are ignored."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_TEXT = 4096
MAX_COUNT = 1_000_000  # keys or buttons in one input event


class WindowEvent(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    t: float
    event: Literal["map", "unmap", "focus"]
    window: Annotated[str, Field(max_length=64)]
    wm_class: Annotated[str, Field(max_length=MAX_TEXT)]
    wm_instance: Annotated[str, Field(max_length=MAX_TEXT)] = ""  # WM_CLASS's first part
    title: Annotated[str, Field(max_length=MAX_TEXT)] = ""
    pid: int | None = None
    exe: Annotated[str, Field(max_length=MAX_TEXT)] | None = None


class InputEvent(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    t: float
    event: Literal["input"]
    keys: Annotated[int, Field(ge=0, le=MAX_COUNT)]
    buttons: Annotated[int, Field(ge=0, le=MAX_COUNT)]
    wm_class: Annotated[str, Field(max_length=MAX_TEXT)]


class CappedEvent(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    t: float
    event: Literal["capped"]


LogLine = Annotated[WindowEvent | InputEvent | CappedEvent, Field(discriminator="event")]
