"""Simon Willison's `llm` CLI (`llm prompt` with a tool chain: `--functions` gives it a bash
tool, approvals are off by default), through the gateway's Chat Completions as an extra
OpenAI-compatible model."""

from __future__ import annotations

import json

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import FILES_SRC, GatewayAgent, count_arg, openai_env, write_home_file
from lastexam.agents.pypi import PypiToolchain
from lastexam.gateway.providers import ModelSpec
from lastexam.layout import AgentSandbox

TOOLCHAIN = PypiToolchain("llm", "llm", "0.36", "llm.cli:cli", "llm")
CONFIG_DIR = ".config/io.datasette.llm"
MODEL_ALIAS = "lastexam"
TOOLS_FILE = "llm_tools.py"  # in sandbox_files/: the bash tool
assert (FILES_SRC / TOOLS_FILE).is_file()
CHAIN_LIMIT = 250


class LlmAgent(GatewayAgent):
    name = "llm"
    description = f"llm {TOOLCHAIN.version} (llm prompt --functions: a bash tool, chained)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"
    accepted_args = ("extra_args", "chain_limit")

    def check_args(self, model: ModelSpec | None, args: dict[str, str]) -> None:
        super().check_args(model, args)
        count_arg(self.name, args, "chain_limit", CHAIN_LIMIT)

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        # An extra OpenAI model whose key is `openai`'s: OPENAI_API_KEY. JSON is YAML.
        models = [{"model_id": MODEL_ALIAS, "model_name": self.client_model(ctx),
                   "api_base": f"{gw.base_url}/v1", "api_key_name": "openai",
                   "supports_tools": True, "can_stream": True}]
        write_home_file(ctx.home, f"{CONFIG_DIR}/extra-openai-models.yaml", json.dumps(models))
        argv = TOOLCHAIN.command(
            "prompt", "-m", MODEL_ALIAS, "--functions", f"{AgentSandbox.FILES}/{TOOLS_FILE}",
            "--chain-limit", str(count_arg(self.name, ctx.args, "chain_limit", CHAIN_LIMIT)), "--no-log",
            *self.extra_args(ctx), ctx.instruction)
        env = {**openai_env(gw), "LLM_USER_PATH": f"{AgentSandbox.HOME}/{CONFIG_DIR}"}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())
