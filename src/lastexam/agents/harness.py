"""What the model-driven harnesses share: the gateway bridge, the read-only files they run
from, headless defaults and the readiness checks.

Inside the sandbox:
    /opt/lastexam/         this package's sandbox_files/ (bridge.sh, the reference agent)
    /opt/agent/            the harness's toolchain, from npm or PyPI (read-only)
    /run/lastexam/gateway/ the gateway's unix socket
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from lastexam.agents.base import Agent, AgentContext, GatewayAccess
from lastexam.agents.npm import NpmToolchain
from lastexam.agents.pypi import PypiToolchain
from lastexam.errors import LastexamError
from lastexam.gateway.wire.base import COMPUTER_SERVER
from lastexam.layout import AgentSandbox
from lastexam.paths import home_subdir, package_dir, published_copy
from lastexam.sandbox.base import Mount

FILES_SRC = package_dir() / "agents" / "sandbox_files"
BRIDGE = f"{AgentSandbox.FILES}/bridge.sh"
# The computer-use MCP server of desktop trials (stdio, no arguments, reads DISPLAY), given to
# each client under the name COMPUTER_SERVER through the client's own MCP configuration.
COMPUTER_MCP = AgentSandbox.COMPUTER_MCP
MCP_START_S = 60  # how long a client waits for it to start (a loaded machine is slow)
# Variables every headless harness gets: no update checks, no telemetry, no colours.
QUIET_ENV = {
    "NO_COLOR": "1",
    "TERM": "dumb",
    "CI": "1",
    "DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "npm_config_update_notifier": "false",
}


# What the Python harnesses (LiteLLM, the OpenAI SDK, Hugging Face libraries) are given besides:
# no fetch of LiteLLM's price list, no hub look-ups, no telemetry.
PYTHON_QUIET_ENV = {
    **QUIET_ENV,
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def openai_env(gw: GatewayAccess) -> dict[str, str]:
    """The variables by which the OpenAI SDK and LiteLLM reach an OpenAI-compatible server: the
    gateway's Chat Completions through the bridge, with the trial's token as the key."""
    base = f"{gw.base_url}/v1"
    return {**PYTHON_QUIET_ENV, "OPENAI_BASE_URL": base, "OPENAI_API_BASE": base,
            "OPENAI_API_KEY": gw.token}


def sandbox_files() -> Path:
    """A world-readable copy of sandbox_files/ for the sandbox to mount."""
    return published_copy(FILES_SRC, home_subdir("agents") / "_lastexam")


class GatewayAgent(Agent):
    """A harness that works through the model gateway, from a toolchain it is installed in."""

    needs_model = True
    toolchain: NpmToolchain | PypiToolchain | None = None
    default_model: str = ""  # what the client names when the model is scripted
    accepted_args: tuple[str, ...] = ("extra_args",)

    def version(self) -> str:
        return self.toolchain.version if self.toolchain else super().version()

    def missing(self) -> list[str]:
        problems = list(self.toolchain.missing()) if self.toolchain else []
        if self.uses_bridge and not shutil.which("socat"):
            problems.append("socat is not installed: lastexam agents install " + self.name)
        return problems

    @property
    def uses_bridge(self) -> bool:
        return True

    def install(self, log=print, force: bool = False) -> None:
        if self.uses_bridge and not shutil.which("socat"):
            from lastexam.envs.manage import apt_install

            apt_install(["socat"], log)
        if self.toolchain is not None:
            self.toolchain.install(log, force=force)

    def gateway(self, ctx: AgentContext) -> GatewayAccess:
        if ctx.gateway is None:
            raise LastexamError(f"agent {self.name!r} runs only with the model gateway")
        return ctx.gateway

    def client_model(self, ctx: AgentContext) -> str:
        return self.gateway(ctx).model_id or self.default_model

    def extra_args(self, ctx: AgentContext) -> list[str]:
        return shlex.split(ctx.args.get("extra_args", ""))

    def bridged(self, ctx: AgentContext, argv: list[str]) -> list[str]:
        gw = self.gateway(ctx)
        return ["/bin/bash", BRIDGE, gw.socket, str(gw.tcp_port), "--", *argv]

    def mounts(self) -> list[Mount]:
        mounts = [Mount(sandbox_files(), AgentSandbox.FILES)]
        if self.toolchain is not None:
            mounts.append(Mount(self.toolchain.root, AgentSandbox.TOOLCHAIN))
        return mounts

    def executable(self) -> str:
        assert isinstance(self.toolchain, NpmToolchain)
        return f"{AgentSandbox.TOOLCHAIN}/node_modules/{self.toolchain.bin}"


def count_arg(agent: str, args: dict[str, str], name: str, default: int) -> int:
    """A positive whole number given as --agent-arg NAME=N (default when not given)."""
    text = args.get(name)
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise LastexamError(f"agent {agent!r}: --agent-arg {name}={text!r} must be a whole number >= 1")
    return int(text)


def write_home_file(home: Path, rel: str, text: str) -> Path:
    """A config file in the sandbox's HOME, written before the sandbox starts."""
    path = home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def computer_server() -> dict[str, dict[str, object]]:
    """The computer-use server in the `mcpServers` shape Claude Code and Gemini CLI read (both
    hand the server their whole environment, DISPLAY included)."""
    return {COMPUTER_SERVER: {"command": COMPUTER_MCP, "args": []}}
