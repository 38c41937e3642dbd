"""Model providers the gateway forwards to, and how a `--model` value names one.

A model is `PROVIDER:MODEL` (`anthropic:claude-sonnet-4-5`, `openai:gpt-5`,
`openrouter:anthropic/claude-sonnet-4.5`, `local:qwen3-coder`, `google:gemini-2.5-pro`) or
`scripted:PATH` (a scripted upstream, for tests and demos). Keys and base URLs are read from
the host's environment when the gateway forwards a call; they never leave the gateway.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from lastexam.errors import LastexamError

SCRIPTED = "scripted"


@dataclass(frozen=True)
class Provider:
    name: str
    wires: tuple[str, ...]  # wire formats it speaks
    base_url: str  # default base URL; a "/v1" suffix stands for the API version of the path
    base_url_env: str  # host variable that overrides base_url
    key_env: str | None  # host variable holding the key (None: no key, e.g. a local server)
    bearer: bool = False  # send the key as "Authorization: Bearer" whatever the wire
    key_required: bool = True

    def url(self, path: str) -> str:
        base = os.environ.get(self.base_url_env) or self.base_url
        if not base:
            raise LastexamError(f"provider {self.name!r} needs {self.base_url_env} (its base URL)")
        base = base.rstrip("/")
        if base.endswith("/v1") and path.startswith("/v1/"):
            path = path[3:]
        return base + path

    def key(self) -> str | None:
        return os.environ.get(self.key_env) if self.key_env else None

    def missing(self) -> list[str]:
        problems = []
        if self.key_required and self.key_env and not os.environ.get(self.key_env):
            problems.append(f"{self.key_env} is not set (the {self.name} API key)")
        if not (os.environ.get(self.base_url_env) or self.base_url):
            problems.append(f"{self.base_url_env} is not set (the {self.name} base URL)")
        return problems


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("anthropic", ("anthropic",), "https://api.anthropic.com",
                 "LASTEXAM_ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
        Provider("openai", ("chat", "responses"), "https://api.openai.com/v1",
                 "OPENAI_BASE_URL", "OPENAI_API_KEY"),
        Provider("openrouter", ("chat", "responses", "anthropic"), "https://openrouter.ai/api/v1",
                 "OPENROUTER_BASE_URL", "OPENROUTER_API_KEY", bearer=True),
        Provider("local", ("chat", "responses", "anthropic"), "",
                 "LASTEXAM_LOCAL_BASE_URL", "LASTEXAM_LOCAL_API_KEY", bearer=True,
                 key_required=False),
        Provider("google", ("gemini",), "https://generativelanguage.googleapis.com",
                 "LASTEXAM_GEMINI_BASE_URL", "GEMINI_API_KEY"),
    )
}


@dataclass(frozen=True)
class ModelSpec:
    provider: str  # a PROVIDERS key, or "scripted"
    model: str  # the provider's model id, or the script's absolute path

    @property
    def text(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def scripted(self) -> bool:
        return self.provider == SCRIPTED

    def wires(self) -> tuple[str, ...]:
        if self.scripted:
            return ("anthropic", "chat", "responses", "gemini")
        return PROVIDERS[self.provider].wires


def parse_model(text: str) -> ModelSpec:
    provider, sep, model = text.partition(":")
    if not sep or not model:
        raise LastexamError(
            f"model {text!r} must be PROVIDER:MODEL or scripted:PATH "
            f"(providers: {', '.join(PROVIDERS)})"
        )
    if provider == SCRIPTED:
        return ModelSpec(SCRIPTED, str(Path(model).expanduser().resolve()))
    if provider not in PROVIDERS:
        raise LastexamError(
            f"unknown model provider {provider!r} in {text!r} (known: {', '.join(PROVIDERS)}, scripted)"
        )
    return ModelSpec(provider, model)
