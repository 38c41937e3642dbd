"""Canary scanning: find the canary of any public or sealed task in files a training-data
pipeline is about to use (plain text, JSONL, gzip, zstd, parquet text columns).

The search is multi-pattern at a speed that does not depend on how many canaries there are: one
compiled regex finds the middle of anything shaped like a GUID (8-4-4-4-12 hex digits, any
letter case), and the 36 bytes around it are looked up, lower-cased, in a dict of the canaries.
benchmarks/canary_scan.py compares it with a regex alternation of the canaries and with
Aho-Corasick, both far slower."""

from __future__ import annotations

import gzip
import os
import re
import sys
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from lastexam.config_file import load_model
from lastexam.errors import LastexamError
from lastexam.pool.model import POOL_FILE, PoolManifest
from lastexam.task.load import discover_tasks

GUID_LEN = 36
GUID_HEAD = 8  # hex digits before the first dash
# "-xxxx-xxxx-xxxx-": the dashes 5 bytes apart cannot fall in the 8 hex digits before a GUID's
# first dash, so a match never swallows the start of the GUID that follows it.
_PROBE = re.compile(rb"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")
CHUNK = 8 * 1024 * 1024
OVERLAP = GUID_LEN - 1  # bytes kept from one chunk to the next: a canary split by a boundary
ZSTD_SUFFIXES = (".zst", ".zstd")
PARQUET_BATCH = 65536


@dataclass(frozen=True)
class Hit:
    file: Path
    offset: int  # in the decompressed stream (parquet: in its text values, one per line)
    task_id: str

    def __str__(self) -> str:
        return f"{self.file}:{self.offset}: {self.task_id}"


class Unreadable(Exception):
    """A file the scanner cannot decode; reported as a warning, the scan goes on."""


def canonical(canary: str) -> str:
    """The lower-case 8-4-4-4-12 form: the one the scanner looks for, in any letter case."""
    return str(uuid.UUID(canary))


def canary_key(canary: str) -> str:
    """What two canaries must differ in to be two: GUIDs differing only in form are one."""
    try:
        return canonical(canary)
    except ValueError:
        return canary.strip().lower()


def collect_canaries(paths: Iterable[Path]) -> dict[str, str]:
    """canary (canonical) -> task id, from task folders, folders of tasks and sealed pool
    folders (a folder holding pool.toml: the canaries of its cards)."""
    found: dict[str, str] = {}
    for path in map(Path, paths):
        if (path / POOL_FILE).is_file():
            manifest = load_model(path / POOL_FILE, PoolManifest, what="pool manifest")
            pairs = [(card.canary, card.id) for card in manifest.task]
            source = path / POOL_FILE
        else:
            pairs = [(task.spec.canary, task.id) for task in discover_tasks([path])]
            source = path
        for canary, task_id in pairs:
            try:
                found.setdefault(canonical(canary), task_id)
            except ValueError:
                raise LastexamError(f"task {task_id}: canary {canary!r} is not a GUID",
                                    path=source) from None
    return found


def warn_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


class Scanner:
    """Scans files and folders for canaries; counts what it read for a summary."""

    def __init__(self, canaries: Mapping[str, str], warn: Callable[[str], None] = warn_stderr):
        try:
            self._tasks = {canonical(c).encode(): task_id for c, task_id in canaries.items()}
        except ValueError as e:
            raise LastexamError(f"not a GUID canary: {e}") from None
        self.warn = warn
        self.files = 0
        self.bytes = 0  # decompressed
        self.unreadable = 0

    def scan(self, paths: Iterable[Path]) -> Iterator[Hit]:
        paths = [Path(p) for p in paths]
        for p in paths:
            if not p.exists():
                raise LastexamError("no such file or folder", path=p)
        for file in self._files(paths):
            try:
                yield from self.scan_stream(file, read_chunks(file))
                self.files += 1
            except (OSError, EOFError, ValueError, zlib.error, Unreadable) as e:
                self.unreadable += 1
                self.warn(f"{file}: {_reason(e)}; skipped")

    def scan_stream(self, file: Path, chunks: Iterable[bytes]) -> Iterator[Hit]:
        """The hits in the concatenated chunks, with their offsets in it."""
        tasks = self._tasks
        base = 0  # offset of buf[0] in the stream
        tail = b""
        for chunk in chunks:
            buf = tail + chunk if tail else chunk
            for m in _PROBE.finditer(buf):
                start = m.start() - GUID_HEAD
                if start >= 0:
                    task_id = tasks.get(buf[start:start + GUID_LEN].lower())
                    if task_id is not None:
                        yield Hit(file, base + start, task_id)
            self.bytes += len(chunk)
            # A GUID wholly in buf was found; one that starts in the kept tail is found next time.
            keep = min(len(buf), OVERLAP)
            base += len(buf) - keep
            tail = buf[len(buf) - keep:]

    def _files(self, paths: list[Path]) -> Iterator[Path]:
        for p in paths:
            if not p.is_dir():
                yield p
                continue
            for root, dirs, names in os.walk(p, onerror=self._walk_error):
                dirs.sort()
                for name in sorted(names):
                    f = Path(root, name)
                    if f.is_file():  # not fifos, sockets or broken links
                        yield f

    def _walk_error(self, e: OSError) -> None:
        self.unreadable += 1
        self.warn(f"{e.filename}: cannot list: {e.strerror}; skipped")


def scan(paths: Iterable[Path], canaries: Mapping[str, str]) -> Iterator[Hit]:
    """Every occurrence of a canary in the files and folders (recursively) of `paths`."""
    return Scanner(canaries).scan(paths)


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f"cannot read: {e.strerror}"
    return str(e) or type(e).__name__


def _read_all(f: BinaryIO) -> Iterator[bytes]:
    while chunk := f.read(CHUNK):
        yield chunk


def read_chunks(file: Path) -> Iterator[bytes]:
    """The bytes the scanner searches in `file`, decompressed, in chunks of up to CHUNK."""
    suffix = file.suffix.lower()
    if suffix == ".gz":
        with gzip.open(file, "rb") as f:
            yield from _read_all(f)
    elif suffix in ZSTD_SUFFIXES:
        import zstandard

        try:
            with file.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(
                    raw, read_across_frames=True) as f:
                yield from _read_all(f)
        except zstandard.ZstdError as e:
            raise Unreadable(f"not a readable zstd stream: {e}") from None
    elif suffix == ".parquet":
        yield from _parquet_text(file)
    else:
        with file.open("rb") as f:
            yield from _read_all(f)


def _parquet_text(file: Path) -> Iterator[bytes]:
    """The values of the string columns, one per line, batch by batch and column by column."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise Unreadable("cannot read parquet without pyarrow (pip install 'lastexam[scan]')") from None

    def is_text(t) -> bool:
        if pa.types.is_dictionary(t):
            t = t.value_type
        return pa.types.is_string(t) or pa.types.is_large_string(t)

    pf = pq.ParquetFile(file)
    columns = [f.name for f in pf.schema_arrow if is_text(f.type)]
    if not columns:
        return
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH, columns=columns):
        for column in batch.columns:
            values = [v for v in column.to_pylist() if v is not None]
            if values:
                yield ("\n".join(values) + "\n").encode()
