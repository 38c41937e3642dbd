"""Spreadsheet recalculation with LibreOffice, for graders that must not trust the values an
agent's workbook caches: LibreOffice 7.4 keeps an XLSX's cached values unless its profile says
to recalculate on load, so each call uses a fresh profile that forces it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from lastexam.grading.files import Loaded
from lastexam.grading.rubric import Outcome

ERROR_VALUE = re.compile(r"^(#(NAME\?|VALUE!|REF!|DIV/0!|N/A|NUM!|NULL!)|Err:\d+)")
RECALC_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def recalculate_xlsx(src: Path, scratch: Path, tag: str = "recalc", timeout_s: int = 240) -> Loaded:
    """Open src in LibreOffice with recalculation forced and save it as XLSX in scratch.
    value: the recalculated file's path, or None with the reason."""
    if not src.is_file():
        return Loaded(None, Outcome(False, f"{src.name} is missing", expected=src.name))
    # The profile path must be absolute: a relative file:// URL makes soffice hang silently.
    profile = (scratch / f"lo-profile-{tag}").resolve()
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALC_PROFILE)
    work, outdir = scratch / f"in-{tag}", scratch / f"out-{tag}"
    work.mkdir(exist_ok=True)
    outdir.mkdir(exist_ok=True)
    copy = work / "model.xlsx"
    shutil.copyfile(src, copy)
    cmd = ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--calc",
           "--convert-to", "xlsx", "--outdir", str(outdir), str(copy)]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout_s)
    except (subprocess.TimeoutExpired, OSError) as e:
        return Loaded(None, Outcome(False, f"LibreOffice did not finish: {e}"))
    out = outdir / "model.xlsx"
    if proc.returncode != 0 or not out.is_file():
        tail = (proc.stderr or b"").decode(errors="replace")[-300:]
        return Loaded(None, Outcome(False, f"LibreOffice could not convert the workbook (exit {proc.returncode}): {tail}"))
    return Loaded(out, Outcome(True, "recalculated by LibreOffice"))


def is_error_value(value: object) -> bool:
    """#NAME?, #REF!, #VALUE!, Err:502 and the like: a formula that does not compute."""
    return isinstance(value, str) and bool(ERROR_VALUE.match(value.strip()))
