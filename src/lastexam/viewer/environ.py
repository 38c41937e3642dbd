"""The viewer's process holds no secrets: it restarts itself with only the variables it needs
(an allowlist, so provider keys under any name are dropped), before it reads or serves anything.
A restart, not a change of os.environ, because /proc/self/environ shows the environment the
process was started with."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

KEEP = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "NO_COLOR",
        "COLUMNS", "LINES", "PYTHONPATH", "PYTHONIOENCODING", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
        "VIRTUAL_ENV", "LASTEXAM_HOME"}
RESTARTED = "LASTEXAM_VIEWER_RESTARTED"


def viewer_environment(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in KEEP or k.startswith("LC_")}


def restart_without_secrets() -> None:
    """Re-execute this very command once, with the allowlisted environment only."""
    if os.environ.get(RESTARTED) == "1":  # set only by the restart: never loop
        for name in set(os.environ) - set(viewer_environment(os.environ)) - {RESTARTED}:
            del os.environ[name]
        return
    sys.stdout.flush()
    sys.stderr.flush()
    clean = {**viewer_environment(os.environ), RESTARTED: "1"}
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], clean)
