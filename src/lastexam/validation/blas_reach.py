"""Whether the BLAS gate's other setting can change a task's runs.

The setting is OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS and OMP_NUM_THREADS (and
OPENBLAS_THREAD_TIMEOUT, which changes no result). The OPENBLAS_ ones are read by OpenBLAS only.
OMP_NUM_THREADS is read by every OpenMP runtime (libgomp is in the system for ngspice, R,
CalculiX, ImageMagick...); every sandbox pins it (envs/spec.py), so the rerun's value changes
nothing where the pin is that value. A program that reads the variable itself, or counts the
CPUs itself, is not seen (docs/task-format.md)."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from lastexam.envs.manage import Environment
from lastexam.paths import desktop_toolchain_dir
from lastexam.sandbox.bwrap import SYSTEM_DIRS
from lastexam.task.load import Task

# What a sandbox loads libraries from besides the environment's venv and the task's folder:
# /usr, the top-level library folders that are not links into /usr, and the desktop's toolchain.
SYSTEM_ROOTS = ("/usr",)
# In a task folder, a file that could bring a library in unseen: an archive a script could unpack.
ARCHIVES = (".whl", ".zip", ".egg", ".tar", ".tgz", ".gz", ".xz", ".bz2", ".zst", ".7z")
ELF = b"\x7fELF"


def _says_openblas(path: str, below: str) -> bool:
    if "openblas" in below.lower():
        return True
    name = os.path.basename(path).lower()
    # libblas.so.3 and liblapack.so.3 are links that Debian's alternatives point at OpenBLAS.
    return ("blas" in name or "lapack" in name) and "openblas" in os.path.realpath(path).lower()


def _walk(root: str, task_folder: bool) -> str:
    """The first file under root that is or may be OpenBLAS ("": none). An unreadable folder
    counts as one that may hold it."""
    problems: list[OSError] = []
    for folder, folders, files in os.walk(root, onerror=problems.append):
        rel = os.path.relpath(folder, root)
        if task_folder and rel == ".":  # fixtures are graded, never run under the setting
            folders[:] = [f for f in folders if f != "fixtures"]
        for name in files:
            path = os.path.join(folder, name)
            if _says_openblas(path, os.path.join(rel, name)):
                return path
            if task_folder and (name.lower().endswith(ARCHIVES) or _is_elf(path)):
                return path
    return f"{problems[0].filename} (unreadable)" if problems else ""


def _is_elf(path: str) -> bool:
    """Regular files only: opening a FIFO in a task folder would wait for a writer forever."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF
    except OSError:
        return False


@cache
def _system_openblas() -> str:
    """Cached for the process: the system's libraries do not change during a validation."""
    roots = [*SYSTEM_ROOTS, *(f"/{d}" for d in SYSTEM_DIRS if not Path(f"/{d}").is_symlink()),
             str(desktop_toolchain_dir())]
    for root in roots:
        if os.path.isdir(root) and (found := _walk(root, task_folder=False)):
            return found
    return ""


@cache
def _venv_openblas(venv: str) -> str:
    """Cached for the process, as the system's: one walk per environment, not per task."""
    return _walk(venv, task_folder=False)


def openblas_seen(env: Environment, task: Task) -> str:
    """A file of OpenBLAS (or one that may bring it) that the task's sandboxes can load; ""
    when there is none. The task's folder is walked each time."""
    return _system_openblas() or _venv_openblas(str(env.venv)) or _walk(str(task.path), task_folder=True)


def openmp_threads_fixed(env: Environment, threads: str) -> str:
    """Why OpenMP runtimes run the same threads under OMP_NUM_THREADS=threads as in the
    environment's own runs ("": they do not). Every sandbox pins the count (envs/spec.py), so
    this does not depend on the machine."""
    if env.spec.sandbox_env["OMP_NUM_THREADS"] == threads:
        return f"OMP_NUM_THREADS is {threads} in the environment's sandboxes too"
    return ""


def rerun_changes_nothing(env: Environment, task: Task, threads: str) -> str:
    """Why the BLAS gate's rerun would repeat the default run ("": it may not). The thread
    count first: where it differs, nothing is walked."""
    same = openmp_threads_fixed(env, threads)
    if not same or openblas_seen(env, task):
        return ""
    return (f"not rerun: no OpenBLAS library in the system, environment {env.name!r} or the task "
            f"folder, and {same}")
