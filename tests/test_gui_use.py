"""Measured GUI use (issue 13, item 6): a GUI trial used, only opened or bypassed its task's
declared GUI application, judged from a synthetic window log (Contract C); bad logs; the store
column and its migration; the report's table, its numbers, in `show` and the HTML report."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from gui_trials import T0, make_run, record

from conftest import run_cli
from lastexam.analysis.metrics import gui_usage
from lastexam.desktop.spec import DesktopApp
from lastexam.store.db import Store
from lastexam.store.models import SCHEMA_VERSION, GuiUse
from lastexam.store.rows import TrialRow, load_rows
from lastexam.usage import gui
from lastexam.usage.gui import gui_use


def app(name: str, wm_class: str) -> DesktopApp:
    return DesktopApp(name=name, exec=wm_class, wm_class=wm_class)


CAD = app("LibreCAD", "librecad")


def ev(event: str, wm_class: str, **kw) -> str:
    if event == "input":
        return json.dumps({"t": T0, "event": "input", "keys": kw.get("keys", 3), "buttons": kw.get("buttons", 1),
                           "wm_class": wm_class})
    return json.dumps({"t": T0, "event": event, "window": "0x1a00003", "wm_class": wm_class,
                       "title": "t", "pid": 42, "exe": "/usr/bin/x"})


def log(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "windows.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


PANEL = ev("map", "lastexam-panel")


@pytest.mark.parametrize("lines, state", [
    ((PANEL, ev("map", "librecad"), ev("focus", "librecad"), ev("input", "librecad")), "used"),
    ((PANEL, ev("map", "LibreCAD.LibreCAD"), ev("input", "LibreCAD.LibreCAD", keys=0)), "used"),
    ((PANEL, ev("map", "librecad"), ev("map", "xterm"), ev("input", "xterm")), "opened"),
    ((PANEL, ev("map", "librecad"), ev("input", "librecad", keys=0, buttons=0)), "opened"),
    ((PANEL, ev("input", "librecad")), "bypassed"),  # input claimed for a window never mapped
    ((PANEL, ev("input", "librecad"), ev("map", "librecad")), "opened"),  # input before the window
    ((PANEL, ev("map", "xterm"), ev("input", "xterm"), ev("map", "librecad-helper")), "bypassed"),
])
def test_each_class(tmp_path: Path, lines: tuple[str, ...], state: str) -> None:
    use = gui_use(log(tmp_path, *lines), [CAD])
    assert use.state == state and use.apps[0].state == state
    assert use.malformed == 0 and use.events == len(lines)


def test_the_monitors_own_lines(tmp_path: Path) -> None:
    """As desktop/sandbox_files/monitor.py writes them: WM_CLASS split into wm_class (the class)
    and wm_instance, input named by the focused window's class, one `capped` line at its cap."""
    writer = app("Writer", "libreoffice")  # declared by its instance name
    lines = [json.dumps({"t": T0, "event": "map", "window": "0x1", "wm_class": "libreoffice-writer",
                         "wm_instance": "libreoffice", "title": "Untitled 1", "pid": None, "exe": None}),
             json.dumps({"t": T0, "event": "focus", "window": "0x1", "wm_class": "libreoffice-writer",
                         "wm_instance": "libreoffice", "title": "Untitled 1", "pid": 7, "exe": "/usr/lib/x"}),
             json.dumps({"t": T0, "event": "input", "keys": 12, "buttons": 0, "wm_class": "libreoffice-writer"}),
             json.dumps({"t": T0, "event": "capped"})]
    use = gui_use(log(tmp_path, *lines), [writer])
    assert use.state == "used" and use.apps[0].keys == 12
    assert use.truncated and use.malformed == 0 and use.events == 4


def test_used_if_any_declared_app_was_used(tmp_path: Path) -> None:
    calc = app("Calc", "libreoffice-calc")
    use = gui_use(log(tmp_path, ev("map", "librecad"), ev("map", "libreoffice-calc"),
                      ev("input", "libreoffice-calc", keys=7, buttons=2)), [CAD, calc])
    assert use.state == "used"
    assert [(a.name, a.state, a.mapped, a.keys, a.buttons) for a in use.apps] == [
        ("LibreCAD", "opened", 1, 0, 0), ("Calc", "used", 1, 7, 2)]


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    bad = ["{not json", "[1, 2]", "42", '"map"', json.dumps({"event": "map"}),
           json.dumps({"t": True, "event": "input", "keys": 1, "buttons": 1, "wm_class": "librecad"}),
           json.dumps({"t": T0, "event": "input", "keys": "5", "buttons": 0, "wm_class": "librecad"}),
           json.dumps({"t": T0, "event": "input", "keys": -5, "buttons": 0, "wm_class": "librecad"}),
           json.dumps({"t": T0, "event": "input", "keys": 10**30, "buttons": 0, "wm_class": "librecad"}),
           json.dumps({"t": T0, "event": "teleport", "wm_class": "librecad"}),
           json.dumps({"t": T0, "event": "map", "window": "0x1", "wm_class": None}),
           "[" * 10_000, "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")]
    huge = ev("input", "librecad").replace('"t":', '"pad": "' + "x" * (gui.MAX_LINE + 10) + '", "t":')
    use = gui_use(log(tmp_path, ev("map", "librecad"), *bad, huge, "", "   "), [CAD])
    assert use.malformed == len(bad)  # the over-long line is skipped unread, blank lines are nothing
    assert use.state == "opened" and use.events == 1  # none of the bad inputs counted as input


def test_long_log_is_cut_at_the_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gui, "MAX_EVENTS", 3)
    path = log(tmp_path, ev("map", "librecad"), PANEL, PANEL, ev("input", "librecad"))
    use = gui_use(path, [CAD])
    assert use.truncated and use.events == 3 and use.state == "opened"
    monkeypatch.setattr(gui, "MAX_EVENTS", 100)
    monkeypatch.setattr(gui, "LOG_BYTES", len(ev("map", "librecad")) + 1)
    use = gui_use(path, [CAD])
    assert use.truncated and use.events == 1 and use.state == "opened"


def test_unknown_when_there_is_nothing_to_judge(tmp_path: Path) -> None:
    assert "no window log" in gui_use(tmp_path / "absent.jsonl", [CAD]).reason
    assert "declares no GUI application" in gui_use(log(tmp_path, PANEL), []).reason
    assert gui_use(log(tmp_path, "garbage"), [CAD]).state == "unknown"
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # would block a reader that opened it plainly
    link = tmp_path / "link.jsonl"
    link.symlink_to(log(tmp_path, ev("map", "librecad"), ev("input", "librecad")))
    for path in (fifo, link, tmp_path):
        use = gui_use(path, [CAD])
        assert use.state == "unknown" and "no window log" in use.reason


def row(task: str, gui_use: str | None, full: bool, score: float, cell: str = "a", attempt: int = 1) -> TrialRow:
    return TrialRow(trial_id=f"{task}{attempt}", task_id=task, agent=cell, model="", attempt=attempt,
                    tier="near-term", cluster="other", subdomain="other", status="completed", score=score,
                    full_pass=full, gui_use=gui_use)


def test_table_numbers() -> None:
    rows = [row("A", "used", True, 1.0), row("B", "used", False, 0.5), row("C", "opened", False, 0.25),
            row("D", "bypassed", True, 1.0), row("E", "bypassed", False, 0.0), row("F", "bypassed", False, 0.5),
            row("G", None, True, 1.0), row("H", None, False, 0.0),  # not GUI trials: not counted
            row("I", "unknown", False, 0.0), row("J", None, True, 1.0, cell="b")]
    u = gui_usage(rows)
    assert list(u) == ["a"]  # agent b ran no GUI trial
    a = u["a"]
    assert a["trials"] == 7
    assert a["used"] == {"trials": 2, "fpr": 0.5, "ms": 0.75}
    assert a["opened"] == {"trials": 1, "fpr": 0.0, "ms": 0.25}
    assert a["bypassed"] == {"trials": 3, "fpr": 0.3333, "ms": 0.5}
    assert a["unknown"] == {"trials": 1, "fpr": 0.0, "ms": 0.0}


def _store_gui_run(tmp_path: Path) -> Path:
    used = GuiUse(state="used", events=4)
    records = [
        record("cad-a", score=1.0, full_pass=True, gui=used),
        record("cad-b", score=0.5, gui=GuiUse(state="bypassed", events=2)),
        record("cad-c", score=1.0, full_pass=True, gui=GuiUse(state="bypassed", events=2)),
        record("cad-d", score=0.0, gui=GuiUse(state="opened", events=2)),
        record("plain", score=1.0, full_pass=True),
    ]
    return make_run(tmp_path / "run", records).root


def test_store_column_and_report_tables(tmp_path: Path) -> None:
    run = _store_gui_run(tmp_path)
    store = Store(run)
    try:
        assert [r.gui_use for r in load_rows(store)] == ["used", "bypassed", "bypassed", "opened", None]
        assert next(store.trials(trial_id=load_rows(store)[0].trial_id)).gui.state == "used"
    finally:
        store.close()
    shown = run_cli("show", run, env={"COLUMNS": "200"}).stdout
    table = shown.split("use of the declared GUI application", 1)[1]
    lines = [re.sub(r"\s+", " ", ln.replace("│", " ")).strip() for ln in table.splitlines()]
    assert "scripted-gui used 1 25.0% 100.0% 100.0%" in lines
    assert "scripted-gui opened only 1 25.0% 0.0% 0.0%" in lines
    assert "scripted-gui bypassed 2 50.0% 50.0% 75.0%" in lines
    assert not any("no usable log" in ln for ln in lines)  # no unknown trial: no row
    html = tmp_path / "report.html"
    run_cli("report", run, "--html", html)
    section = html.read_text().split("<h2>Use of the declared GUI application</h2>", 1)[1].split("<h2>", 1)[0]
    rows = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", r)]
            for r in re.findall(r"<tr>(.*?)</tr>", section)]
    assert [r for r in rows if r] == [
        ["scripted-gui", "used", "1", "25.0%", "100.0%", "100.0%"],
        ["scripted-gui", "opened only", "1", "25.0%", "0.0%", "0.0%"],
        ["scripted-gui", "bypassed", "2", "50.0%", "50.0%", "75.0%"],
    ]


def test_no_gui_trials_no_table(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", [record("plain", score=1.0, full_pass=True)]).root
    assert "GUI application" not in run_cli("show", run).stdout
    html = tmp_path / "report.html"
    run_cli("report", run, "--html", html)
    assert "declared GUI application" not in html.read_text()


def test_schema_3_store_gains_the_column(tmp_path: Path) -> None:
    run = _store_gui_run(tmp_path)
    with sqlite3.connect(run / "results.db") as db:  # as lastexam before this change wrote it
        db.execute("ALTER TABLE trials DROP COLUMN gui_use")
        db.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    db.close()
    store = Store(run)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert [r.gui_use for r in load_rows(store)] == [None] * 5  # NULL: the column is new
    finally:
        store.close()
    assert "use of the declared software" in run_cli("show", run).stdout


def test_trial_page_shows_the_gui_use(tmp_path: Path) -> None:
    import httpx
    from gui_trials import viewer

    cad = GuiUse(state="opened", events=9, malformed=2, apps=[
        {"name": "LibreCAD", "wm_class": "librecad", "mapped": 2, "state": "opened"}])
    rec = record("cad", gui=cad)
    plain = record("plain")
    run = make_run(tmp_path / "run", [rec, plain]).root
    with viewer([run]) as url:
        page = httpx.get(f"{url}run/run/trial/{rec.trial_id}").text
        assert "<b>opened</b>" in page and "LibreCAD (librecad): opened, windows mapped 2" in page
        assert "2 malformed lines skipped" in page and "/file/desktop/windows.jsonl" in page
        assert "GUI use" not in httpx.get(f"{url}run/run/trial/{plain.trial_id}").text
        listing = httpx.get(f"{url}run/run").text
        assert "<th>GUI use</th>" in listing and "<td>opened</td></tr>" in listing and "<td>-</td></tr>" in listing
