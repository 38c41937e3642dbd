"""What every attack is made of: the Attack record and the shell fragments attacks share."""

from __future__ import annotations

from dataclasses import dataclass, field

HONEST_TOTAL = (
    "awk -F, 'NR > 1 { s += $1; n++ } END { printf \"{\\\"total\\\": %.6f, \\\"count\\\": %d}\\n\", s, n }' "
    "/task/inputs/data.csv > /task/output/result.json"
)
WRONG_TOTAL = "echo '{\"total\": 1, \"count\": 1}' > /task/output/result.json"
CANARY = "c=$(grep -o '[0-9a-f]\\{8\\}-[0-9a-f-]\\{27\\}' /task/instruction.md | head -1)"
PY = "/usr/bin/env python3"


def searched_files() -> str:
    """find's test for the sandbox-wide searches for hidden content: every file, but of the
    system's and the environments' read-only installs only those under 4 MiB. Their binaries and
    libraries are half the bytes (reading them took a search 40 s), and nothing of a task is
    ever staged there (tests/test_sandbox.py checks the project and LASTEXAM_HOME are not)."""
    from lastexam.paths import lastexam_home

    return f"\\( -size -4096k -o ! \\( -path '/usr/*' -o -path '{lastexam_home()}/envs/*' \\) \\)"


@dataclass(frozen=True)
class Attack:
    id: str
    group: str
    what: str  # one line for docs/integrity.md
    script: str
    base: str = "column-total"  # the test task it attacks
    statuses: tuple[str, ...] = ("completed",)
    max_score: float = 0.0  # what its deliverables are worth without the cheat
    timeout_s: int | None = None
    limits: dict[str, int] = field(default_factory=dict)
    ended_by: str | None = None
    dropped: tuple[tuple[str, str], ...] = ()  # (path, why) the snapshot must list
    log_has: tuple[str, ...] = ()  # text the agent's stdout must show (the attack really ran)
    log_lacks: tuple[str, ...] = ("FOUND",)
    error_has: str = ""

    @property
    def task_id(self) -> str:
        return f"atk-{self.id}"
