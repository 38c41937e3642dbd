"""The price table (prices.toml beside this file) and the one cost computation."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from lastexam.gateway.models import Usage

PRICES_FILE = Path(__file__).with_name("prices.toml")


class Price(BaseModel):
    """USD per million tokens; None: not published (a call that used that kind costs null)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)  # a 5-minute cache write
    cache_write_1h: float | None = Field(None, ge=0)  # a 1-hour cache write


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    models: dict[str, Price]

    def price(self, provider: str, model: str) -> Price | None:
        return self.models.get(f"{provider}:{model}") or self.models.get(model)

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        price = self.price(provider, model)
        if price is None:
            return None
        parts = [(usage.input_tokens, price.input), (usage.output_tokens, price.output),
                 (usage.cache_read_tokens, price.cache_read),
                 (usage.cache_write_tokens - usage.cache_write_1h_tokens, price.cache_write),
                 (usage.cache_write_1h_tokens, price.cache_write_1h)]
        total = 0.0
        for tokens, per_million in parts:
            if tokens:
                if per_million is None:
                    return None
                total += tokens * per_million / 1_000_000
        return round(total, 8)


@cache
def price_table(path: Path = PRICES_FILE) -> PriceTable:
    return PriceTable.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
