"""Whether a GUI trial used the GUI application its task declares, from the desktop's window
log: "used" if a window of the app's WM_CLASS was mapped and input arrived while one had
focus, "opened" if only mapped, else "bypassed" (Contract C of issue 13). The log is written
inside the sandbox, so it is read with caps and judged line by line; the result is reported
beside the score and never changes it."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from lastexam.desktop.spec import CAPS, DesktopApp
from lastexam.store.models import GuiAppUse, GuiUse
from lastexam.untrusted import iter_lines, open_regular
from lastexam.usage.window_events import CappedEvent, LogLine, WindowEvent

LOG_BYTES = CAPS.windows_log_bytes  # the collector's caps: read of windows.jsonl at most
MAX_EVENTS = CAPS.windows_log_lines
MAX_LINE = 64 << 10  # longer lines are skipped
_LINE = TypeAdapter(LogLine)
_CLASS_PARTS = re.compile(r"[\s.,\x00]+")


def matches(declared: str, seen: str) -> bool:
    """A window's WM_CLASS (instance and class, however joined) names the declared one,
    ignoring case."""
    want = declared.strip().lower()
    seen = seen.strip().lower()
    return seen == want or want in _CLASS_PARTS.split(seen)


def gui_use(log: Path, apps: Sequence[DesktopApp]) -> GuiUse:
    """The trial's use of `apps`, the task's [desktop] apps, from its window log."""
    if not apps:
        return GuiUse(state="unknown", reason="the task declares no GUI application ([desktop] apps)")
    fd = open_regular(log)
    if fd is None:
        return GuiUse(state="unknown", reason="no window log (windows.jsonl missing or not a plain file)")
    size = os.fstat(fd).st_size
    os.close(fd)
    uses = [GuiAppUse(name=a.name, wm_class=a.wm_class) for a in apps]
    classes: list[set[str]] = [set() for _ in apps]  # the WM_CLASS of each app's mapped windows
    events = malformed = 0
    truncated = size > LOG_BYTES
    for line in iter_lines(log, max_line=MAX_LINE, max_total=LOG_BYTES):
        if not line.strip():
            continue
        if events + malformed >= MAX_EVENTS:
            truncated = True
            break
        try:
            event = _LINE.validate_json(line)
        except ValidationError:
            malformed += 1
            continue
        events += 1
        if isinstance(event, CappedEvent):  # the monitor stopped writing at its own cap
            truncated = True
            continue
        for use, seen in zip(uses, classes, strict=True):
            if isinstance(event, WindowEvent):
                if event.event == "map" and (matches(use.wm_class, event.wm_class)
                                             or matches(use.wm_class, event.wm_instance)):
                    use.mapped += 1
                    seen.add(event.wm_class.strip().lower())  # input names a window by its class
            elif event.wm_class.strip().lower() in seen and event.keys + event.buttons > 0:
                use.input_events += 1
                use.keys += event.keys
                use.buttons += event.buttons
    for use in uses:
        use.state = "used" if use.mapped and use.input_events else "opened" if use.mapped else "bypassed"
    common = {"apps": uses, "events": events, "malformed": malformed, "truncated": truncated}
    if not events:
        return GuiUse(state="unknown", reason="the window log holds no event", **common)
    states = {u.state for u in uses}
    state = "used" if "used" in states else "opened" if "opened" in states else "bypassed"
    return GuiUse(state=state, **common)
