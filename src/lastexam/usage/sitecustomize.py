# lastexam usage hook: mounted read-only into agent sandboxes and put on PYTHONPATH. When a
# Python process exits, it records which third-party packages it imported, so that the use of
# Python-based professional software (RDKit, MNE, ...) shows in the trial's exec log. It must
# never disturb the agent's program: every failure is swallowed.
import atexit
import os
import sys


def _record() -> None:
    try:
        stdlib = sys.stdlib_module_names
        names = sorted(
            {m.split(".", 1)[0] for m in list(sys.modules)}
            - set(stdlib) - {"sitecustomize", "_distutils_hack", "__main__"}
        )
        names = [n for n in names if not n.startswith("_")]
        if not names:
            return
        folder = os.environ.get("LASTEXAM_EXEC_DIR", "/run/lastexam/exec")
        with open(f"{folder}/py-{os.getpid()}.txt", "w") as f:
            f.write(" ".join(names) + "\n")
    except Exception:
        pass


atexit.register(_record)
