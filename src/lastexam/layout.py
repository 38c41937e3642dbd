"""Where a run's files are, defined once: the run folder, a trial's folder, and the paths the
sandboxes see. A trial's folder has the same layout while the trial runs (inside its
workspace, see run/workspace.py) and once stored in the run folder.

<run-dir>/
    results.db                      the store: runs, trials, grades (the commit point)
    trials/<trial-id>/              one finished trial (TrialPaths)
        trial.json                  the trial's record
        output/                     regular files the agent left in /task/output
        agent/                      agent.stdout.log, agent.stderr.log, exec.jsonl,
                                    inputs_after.json, the harness's native logs
        grader/                     result.json, grader.stdout.log, grader.stderr.log
        grades/NN-<version>/        grade.json of each regrade
        gateway.jsonl, trajectory.json  (agents that use a model)
        screens/NNNN.png            screenshots of a desktop trial (capped, PNG only)
        desktop/                    recording.webm, recording.json, windows.jsonl,
                                    session.log, collected.json (what was kept or dropped)
    trials/.tmp-<trial-id>/         a trial being moved in (never a finished trial)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

DB_NAME = "results.db"
TRIALS_DIR = "trials"
STAGING_PREFIX = ".tmp-"
GRADER_STDOUT = "grader.stdout.log"  # written in the grading work folder, kept in grader/
GRADER_STDERR = "grader.stderr.log"


@dataclass(frozen=True)
class TrialPaths:
    root: Path

    @cached_property
    def record(self) -> Path:
        return self.root / "trial.json"

    @cached_property
    def output(self) -> Path:
        return self.root / "output"

    @cached_property
    def agent(self) -> Path:
        return self.root / "agent"

    @cached_property
    def agent_stdout(self) -> Path:
        return self.agent / "agent.stdout.log"

    @cached_property
    def agent_stderr(self) -> Path:
        return self.agent / "agent.stderr.log"

    @cached_property
    def exec_log(self) -> Path:
        return self.agent / "exec.jsonl"

    @cached_property
    def inputs_after(self) -> Path:
        """The state of the agent's inputs/ after it ran, which grading (and regrading) sees."""
        return self.agent / "inputs_after.json"

    @cached_property
    def grader(self) -> Path:
        return self.root / "grader"

    @cached_property
    def grader_stdout(self) -> Path:
        return self.grader / GRADER_STDOUT

    @cached_property
    def grader_stderr(self) -> Path:
        return self.grader / GRADER_STDERR

    @cached_property
    def grades(self) -> Path:
        return self.root / "grades"

    @cached_property
    def gateway_log(self) -> Path:
        return self.root / "gateway.jsonl"

    @cached_property
    def trajectory(self) -> Path:
        return self.root / "trajectory.json"

    @cached_property
    def screens(self) -> Path:
        return self.root / "screens"

    @cached_property
    def desktop(self) -> Path:
        return self.root / "desktop"

    @cached_property
    def recording(self) -> Path:
        return self.desktop / DesktopFiles.RECORDING

    @cached_property
    def recording_meta(self) -> Path:
        return self.desktop / DesktopFiles.RECORDING_META

    @cached_property
    def windows_log(self) -> Path:
        return self.desktop / DesktopFiles.WINDOWS_LOG

    @cached_property
    def desktop_log(self) -> Path:
        return self.desktop / DesktopFiles.SESSION_LOG

    @cached_property
    def desktop_collected(self) -> Path:
        return self.desktop / "collected.json"


# The names inside any trial folder, relative to it (TRIAL.exec_log: agent/exec.jsonl).
TRIAL = TrialPaths(Path())


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @cached_property
    def db(self) -> Path:
        return self.root / DB_NAME

    @cached_property
    def trials(self) -> Path:
        return self.root / TRIALS_DIR

    def trial(self, trial_id: str) -> TrialPaths:
        return TrialPaths(self.trials / trial_id)

    def staging(self, trial_id: str) -> Path:
        """Where a trial's folder is assembled before it is renamed into place."""
        return self.trials / f"{STAGING_PREFIX}{trial_id}"


class DesktopFiles:
    """Names in the desktop folder: the same inside the sandbox and in the trial folder."""

    SCREENS = "screens"  # NNNN.png, 4 digits from 0001
    RECORDING = "recording.webm"
    RECORDING_META = "recording.json"  # {"started_at": epoch, "fps": float}
    WINDOWS_LOG = "windows.jsonl"
    SESSION_LOG = "session.log"  # the desktop's own start-up and shutdown messages


class AgentSandbox:
    """Paths inside an agent's sandbox."""

    TASK = "/task"
    INSTRUCTION = "/task/instruction.md"
    INPUTS = "/task/inputs"
    OUTPUT = "/task/output"
    HOME = "/home/agent"
    GATEWAY_DIR = "/run/lastexam/gateway"  # the folder of the gateway's unix socket
    ORACLE = "/oracle/solution"  # the task's solution/, for the oracle only
    FILES = "/opt/lastexam"  # the harness files adapters run (agents/sandbox_files)
    TOOLCHAIN = "/opt/agent"  # an adapter's npm toolchain
    EXEC_DIR = "/run/lastexam/exec"  # the exec log's FIFO (read-only mount)
    USAGE_DIR = "/run/lastexam/usage"
    EXEC_SHIM = "/run/lastexam/usage/execlog.so"  # preloaded into every dynamic program
    USAGE_HOOK = "/run/lastexam/usage/hook"  # sitecustomize.py recording Python imports
    DESKTOP = "/run/lastexam/desktop"  # writable: screens/, recording, windows log (desktop trials)
    DESKTOP_FILES = "/opt/lastexam-desktop"  # the desktop's session files (desktop/sandbox_files)
    DESKTOP_TOOLCHAIN = "/opt/desktop"  # the computer-use toolchain (paths.desktop_toolchain_dir)
    COMPUTER_MCP = f"{DESKTOP_TOOLCHAIN}/bin/computer-mcp"  # its server's launcher (also in computer_tools.py)
    DISPLAY = ":0"


class GradingSandbox:
    """Paths inside a grading sandbox (the grader finds them in its GradeContext)."""

    ROOT = "/grade"  # holds the job's own mounts below (the warm worker's: a tmpfs per grading)
    CONTEXT = "/grade/context.json"
    OUTPUT = "/grade/output"  # the trial's output/, read-only
    TASK = "/grade/task"  # the task's hidden parts, read-only
    GRADER = "/grade/task/grader.py"  # what grading/harness.py runs
    REFERENCE = "/grade/task/reference"
    INPUTS = "/grade/task/inputs"
    SCRATCH = "/grade/scratch"  # writable, discarded
    RESULT_DIR = "/grade/result"
    RESULT = "/grade/result/result.json"
    LIB = "/opt/lastexam/lib"  # the grading library
