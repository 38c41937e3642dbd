"""On-disk layout of a run while it is under way.

LASTEXAM_HOME/work/<run-id>/            (removed when the run ends)
    etc/passwd, etc/group               identity files the sandboxes see
    lib/lastexam/                       the grading library, for the grading sandbox
    tasks/<task-id>/                    read-only copy of the hidden parts, for grading/oracle
                                        (a sealed task's: in its trial's task/, not here)
    validate/<task-id>/                 the validation gates' gradings and generator runs
    trials/<trial-id>/
        instruction.md inputs/ output/ home/   seen by the agent at /task/... and $HOME (the
                                        instruction: in fast/ when there is one)
        exec.log                        the host's copy of an exec log past 1 MB (not seen by the agent)
        desktop/                        a desktop trial's /run/lastexam/desktop (writable)
        grade/                          result/, scratch/ and the logs of the grading sandbox
        trial/                          the trial's folder as it will be stored (layout.py's
                                        TrialPaths): agent/ holds the agent's logs (not seen
                                        by the agent), output/ the regular files copied from
                                        the agent's output/ after it died, grader/ the grading
        task/                           a sealed task's hidden parts, decrypted for this trial
    fast/                               small files each trial makes and removes, on a tmpfs
                                        (a link to /dev/shm/lastexam-<run-id>-*) when there is one:
        <trial-id>.exec/                the exec log's FIFO (fifo/, read-only inside); its host
                                        copy is the trial's exec.log (not seen by the agent)
        <grading>.context.json          a grading's context, mounted read-only
        <trial-id>.instruction.md       the trial's instruction (else in the trial's folder)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from lastexam.layout import TrialPaths
from lastexam.paths import home_subdir, package_dir
from lastexam.run import inode_flags, recycle
from lastexam.run.recycle import Spares
from lastexam.sandbox import warm
from lastexam.task.load import Task
from lastexam.untrusted import remove_tree
from lastexam.usage.channel import HOST_LOG

HIDDEN_PARTS = ("task.toml", "grader.py", "reference", "inputs", "solution")
AGENT_FOLDERS = ("inputs", "output", "home")  # the agent's own, kept for the next trial
SHM = Path("/dev/shm")
FAST_PREFIX = "lastexam-"
GATEWAY_SOCKET = "gateway.sock"
INSTRUCTION = "instruction.md"


def _chown_tree(root: Path, uid: int | None) -> None:
    if uid is None:
        return
    for dirpath, dirnames, filenames in os.walk(root):
        os.chown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def _close_to_others(path: Path, uid: int | None) -> None:
    """A sealed task's decrypted files: the sandbox's user's alone (the harness's reads them
    anyway). LASTEXAM_HOME/work can be listed and a trial's folder name follows from the
    public cards: a local user could otherwise read them while the trial runs."""
    paths = [path, *path.rglob("*")] if path.is_dir() else [path]
    for p in paths:
        if uid is not None:
            os.lchown(p, uid, uid)
        if not p.is_symlink():
            p.chmod(p.stat().st_mode & 0o700)


@dataclass(frozen=True)
class TrialWorkspace:
    root: Path
    fast: Path | None = None  # the run's fast folder (RunWorkArea.fast); None: root
    spares: Path | None = None  # the run's kept folders (run/recycle.py); None: none kept

    @cached_property
    def instruction(self) -> Path:
        """Mounted read-only: on the fast folder when there is one (a file made and removed
        per trial)."""
        return self.root / INSTRUCTION if self.fast is None else self.fast / f"{self.root.name}.{INSTRUCTION}"

    @cached_property
    def inputs(self) -> Path:
        return self.root / "inputs"

    @cached_property
    def output(self) -> Path:
        return self.root / "output"

    @cached_property
    def home(self) -> Path:
        return self.root / "home"

    @cached_property
    def desktop(self) -> Path:
        return self.root / "desktop"

    @cached_property
    def trial(self) -> TrialPaths:
        """The trial's folder, moved whole into the run folder when the trial is recorded."""
        return TrialPaths(self.root / "trial")

    @cached_property
    def exec_log(self) -> Path:
        return self.root / "exec" if self.fast is None else self.fast / f"{self.root.name}.exec"

    @cached_property
    def exec_copy(self) -> Path:
        """The host's copy of an exec log past usage/channel.py's MEMORY_BYTES, on disk (a
        flood fills it up to its cap)."""
        return self.root / HOST_LOG

    @cached_property
    def grade(self) -> Path:
        return self.root / "grade"

    def stage(self, task: Task, uid: int | None) -> None:
        remove_tree(self.root)
        remove_tree(self.instruction)
        kept = not task.sealed and self.spares is not None and Spares(self.spares).take(self.root)
        if not kept:
            self.root.mkdir(parents=True)
            self.root.chmod(0o711)
        if task.sealed:  # decrypted straight into the workspace, nowhere else
            # inputs/ is closed before its files are written (they take the bundle's modes).
            self.inputs.mkdir(mode=0o700)
            task.stage_agent_part(self.root, self.instruction)
        else:
            shutil.copyfile(task.instruction, self.instruction)
            self.instruction.chmod(0o444)
            if task.inputs_dir.is_dir():
                shutil.copytree(task.inputs_dir, self.inputs, symlinks=False, dirs_exist_ok=True)
            else:
                self.inputs.mkdir(exist_ok=True)
        for d in (self.output, self.home):
            d.mkdir(exist_ok=True)
        for d in AGENT_FOLDERS:
            closed = task.sealed and d == "inputs"  # opened to the sandbox's uid alone below
            (self.root / d).chmod(recycle.FOLDER_MODE & 0o700 if closed else recycle.FOLDER_MODE)
            recycle.renew(self.root / d)
        self.trial.root.mkdir()
        self.trial.root.chmod(0o711)  # its output/ is mounted into the grading sandbox
        self.trial.agent.mkdir(mode=0o700)  # grade/ is made by the grading (run/grading.py)
        for d in (self.inputs, self.output, self.home):
            _chown_tree(d, uid)
        if task.sealed:
            for p in (self.instruction, self.inputs):
                _close_to_others(p, uid)

    @cached_property
    def sealed_task(self) -> Path:
        """A sealed task's grading copy (its hidden parts), this trial's alone."""
        return self.root / "task"

    def task_copy(self, area: RunWorkArea, task: Task, uid: int | None) -> Path:
        """The hidden parts that grading (and the oracle) mount: the run's shared copy of a
        task folder, or for a sealed task a copy decrypted for this trial only."""
        if not task.sealed:
            return area.task_copy(task)
        if not self.sealed_task.exists():
            tmp = self.root / ".task.tmp"
            remove_tree(tmp)
            tmp.mkdir(mode=0o700)
            task.grading_copy(tmp)
            _close_to_others(tmp, uid)
            os.rename(tmp, self.sealed_task)
        return self.sealed_task

    def own_home(self, uid: int | None) -> None:
        """Give the sandbox's uid the files written into HOME before the sandbox starts."""
        _chown_tree(self.home, uid)

    def make_desktop(self, uid: int | None) -> None:
        """The desktop folder, empty and the sandbox's."""
        remove_tree(self.desktop)
        self.desktop.mkdir(mode=0o755)
        _chown_tree(self.desktop, uid)

    def remove(self, reuse: bool = False) -> None:
        """Remove the workspace; with `reuse` (no process of the sandbox is left), keep its
        folders for the next trial when they are as they were made (run/recycle.py)."""
        remove_tree(self.exec_log)
        remove_tree(self.instruction)
        if not (reuse and self.spares is not None and self._reusable()
                and Spares(self.spares).keep(self.root)):
            remove_tree(self.root)

    def _reusable(self) -> bool:
        if (self.root / recycle.NOT_KEPT).exists() or not recycle.clear(
                self.root, keep=(*AGENT_FOLDERS, self.grade.name)):
            return False
        grade = self.grade.is_dir()
        if grade and not recycle.grading_folder_ready(self.grade):
            return False
        holding = (*AGENT_FOLDERS, *([self.grade.name] if grade else []))
        return (all(recycle.clear(self.root / d) and recycle.as_made(self.root / d, recycle.FOLDER_MODE)
                    for d in AGENT_FOLDERS)
                and recycle.as_made(self.root, recycle.PRIVATE_MODE, holding=holding))

    def free_agent_areas(self) -> None:
        """Once collected, what the agent could write (and fill the disk with) goes at once
        (its folders, emptied, may serve the next trial)."""
        for d in (self.exec_log, self.exec_copy, self.desktop):
            remove_tree(d)
        for d in (self.home, self.inputs, self.output):
            if not recycle.clear(d):
                remove_tree(d)


@dataclass(frozen=True)
class RunWorkArea:
    root: Path

    @classmethod
    def for_run(cls, run_id: str) -> RunWorkArea:
        return cls(home_subdir("work") / run_id)

    @cached_property
    def etc(self) -> Path:
        return self.root / "etc"

    @cached_property
    def fast(self) -> Path:
        """Small files that each trial makes and removes (exec-log FIFOs, gradings' contexts):
        a link to a folder on /dev/shm when that is a tmpfs, made by prepare(). On an ext4
        without a journal every file made there passes over the inodes freed in the last minutes
        (docs/performance.md): a trial's few such files cost it milliseconds."""
        return self.root / "fast"

    @cached_property
    def lib(self) -> Path:
        return self.root / "lib"

    @cached_property
    def usage_hook(self) -> Path:
        return self.lib / "usage-hook"

    @cached_property
    def gateway_dir(self) -> Path:
        """The folder of the run's gateway socket: in the area, or, when that path would be
        too long for a unix socket (~107 bytes), a fixed temporary folder named after the run."""
        inside = self.root / "gateway"
        if len(os.fsencode(inside / GATEWAY_SOCKET)) <= 100:
            return inside
        return Path(tempfile.gettempdir()) / f"lastexam-gw-{self.root.name}"

    def gateway_socket(self) -> Path:
        """Where the run's gateway listens, its folder made."""
        folder = self.gateway_dir
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o711)  # the sandbox's uid connects by name, never lists it
        return folder / GATEWAY_SOCKET

    def prepare(self) -> None:
        self.root.parent.mkdir(parents=True, exist_ok=True)
        inode_flags.spread_subfolders(self.root.parent)  # before the run's folder is made
        self.root.mkdir(exist_ok=True)
        self.root.chmod(0o711)
        self._make_fast()
        for d in ("trials", "tasks"):
            (self.root / d).mkdir(exist_ok=True)
            (self.root / d).chmod(0o711)
        pkg = self.lib / "lastexam"
        if not pkg.exists():
            tmp = self.lib / ".lastexam.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            self.lib.mkdir(parents=True, exist_ok=True)
            shutil.copytree(_compiled_library(), tmp)  # copy2: the bytecode stays valid
            os.replace(tmp, pkg)
        self.usage_hook.mkdir(exist_ok=True)
        shutil.copyfile(package_dir() / "usage" / "sitecustomize.py", self.usage_hook / "sitecustomize.py")
        _make_world_readable(self.lib)

    def task_copy(self, task: Task) -> Path:
        """A per-run copy of the task's hidden parts that sandboxes can mount read-only."""
        dest = self.root / "tasks" / task.id
        if dest.exists():
            return dest
        # Trials of one task ask for it at once: each builds its own copy, the first to rename
        # it into place wins (a rename onto a non-empty folder fails) and the others drop theirs.
        tmp = self.root / "tasks" / f".{task.id}.{os.getpid()}.{threading.get_ident()}.tmp"
        remove_tree(tmp)
        tmp.mkdir()
        for part in HIDDEN_PARTS:
            src = task.path / part
            if src.is_dir():
                shutil.copytree(src, tmp / part, ignore=shutil.ignore_patterns("__pycache__"))
            elif src.is_file():
                shutil.copyfile(src, tmp / part)
        _make_world_readable(tmp)
        try:
            os.rename(tmp, dest)
        except OSError:
            remove_tree(tmp)
        return dest

    def _make_fast(self) -> None:
        if self.fast.is_dir():  # a resumed run's, still there
            return
        remove_tree(self.fast)  # a link left by a run before a reboot
        if _is_tmpfs(SHM):
            target = Path(tempfile.mkdtemp(prefix=f"{FAST_PREFIX}{self.root.name}-", dir=SHM))
            target.chmod(0o711)
            self.fast.symlink_to(target)
        else:
            self.fast.mkdir(mode=0o711)

    def _fast_target(self) -> Path | None:
        """The /dev/shm folder the fast link names (only one of ours is ever removed)."""
        try:
            target = Path(os.readlink(self.fast))
        except OSError:
            return None
        ok = target.parent == SHM and target.name.startswith(f"{FAST_PREFIX}{self.root.name}-")
        return target if ok else None

    def trial(self, trial_id: str) -> TrialWorkspace:
        return TrialWorkspace(self.root / "trials" / trial_id,
                              self.fast if self.fast.is_dir() else None, self.root / "spare")

    def validation(self, task_id: str) -> Path:
        """Scratch folders of `lastexam validate`'s gates for one task."""
        return self.root / "validate" / task_id

    def remove(self) -> None:
        warm.close(self.root)  # the run's warm grading workers, whose folders are in the area
        fast = self._fast_target()
        remove_tree(self.root)
        if fast is not None:
            remove_tree(fast)
        remove_tree(self.gateway_dir)


def _is_tmpfs(path: Path) -> bool:
    fstype = None  # the last mount on the path is the one seen
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[1] == str(path):
                fstype = fields[2]
    return fstype == "tmpfs"


def _make_world_readable(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            p = os.path.join(dirpath, name)
            mode = os.lstat(p).st_mode
            if stat.S_ISREG(mode):
                os.chmod(p, 0o755 if mode & 0o100 else 0o644)


def _compiled_library() -> Path:
    """The grading library (lastexam/__init__.py and grading/) with its bytecode, built once
    per version of its sources in LASTEXAM_HOME/lib: compiling it took a run a third of a
    second."""
    grading = package_dir() / "grading"
    sources = [package_dir() / "__init__.py",
               *sorted(p for p in grading.rglob("*") if p.is_file() and "__pycache__" not in p.parts)]
    digest = hashlib.sha256()
    for src in sources:
        digest.update(str(src.relative_to(package_dir())).encode() + b"\0" + src.read_bytes() + b"\0")
    built = home_subdir("lib") / f"grading-{digest.hexdigest()[:16]}"
    if built.is_dir():
        return built
    tmp = built.with_name(f".{built.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    remove_tree(tmp)
    for src in sources:
        (tmp / src.relative_to(package_dir())).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, tmp / src.relative_to(package_dir()))
    _precompile(tmp)
    try:
        os.rename(tmp, built)
    except OSError:  # another run built it first
        remove_tree(tmp)
    return built


def _precompile(folder: Path) -> None:
    """Bytecode for the grading library, made by the Python the sandboxes run (Debian's): the
    library is mounted read-only there, so without it every grading would compile it again
    (tens of milliseconds per trial)."""
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    subprocess.run([python, "-m", "compileall", "-q", str(folder)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
