"""Build the exec-log shim (execlog.c) into a shared library, once per source version, with
the machine's C compiler. Without a compiler there is no exec log: usage is then unknown
(null), never "not used"."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from functools import cache
from importlib import resources
from pathlib import Path

from lastexam.paths import home_subdir


@cache
def build_shim() -> Path | None:
    source = resources.files(__package__).joinpath("execlog.c").read_bytes()
    target = home_subdir("lib") / f"execlog-{hashlib.sha256(source).hexdigest()[:12]}.so"
    if target.is_file():
        return target
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        return None
    with open(home_subdir("locks") / "execlog-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        src = target.with_suffix(".c")
        src.write_bytes(source)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        proc = subprocess.run(
            [compiler, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(src), "-ldl"],
            capture_output=True,
        )
        if proc.returncode != 0 or not tmp.is_file():
            return None
        tmp.chmod(0o755)
        os.replace(tmp, target)
    return target
