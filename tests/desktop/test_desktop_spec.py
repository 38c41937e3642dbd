"""The [desktop] table of task.toml: defaults, bounds, and errors that name file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from lastexam.desktop.spec import DesktopSpec, desktop_for
from lastexam.errors import LastexamError
from lastexam.task.load import load_task

from .conftest import gui_task


def test_a_gui_task_loads_its_desktop(tmp_path: Path) -> None:
    spec = load_task(gui_task(tmp_path)).spec
    assert spec.desktop is not None and spec.desktop.size == (1024, 768)
    app = spec.desktop.apps[0]
    assert (app.name, app.wm_class) == ("Note", "Xmessage")
    assert desktop_for(spec.gui, spec.desktop, forced=False) == spec.desktop


def test_who_gets_a_desktop() -> None:
    assert desktop_for(False, None, forced=False) is None
    assert desktop_for(False, None, forced=True) == DesktopSpec()
    assert desktop_for(True, None, forced=False).screen == "1280x800"


@pytest.mark.parametrize(
    ("table", "field", "words"),
    [
        ('[desktop]\nscreen = "1280*800"\n', "desktop.screen", "WIDTHxHEIGHT"),
        ('[desktop]\nscreen = "100x100"\n', "desktop.screen", "320 to 3840"),
        ('[desktop]\nscreen = "9000x800"\n', "desktop.screen", "320 to 3840"),
        ('[desktop]\napps = [{ name = "A", exec = "a", wm_class = "a b;c" }]\n', "wm_class", "WM_CLASS"),
        ('[desktop]\napps = [{ name = "A", exec = "a \'unclosed", wm_class = "a" }]\n', "exec", "command line"),
        ('[desktop]\napps = [{ name = "A", exec = "a" }]\n', "wm_class", "required"),
        ('[desktop]\napps = [{ name = "A", exec = "a", wm_class = "a" }, { name = "a", exec = "b", wm_class = "b" }]\n',
         "desktop.apps", "same name"),
        ('[desktop]\nsize = "1280x800"\n', "desktop.size", "unknown key"),
    ],
)
def test_bad_tables_are_named(tmp_path: Path, table: str, field: str, words: str) -> None:
    task = gui_task(tmp_path, table=table)
    with pytest.raises(LastexamError) as e:
        load_task(task)
    text = str(e.value)
    assert "task.toml" in text and field in text and words in text, text


def test_a_desktop_table_needs_gui(tmp_path: Path) -> None:
    task = gui_task(tmp_path)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("gui = true", "gui = false"))
    proc = run_cli("tasks", "list", task.parent, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "needs gui = true" in proc.stderr and "task.toml" in proc.stderr
