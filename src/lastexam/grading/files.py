"""Loaders for deliverables. They never raise on bad agent output: each returns the value (or
None) and an Outcome that says why it could not be read. Sizes are capped so that a crafted
file cannot exhaust the grader."""

from __future__ import annotations

import json

from lastexam.grading.rubric import Outcome

TYPE_CHECKING = False  # typing itself costs each grading's fresh Python an import
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MAX_TEXT_BYTES = 64 * 1024 * 1024
MAX_XLSX_UNPACKED = 256 * 1024 * 1024
MAX_ZIP_RATIO = 200  # larger unpacked/packed ratios are treated as zip bombs
MAX_XML_BYTES = 32 * 1024 * 1024
MAX_XML_UNPACKED = 128 * 1024 * 1024


class Loaded(tuple):
    """(value, outcome), also as .value and .outcome. A plain tuple subclass: typing's
    NamedTuple costs every grading's fresh Python a few milliseconds to import."""

    __slots__ = ()

    def __new__(cls, value: Any, outcome: Outcome) -> Loaded:
        return tuple.__new__(cls, (value, outcome))

    @property
    def value(self) -> Any:
        return self[0]

    @property
    def outcome(self) -> Outcome:
        return self[1]


def sha256_file(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_file(path: Path) -> bool:
    """Path.is_file, False also where it raises: a graders' path built from the agent's text may
    be too long for the file system (ENAMETOOLONG) or hold a NUL."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _read_bytes(path: Path, limit: int = MAX_TEXT_BYTES) -> Loaded:
    if not is_file(path):
        return Loaded(None, Outcome(False, f"{path.name} is missing", expected=path.name))
    try:
        size = path.stat().st_size
        if size > limit:
            return Loaded(None, Outcome(False, f"{path.name} is {size} bytes, over the {limit} limit"))
        return Loaded(path.read_bytes(), Outcome(True, f"read {size} bytes"))
    except OSError as e:
        return Loaded(None, Outcome(False, f"{path.name} cannot be read: {e.strerror}"))


def read_text(path: Path) -> Loaded:
    raw, outcome = _read_bytes(path)
    if raw is None:
        return Loaded(None, outcome)
    try:
        return Loaded(raw.decode("utf-8-sig"), Outcome(True, "UTF-8 text"))
    except UnicodeDecodeError as e:
        return Loaded(None, Outcome(False, f"{path.name} is not UTF-8: {e.reason} at byte {e.start}"))


def load_json(path: Path, *, expect: type | None = dict) -> Loaded:
    text, outcome = read_text(path)
    if text is None:
        return Loaded(None, outcome)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as e:  # ValueError: also integers over 4300 digits
        return Loaded(None, Outcome(False, f"{path.name} is not valid JSON: {str(e)[:300]}"))
    if expect is not None and not isinstance(value, expect):
        return Loaded(
            None,
            Outcome(False, f"{path.name} holds a {type(value).__name__}, expected a {expect.__name__}"),
        )
    return Loaded(value, Outcome(True, f"{path.name} parses"))


def load_csv(path: Path, *, required_columns: list[str] | tuple[str, ...] = ()) -> Loaded:
    """Rows as dicts of stripped strings. Header names are matched exactly."""
    import csv
    import io
    text, outcome = read_text(path)
    if text is None:
        return Loaded(None, outcome)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = [h.strip() for h in (reader.fieldnames or [])]
        rows = [
            {(k or "").strip(): (v.strip() if isinstance(v, str) else v) for k, v in row.items()}
            for row in reader
        ]
    except csv.Error as e:
        return Loaded(None, Outcome(False, f"{path.name} is not valid CSV: {e}"))
    missing = [c for c in required_columns if c not in header]
    if missing:
        return Loaded(
            None,
            Outcome(False, f"{path.name} lacks columns {missing}", expected=list(required_columns), seen=header),
        )
    return Loaded(rows, Outcome(True, f"{path.name}: {len(rows)} rows"))


def load_xml(path: Path, *, root: str | None = None, kind: str = "XML",
             limit: int = MAX_XML_BYTES, max_unpacked: int = MAX_XML_UNPACKED) -> Loaded:
    """An ElementTree root element, from plain or gzipped XML (as Dia and Gnumeric save it).
    `root`: the required root tag in Clark notation ('{namespace}name'); `kind` names the
    format in messages. Entity declarations are refused (no entity expansion bomb), and the
    gzip stream is read no further than `max_unpacked`."""
    import xml.etree.ElementTree as ET

    data, outcome = _read_bytes(path, limit)
    if data is None:
        return Loaded(None, outcome)
    if data[:2] == b"\x1f\x8b":
        import gzip
        import io
        import zlib
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                data = f.read(max_unpacked + 1)
        except (OSError, EOFError, zlib.error) as e:
            return Loaded(None, Outcome(False, f"{path.name} is a broken gzip stream: {e}"))
        if len(data) > max_unpacked:
            return Loaded(None, Outcome(False, f"{path.name} unpacks to over {max_unpacked} bytes"))
    if b"<!ENTITY" in data:
        return Loaded(None, Outcome(False, f"{path.name}: entity declarations are not accepted"))
    try:
        element = ET.fromstring(data)
    except (ET.ParseError, ValueError, RecursionError) as e:
        return Loaded(None, Outcome(False, f"{path.name} is not well-formed {kind}: {str(e)[:200]}"))
    if root is not None and element.tag != root:
        return Loaded(None, Outcome(False, f"{path.name}: the root element is {element.tag!r}, not {kind}'s",
                                    expected=root, seen=element.tag))
    return Loaded(element, Outcome(True, f"{path.name}: {kind}"))


def column(rows: list[dict[str, Any]] | None, name: str) -> list[Any]:
    return [r.get(name) for r in rows or []]


def zip_is_sane(path: Path, max_unpacked: int = MAX_XLSX_UNPACKED) -> Outcome:
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        return Outcome(False, f"{path.name} is not a valid zip container: {e}")
    unpacked = sum(i.file_size for i in infos)
    packed = max(1, sum(i.compress_size for i in infos))
    if unpacked > max_unpacked or (unpacked / packed > MAX_ZIP_RATIO and unpacked > 10_000_000):
        return Outcome(False, f"{path.name} unpacks to {unpacked} bytes: refused as a zip bomb")
    return Outcome(True, f"{len(infos)} members, {unpacked} bytes unpacked")


def load_xlsx(path: Path, *, data_only: bool = True) -> Loaded:
    """An openpyxl workbook. data_only=True gives cached values, False gives formulas."""
    if not is_file(path):
        return Loaded(None, Outcome(False, f"{path.name} is missing", expected=path.name))
    sane = zip_is_sane(path)
    if not sane.passed:
        return Loaded(None, sane)
    try:
        import openpyxl

        wb = openpyxl.load_workbook(path, data_only=data_only, read_only=False)
    except Exception as e:  # openpyxl raises many types on malformed files
        return Loaded(None, Outcome(False, f"{path.name} is not a readable XLSX: {type(e).__name__}: {e}"))
    return Loaded(wb, Outcome(True, f"{path.name}: sheets {wb.sheetnames}"))


def inputs_untampered(inputs_after: dict[str, str], pristine: Path | dict[str, str]) -> Outcome:
    """The agent's inputs/ after the run against the task's own (the pristine folder, or its
    files' sha256 by relative path): a changed or replaced file fails (deleting one is
    recorded but cannot fool a grader, which reads the pristine copy)."""
    if not isinstance(pristine, dict):
        pristine = {
            p.relative_to(pristine).as_posix(): sha256_file(p)
            for p in sorted(pristine.rglob("*")) if p.is_file()
        }
    changed, removed = [], []
    for rel, digest in sorted(pristine.items()):
        state = inputs_after.get(rel, "missing")
        if state == "missing":
            removed.append(rel)
        elif state != digest:
            changed.append(rel)
    if changed:
        return Outcome(False, f"inputs modified by the agent: {changed}", expected="unchanged", seen=changed)
    note = f"; removed: {removed}" if removed else ""
    return Outcome(True, "inputs unchanged" + note)
