"""A sealed task's bundle: its folder split in three parts (pool/model.py PARTS), each a
deterministic tar (or the bare task.toml) encrypted with age to the pool's recipients.

Decrypted parts live in memory; they reach the disk only where a caller unpacks them (a
trial's workspace, its grading copy, a validation's private folder, `pool release`)."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from lastexam.errors import LastexamError
from lastexam.pool.model import PART_FILES

AGENT_PART = ("instruction.md", "inputs")


class SealedBundleError(LastexamError):
    """A bundle that cannot be opened: wrong key, altered, truncated or replaced. The run
    stops (run/policy.py): no trial of a damaged task could be scored."""  # the rest of the folder but task.toml is hidden


def part_of(rel: str) -> str:
    top = rel.split("/", 1)[0]
    if rel == "task.toml":
        return "spec"
    return "agent" if top in AGENT_PART else "hidden"


def task_files(root: Path) -> list[tuple[str, Path]]:
    """Every regular file of a task folder, sorted, as tree_hash sees them. A link or a
    special file cannot be sealed faithfully: it is refused."""
    files = []
    for p in sorted(root.rglob("*")):
        if "__pycache__" in p.relative_to(root).parts:
            continue
        if p.is_symlink() or not (p.is_file() or p.is_dir()):
            raise LastexamError("a link or special file cannot be sealed", path=p)
        if p.is_file():
            files.append((p.relative_to(root).as_posix(), p))
    return files


def pack(files: Iterable[tuple[str, Path]], out: BinaryIO | None = None) -> bytes:
    """A tar of the files with fixed owners, times and modes: the same folder packs to the
    same bytes (before encryption) on any machine. Into `out` (streamed; returns b"") or
    into memory."""
    buf = out if out is not None else io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, path in files:
            info = tarfile.TarInfo(rel)
            info.size = path.stat().st_size
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info.mtime = 0
            with path.open("rb") as f:
                tar.addfile(info, f)
    return b"" if out is not None else buf.getvalue()


def encrypt(data: bytes, recipients: list[Any]) -> bytes:
    import pyrage

    return pyrage.encrypt(data, recipients)


def check_part(bundle_dir: Path, part: str, expected_sha256: str) -> bytes:
    """The part's encrypted bytes, checked against the card's hash."""
    path = bundle_dir / PART_FILES[part]
    try:  # not blocking on a FIFO, and reading only a regular file (not /dev/zero)
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise SealedBundleError(f"the sealed {part} part is not a regular file", path=path)
            sealed = f.read()
    except OSError as e:
        raise SealedBundleError(f"cannot read the sealed {part} part: {e}", path=path) from None
    if hashlib.sha256(sealed).hexdigest() != expected_sha256:
        raise SealedBundleError("does not match the hash on its card in pool.toml: the bundle "
                                "was altered, truncated or replaced", path=path)
    return sealed


def x25519_recipients(sealed: bytes) -> int:
    """How many X25519 recipients an age file was encrypted to: its header's stanzas of that
    type (the header is in clear; grease stanzas are of other types)."""
    header = sealed[: sealed.find(b"\n---")] if b"\n---" in sealed else b""
    return sum(1 for line in header.split(b"\n") if line.startswith(b"-> X25519 "))


def read_part(bundle_dir: Path, part: str, expected_sha256: str, identity: Any) -> bytes:
    """Decrypt one part after checking its file against the card's hash."""
    import pyrage

    path = bundle_dir / PART_FILES[part]
    sealed = check_part(bundle_dir, part, expected_sha256)
    try:
        return pyrage.decrypt(sealed, [identity])
    except pyrage.DecryptError as e:
        why = ("the key is not one of the bundle's recipients" if "no matching keys" in str(e).lower()
               else f"the file is damaged ({e})")
        raise SealedBundleError(f"cannot decrypt: {why}", path=path) from None


Files = dict[str, tuple[bytes, int]]  # relative path -> (bytes, mode)


def members(data: bytes, where: Path) -> Files:
    """The files of a decrypted tar part, by relative path, checked: only plain regular files
    (not sparse: a few bytes of tar could read back as a terabyte of zeros) with plain
    relative names (a tar could otherwise write outside the folder it is unpacked in)."""
    found: Files = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for info in tar:
                name = PurePosixPath(info.name)
                if (info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or info.sparse is not None
                        or name.is_absolute() or ".." in name.parts
                        or str(name) != info.name or info.name in found):
                    raise SealedBundleError(f"unsafe or repeated entry {info.name!r} in a sealed part",
                                        path=where)
                f = tar.extractfile(info)
                found[info.name] = (f.read() if f else b"", 0o755 if info.mode & 0o100 else 0o644)
    except tarfile.TarError as e:
        raise SealedBundleError(f"a sealed part is not a readable tar: {e}", path=where) from None
    return found


def write_files(files: Files, dest: Path) -> None:
    """Write decrypted files under dest (folders 0755)."""
    for rel, (data, mode) in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        target.write_bytes(data)
        target.chmod(mode)
