"""On-disk layout of a run while it is under way, and the output snapshot.

LASTEXAM_HOME/work/<run-id>/            (removed when the run ends)
    etc/passwd, etc/group               identity files the sandboxes see
    lib/lastexam/                       the grading library, for the grading sandbox
    tasks/<task-id>/                    read-only copy of the hidden parts, for grading/oracle
    trials/<trial-id>/
        instruction.md inputs/ output/ home/   seen by the agent at /task/... and $HOME
        logs/                           agent stdout/stderr (not seen by the agent)
        snapshot/                       regular files copied from output/ after the agent died
        grade/                          context.json, result/, scratch/ of the grading sandbox
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from lastexam.paths import home_subdir, package_dir
from lastexam.task.load import Task

HIDDEN_PARTS = ("task.toml", "grader.py", "reference", "inputs", "solution")


def _chown_tree(root: Path, uid: int | None) -> None:
    if uid is None:
        return
    for dirpath, dirnames, filenames in os.walk(root):
        os.chown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


@dataclass(frozen=True)
class TrialWorkspace:
    root: Path

    @property
    def instruction(self) -> Path:
        return self.root / "instruction.md"

    @property
    def inputs(self) -> Path:
        return self.root / "inputs"

    @property
    def output(self) -> Path:
        return self.root / "output"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def snapshot(self) -> Path:
        return self.root / "snapshot"

    @property
    def exec_log(self) -> Path:
        return self.root / "exec"

    @property
    def grade(self) -> Path:
        return self.root / "grade"

    def stage(self, task: Task, uid: int | None) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        self.root.chmod(0o711)
        shutil.copyfile(task.instruction, self.instruction)
        self.instruction.chmod(0o444)
        if task.inputs_dir.is_dir():
            shutil.copytree(task.inputs_dir, self.inputs, symlinks=False)
        else:
            self.inputs.mkdir()
        for d in (self.output, self.home, self.exec_log):
            d.mkdir()
        for d in (self.logs, self.grade):
            d.mkdir(mode=0o700)
        for d in (self.inputs, self.output, self.home, self.exec_log):
            _chown_tree(d, uid)

    def own_home(self, uid: int | None) -> None:
        """Give the sandbox's uid the files written into HOME before the sandbox starts."""
        _chown_tree(self.home, uid)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass(frozen=True)
class RunWorkArea:
    root: Path

    @classmethod
    def for_run(cls, run_id: str) -> RunWorkArea:
        return cls(home_subdir("work") / run_id)

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def lib(self) -> Path:
        return self.root / "lib"

    @property
    def usage_hook(self) -> Path:
        return self.lib / "usage-hook"

    def prepare(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o711)
        for d in ("trials", "tasks"):
            (self.root / d).mkdir(exist_ok=True)
            (self.root / d).chmod(0o711)
        pkg = self.lib / "lastexam"
        if not pkg.exists():
            tmp = self.lib / ".lastexam.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            shutil.copyfile(package_dir() / "__init__.py", tmp / "__init__.py")
            shutil.copytree(
                package_dir() / "grading", tmp / "grading",
                ignore=shutil.ignore_patterns("__pycache__"),
            )
            os.replace(tmp, pkg)
        self.usage_hook.mkdir(exist_ok=True)
        shutil.copyfile(package_dir() / "usage" / "sitecustomize.py", self.usage_hook / "sitecustomize.py")
        _make_world_readable(self.lib)

    def task_copy(self, task: Task) -> Path:
        """A per-run copy of the task's hidden parts that sandboxes can mount read-only."""
        dest = self.root / "tasks" / task.id
        if dest.exists():
            return dest
        tmp = self.root / "tasks" / f".{task.id}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for part in HIDDEN_PARTS:
            src = task.path / part
            if src.is_dir():
                shutil.copytree(src, tmp / part, ignore=shutil.ignore_patterns("__pycache__"))
            elif src.is_file():
                shutil.copyfile(src, tmp / part)
        _make_world_readable(tmp)
        with contextlib.suppress(OSError):
            os.replace(tmp, dest)
        return dest

    def trial(self, trial_id: str) -> TrialWorkspace:
        return TrialWorkspace(self.root / "trials" / trial_id)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _make_world_readable(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            p = os.path.join(dirpath, name)
            mode = os.lstat(p).st_mode
            if stat.S_ISREG(mode):
                os.chmod(p, 0o755 if mode & 0o100 else 0o644)


def snapshot_output(src: Path, dest: Path, *, max_bytes: int, max_files: int = 100_000) -> dict:
    """Copy the regular files under src to dest, never following links. Everything else
    (symlinks, files hard-linked from outside the output, devices, FIFOs, sockets) is dropped
    and listed, as are files beyond the byte or file caps. Names are kept byte for byte."""
    dropped: list[dict[str, str]] = []
    src_b, dest_b = os.fsencode(src), os.fsencode(dest)
    entries: list[tuple[bytes, os.stat_result]] = []
    names_per_inode: dict[tuple[int, int], int] = {}
    os.makedirs(dest_b, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(src_b, followlinks=False):
        rel_dir = os.path.relpath(dirpath, src_b)
        for name in list(dirnames):
            if os.path.islink(os.path.join(dirpath, name)):
                dropped.append(_drop(src_b, os.path.join(dirpath, name), "symlink"))
                dirnames.remove(name)
            else:
                os.makedirs(os.path.join(dest_b, rel_dir, name), exist_ok=True)
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError as e:
                dropped.append(_drop(src_b, path, f"unreadable: {e.strerror}"))
                continue
            entries.append((path, st))
            key = (st.st_dev, st.st_ino)
            names_per_inode[key] = names_per_inode.get(key, 0) + 1
    files = total = 0
    for path, st in sorted(entries):
        if stat.S_ISLNK(st.st_mode):
            dropped.append(_drop(src_b, path, "symlink"))
            continue
        if not stat.S_ISREG(st.st_mode):
            dropped.append(_drop(src_b, path, _kind(st.st_mode)))
            continue
        if st.st_nlink > names_per_inode[(st.st_dev, st.st_ino)]:
            dropped.append(_drop(src_b, path, "hard link to a file outside the output"))
            continue
        if files >= max_files or total + st.st_size > max_bytes:
            dropped.append(_drop(src_b, path, "over the output size cap"))
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            dropped.append(_drop(src_b, path, f"unreadable: {e.strerror}"))
            continue
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since lstat
                dropped.append(_drop(src_b, path, "not a regular file"))
                continue
            target = os.path.join(dest_b, os.path.relpath(path, src_b))
            with open(target, "wb") as out:
                copied = _copy_capped(f, out, max_bytes - total)
        files += 1
        total += copied
    return {"files": files, "bytes": total, "dropped": dropped[:200], "dropped_count": len(dropped)}


def _copy_capped(src, dst, limit: int) -> int:
    copied = 0
    while copied < limit:
        block = src.read(min(1 << 20, limit - copied))
        if not block:
            break
        dst.write(block)
        copied += len(block)
    return copied


def _drop(root: bytes, path: bytes, why: str) -> dict[str, str]:
    return {"path": os.path.relpath(path, root).decode("utf-8", errors="backslashreplace"), "why": why}


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"), (stat.S_ISDIR, "directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def inputs_state(pristine: Path, staged: Path) -> dict[str, str]:
    """sha256 of each staged input after the agent ran ("missing" / "not-regular" otherwise)."""
    state: dict[str, str] = {}
    for p in pristine.rglob("*"):
        if not p.is_file():
            continue
        rel = p.relative_to(pristine).as_posix()
        try:
            fd = os.open(staged / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            state[rel] = "missing"
            continue
        except OSError:
            state[rel] = "not-regular"
            continue
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                state[rel] = "not-regular"
                continue
            h = hashlib.sha256()
            for block in iter(lambda f=f: f.read(1 << 20), b""):
                h.update(block)
            state[rel] = h.hexdigest()
    return state
