"""The shell tool the `llm` adapter gives Simon Willison's `llm` CLI (`llm --functions FILE`)."""

import subprocess


def bash(command: str) -> str:
    """Run a command with bash in a fresh shell; returns its exit status, then its output
    (stdout and stderr)."""
    proc = subprocess.run(["/bin/bash", "-c", command], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    return f"exit status {proc.returncode}\n{proc.stdout}"
