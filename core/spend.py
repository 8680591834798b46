"""What language-model calls cost: token counts, prices, and the dollars they come to.

Pure values: the price table comes from settings.yaml (`claude.prices`), usage from
each API reply, and `cost` is the one place the two meet, so the figure a budget
stops on and the figure `--status` shows are the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PER = 1_000_000
"""Prices are in US dollars per million tokens, as Anthropic publishes them."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one request (or a sum of them) used, by kind."""

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.output + other.output,
                     self.cache_write + other.cache_write, self.cache_read + other.cache_read)

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Usage:
        """From a stored record's {"input", "output", "cache_write", "cache_read"}; missing
        or unreadable counts are 0."""
        def count(key: str) -> int:
            value = values.get(key, 0)
            return value if isinstance(value, int) and value >= 0 else 0
        return cls(count("input"), count("output"), count("cache_write"), count("cache_read"))


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def cost(usage: Usage, price: Price) -> float:
    """The dollars `usage` costs at `price`."""
    return (usage.input * price.input + usage.output * price.output
            + usage.cache_write * price.cache_write + usage.cache_read * price.cache_read) / PER
