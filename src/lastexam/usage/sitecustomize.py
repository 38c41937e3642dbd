# lastexam usage hook: mounted read-only into agent sandboxes and put first on PYTHONPATH. When
# a Python process exits, it records which third-party packages it imported, so that the use of
# Python-based professional software (RDKit, MNE, ...) shows in the trial's exec log. It must
# never disturb the agent's program: every failure is swallowed.
import atexit
import os
import re
import sys

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")


def _record() -> None:
    try:
        path = os.environ.get("LASTEXAM_EXEC_LOG")
        if not path:
            return
        stdlib = sys.stdlib_module_names
        names = sorted(
            {m.split(".", 1)[0] for m in list(sys.modules)}
            - set(stdlib) - {"sitecustomize", "_distutils_hack", "__main__"}
        )
        names = [n for n in names if _NAME.fullmatch(n)]
        if not names:
            return
        line = f"py\t{os.getpid()}\t"
        kept = []
        for n in names:  # one write under PIPE_BUF: lines never interleave
            if len(line) + sum(len(k) + 1 for k in kept) + len(n) + 1 >= 4000:
                break
            kept.append(n)
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            os.set_blocking(fd, True)
            os.write(fd, (line + " ".join(kept) + "\n").encode())
        finally:
            os.close(fd)
    except Exception:
        pass


atexit.register(_record)
