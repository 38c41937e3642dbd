"""mini-swe-agent (`mini`), its non-interactive agent, through the gateway's Chat Completions
(LiteLLM's `openai/` provider). Its one tool is `bash`; it ends when the model runs
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, answers three times in a row without a tool call,
or reaches `step_limit`."""

from __future__ import annotations

import json

from lastexam.agents.base import AgentContext, AgentLaunch
from lastexam.agents.harness import GatewayAgent, count_arg, openai_env, write_home_file
from lastexam.agents.pypi import PypiToolchain
from lastexam.gateway.providers import ModelSpec
from lastexam.layout import AgentSandbox

TOOLCHAIN = PypiToolchain("mini-swe-agent", "mini-swe-agent", "2.4.6",
                          "minisweagent.run.mini:app", "mini")
CONFIG = ".config/mini-swe-agent/lastexam.yaml"
STEP_LIMIT = 250


class MiniSweAgent(GatewayAgent):
    name = "mini-swe-agent"
    description = f"mini-swe-agent {TOOLCHAIN.version} (mini, default agent, bash tool)"
    wire = "chat"
    toolchain = TOOLCHAIN
    default_model = "gpt-5"
    accepted_args = ("extra_args", "step_limit")

    def check_args(self, model: ModelSpec | None, args: dict[str, str]) -> None:
        super().check_args(model, args)
        count_arg(self.name, args, "step_limit", STEP_LIMIT)

    def launch(self, ctx: AgentContext) -> AgentLaunch:
        gw = self.gateway(ctx)
        # JSON is YAML: the settings merged over its own mini.yaml.
        config = {
            "agent": {"step_limit": count_arg(self.name, ctx.args, "step_limit", STEP_LIMIT),
                      "cost_limit": 0},  # the gateway holds the budget
            "environment": {"timeout": ctx.timeout_s},
            "model": {"model_name": f"openai/{self.client_model(ctx)}",
                      "model_kwargs": {"api_base": f"{gw.base_url}/v1", "drop_params": True},
                      "cost_tracking": "ignore_errors"},
        }
        write_home_file(ctx.home, CONFIG, json.dumps(config, indent=2))
        argv = TOOLCHAIN.command(
            "--agent-class", "default", "--environment-class", "local",
            "-c", "mini.yaml", "-c", f"{AgentSandbox.HOME}/{CONFIG}",
            "--output", f"{AgentSandbox.HOME}/.config/mini-swe-agent/trajectory.json",
            "-t", ctx.instruction, *self.extra_args(ctx))
        env = {**openai_env(gw), "MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors",
               "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "3"}
        return AgentLaunch(argv=self.bridged(ctx, argv), env=env, mounts=self.mounts())
