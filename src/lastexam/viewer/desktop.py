"""The desktop part of a GUI trial's page: the recording in a player beside the trajectory, each
step linked to its time in the recording, and the screenshots a step refers to.

The pages run no script: a step's link loads the player page into the frame beside the steps,
with the time as a media fragment (`recording#t=12.5`), and the browser seeks there. Every file
read here was written inside the sandbox: a bad or absurd one gives a note, never an error."""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from lastexam.desktop.spec import CAPS
from lastexam.layout import TRIAL, DesktopFiles
from lastexam.store.models import GuiUse
from lastexam.viewer import media
from lastexam.viewer.paths import TrialFolder

META_BYTES = CAPS.meta_bytes
SLACK_S = 120  # how far outside the trial's own times a recording may start
MAX_OFFSET_S = 10 * 86400  # a player time beyond this is not asked for
SCREEN_REF = re.compile(r"\bscreens/([0-9]{4}\.png)\b")  # also inside /run/lastexam/desktop/...
THUMBS_PER_STEP = 8
# The desktop folder's files linked beside the player (plain text and JSON, served as text).
DESKTOP_FILES = (DesktopFiles.RECORDING_META, DesktopFiles.WINDOWS_LOG, DesktopFiles.SESSION_LOG,
                 TRIAL.desktop_collected.name)


@dataclass
class Recording:
    """What the trial page knows of the recording: whether it can be played, when it started
    (None: steps are not linked to it) and the notes to show."""

    playable: bool = False
    started_at: float | None = None
    span_s: float = 0.0  # the longest offset a step may have: the trial's length and slack
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # what the desktop folder holds


def _epoch(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except (ValueError, OverflowError):
        return None


def _meta(folder: TrialFolder) -> tuple[float | None, str | None]:
    """recording.json's started_at, or why it cannot be used."""
    data = folder.read(TRIAL.recording_meta.as_posix(), META_BYTES + 1)
    if data is None:
        return None, "recording.json is missing or not a plain file"
    if len(data) > META_BYTES:
        return None, f"recording.json is over {META_BYTES:,} bytes"
    try:
        meta = json.loads(data)
    except (ValueError, RecursionError):
        return None, "recording.json is not JSON"
    started = meta.get("started_at") if isinstance(meta, dict) else None
    if isinstance(started, bool) or not isinstance(started, int | float) or not math.isfinite(started):
        return None, "recording.json has no numeric started_at"
    return float(started), None


def recording(folder: TrialFolder, trial_started: str, trial_finished: str) -> Recording | None:
    """The recording of the trial, None if it has none. `trial_started`/`trial_finished` are
    the harness's own times of the trial (its record), against which started_at is judged."""
    why = media.check(folder, media.RECORDING)
    listing = folder.listing(TRIAL.desktop.as_posix())
    if why == "no such file" and listing is None:  # no desktop in this trial
        return None
    files = [f.decode(errors="replace") for f, _ in listing[0]] if listing else []
    if why == "no such file":
        return Recording(files=files, notes=["The desktop kept no screen recording (its session.log "
                                             "and collected.json say why)."])
    rec = Recording(playable=why is None, files=files)
    if why:
        rec.notes.append(f"recording.webm is not shown: {why}.")
    started, bad = _meta(folder)
    begin, end = _epoch(trial_started), _epoch(trial_finished)
    if bad:
        rec.notes.append(f"Steps are not linked to the recording: {bad}.")
    elif begin is not None and end is not None and not (begin - SLACK_S <= started <= end + SLACK_S):
        rec.notes.append(f"Steps are not linked to the recording: its started_at ({started:.3f}) is "
                         "outside the trial's own start and end.")
    else:
        rec.started_at = started
        rec.span_s = (end - begin if begin is not None and end is not None else 0) + 2 * SLACK_S
    return rec


def offset(rec: Recording | None, step: dict[str, Any]) -> float | None:
    """The step's time in the recording, in seconds (None: not linked)."""
    if rec is None or rec.started_at is None or not rec.playable:
        return None
    at = _epoch(step.get("timestamp"))
    if at is None:
        return None
    t = at - rec.started_at
    return t if 0 <= t <= rec.span_s else None


def clock(t: float) -> str:
    minutes, seconds = divmod(t, 60)
    return f"{int(minutes)}:{seconds:04.1f}"


def player_link(base: str, t: float) -> str:
    return (f"<a class=seek target=player href='{base}/player?t={t:.3f}'"
            f" title='show the recording at this step'>&#9654; {clock(t)}</a>")


def screen_refs(step: dict[str, Any]) -> list[str]:
    """The screenshots (NNNN.png) the step's observations and extras name, in order, once."""
    text = json.dumps([step.get("observation"), step.get("extra")])
    return list(dict.fromkeys(SCREEN_REF.findall(text)))[:THUMBS_PER_STEP]


def thumbs(base: str, names: list[str]) -> str:
    links = "".join(
        f"<a href='{base}/screen/{quote(n)}' target=_blank><img class=thumb loading=lazy "
        f"alt='screens/{n}' src='{base}/screen/{quote(n)}'></a>" for n in names)
    return f"<div class=thumbs>{links}</div>" if links else ""


def screens_section(folder: TrialFolder, base: str) -> str:
    """Every screenshot of the trial, as links (the steps show the ones they refer to)."""
    found = folder.listing(TRIAL.screens.as_posix())
    if found is None:
        return ""
    files, count = found
    names = [rel.decode() for rel, _ in files if media.SCREEN_NAME.fullmatch(rel)]
    links = " ".join(f"<a href='{base}/screen/{quote(n)}' target=_blank>{n}</a>" for n in names)
    other, unlisted = len(files) - len(names), count - len(files)
    extra = f"; {other:,} are not named NNNN.png and not shown" if other else ""
    extra += f"; {unlisted:,} more are not listed" if unlisted else ""
    return f"<h2>Screenshots</h2><p class=small>{count:,} files{extra}</p><p>{links}</p>"


def gui_summary(gui: GuiUse, base: str) -> str:
    """The trial's use of its declared GUI application, as recorded, and its window log."""
    apps = "; ".join(f"{a.name} ({a.wm_class}): {a.state}, windows mapped {a.mapped}, "
                     f"input events {a.input_events} (keys {a.keys}, buttons {a.buttons})" for a in gui.apps)
    log = [f"{gui.events:,} events"]
    if gui.malformed:
        log.append(f"{gui.malformed:,} malformed lines skipped")
    if gui.truncated:
        log.append("cut at the reading cap")
    link = f"<a href='{base}/file/{quote(TRIAL.windows_log.as_posix())}'>windows.jsonl</a>"
    why = f" ({html.escape(gui.reason)})" if gui.reason else ""
    return (f"<b>{html.escape(gui.state)}</b>{why}. {html.escape(apps)}"
            f"<div class=small>{link}: {', '.join(log)}; written inside the sandbox, not scored</div>")


def side(base: str, rec: Recording) -> str:
    """The column beside the steps: the player frame and the notes."""
    notes = "".join(f"<p class='small note'>{html.escape(n)}</p>" for n in rec.notes)
    frame = (f"<iframe name=player title='screen recording' src='{base}/player'></iframe>"
             if rec.playable else "")
    shown = [n for n in DESKTOP_FILES if n in rec.files]
    links = " ".join(f"<a href='{base}/file/{quote(TRIAL.desktop.name)}/{quote(n)}'>{n}</a>" for n in shown)
    listing = f"<p class=small>desktop: {links}</p>" if links else ""
    return f"<div class=player>{frame}{notes}{listing}</div>"


def player_query(query: dict[str, list[str]]) -> float:
    """The time asked for by ?t=SECONDS (0 when absent or not a sane number)."""
    try:
        t = float((query.get("t") or ["0"])[0])
    except ValueError:
        return 0.0
    return t if math.isfinite(t) and 0 <= t <= MAX_OFFSET_S else 0.0


def player_page(base: str, t: float, why: str | None) -> str:
    body = (f"<p>{html.escape(why)}</p>" if why else
            f"<video controls preload=auto src='{base}/recording#t={t:.3f}'></video>")
    return ("<!doctype html><html><head><meta charset=utf-8><title>recording</title><style>"
            "body{margin:0;font:13px system-ui,sans-serif}video{width:100%;display:block;background:#000}"
            f"</style></head><body>{body}</body></html>")
