"""Inspect's sandbox environment "lastexam": each sample of lastexam/suite in its task's
workspace, each command in a fresh bwrap sandbox of lastexam's provider (inspect_area.py)."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Literal, overload

from inspect_ai.util import ExecResult, OutputLimitExceededError, SandboxEnvironment, sandboxenv
from inspect_ai.util._sandbox.environment import (
    SandboxEnvironmentConfigType,
    SandboxUserUnsupportedError,
)

from lastexam.interop.inspect_area import MAX_READ_BYTES, SampleWorkspace, close_eval_area
from lastexam.store.models import GradeRecord

TASK_PATH = "task_path"  # the sample metadata key naming the task folder


@sandboxenv(name="lastexam")
class LastexamSandbox(SandboxEnvironment):
    def __init__(self, sample: SampleWorkspace) -> None:
        super().__init__()
        self.sample = sample

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        if TASK_PATH not in metadata:
            raise ValueError(f"the lastexam sandbox needs the sample metadata {TASK_PATH!r}")
        sample = await asyncio.to_thread(SampleWorkspace.stage, Path(metadata[TASK_PATH]))
        return {"default": cls(sample)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        for env in environments.values():
            if isinstance(env, LastexamSandbox):
                await asyncio.to_thread(env.sample.remove)

    @classmethod
    async def task_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                           cleanup: bool) -> None:
        await asyncio.to_thread(close_eval_area)

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None,
                   timeout: int | None = None, timeout_retry: bool = True,
                   concurrency: bool = True) -> ExecResult[str]:
        if user not in (None, "agent"):
            raise SandboxUserUnsupportedError(f"the lastexam sandbox runs as 'agent' only, not {user!r}")
        stdin = input.encode() if isinstance(input, str) else input
        ran = await asyncio.to_thread(self.sample.run, cmd, stdin=stdin, cwd=cwd, env=env,
                                      timeout=timeout)
        if ran.timed_out:
            raise TimeoutError(f"command ran past {timeout} s: {shlex.join(cmd)[:200]}")
        code = ran.code if ran.code is not None else 1
        return ExecResult(success=code == 0, returncode=code,
                          stdout=ran.stdout.decode(errors="replace"),
                          stderr=ran.stderr.decode(errors="replace"))

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode() if isinstance(contents, str) else contents
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        ran = await asyncio.to_thread(self.sample.run, ["/bin/sh", "-c", script, "sh", file], stdin=data)
        if ran.code != 0:
            _raise(file, ran.stderr)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        ran = await asyncio.to_thread(self.sample.run, ["/bin/cat", "--", file],
                                      stdout_cap=MAX_READ_BYTES)
        if ran.code != 0:
            _raise(file, ran.stderr)
        if ran.truncated:
            raise OutputLimitExceededError(limit_str=f"{MAX_READ_BYTES} bytes",
                                           truncated_output=None)
        return ran.stdout.decode() if text else ran.stdout

    async def grade(self) -> GradeRecord:
        return await asyncio.to_thread(self.sample.grade)


def _raise(file: str, stderr: bytes) -> None:
    why = stderr.decode(errors="replace").strip()
    if "No such file" in why:
        raise FileNotFoundError(f"{file}: {why}")
    if "Is a directory" in why:
        raise IsADirectoryError(f"{file}: {why}")
    if "Permission denied" in why or "Read-only" in why:
        raise PermissionError(f"{file}: {why}")
    raise OSError(f"{file}: {why}")
