"""What language-model calls cost: token counts, prices, and the dollars they come to.

Pure values: the price table comes from settings.yaml (`claude.prices`), usage from
each API reply, and `cost` is the one place the two meet, so the figure a budget
stops on and the figure `--status` shows are the same arithmetic.

A request is priced on its own: some models (Claude Haiku 5.5) charge every token
of a request at a higher rate once its prompt passes a size, so usage summed over
many requests cannot be priced after the fact. Each request's cost is worked out
as it happens (and again from its stored usage by `--status`).
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
    """Prompt tokens read neither from nor into the cache."""
    output: int = 0
    """Everything the model wrote, its thinking included."""
    cache_write: int = 0
    """Prompt tokens written to the 5-minute cache."""
    cache_read: int = 0
    cache_write_1h: int = 0
    """Prompt tokens written to the 1-hour cache (priced apart from 5-minute writes)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.output + other.output,
                     self.cache_write + other.cache_write, self.cache_read + other.cache_read,
                     self.cache_write_1h + other.cache_write_1h)

    @property
    def prompt(self) -> int:
        """The whole prompt: uncached, written and read tokens together."""
        return self.input + self.cache_write + self.cache_write_1h + self.cache_read

    def to_json(self) -> dict[str, int]:
        """As stored in a turn's record (the 1-hour writes only when there were some)."""
        out = {"input": self.input, "output": self.output, "cache_write": self.cache_write,
               "cache_read": self.cache_read}
        if self.cache_write_1h:
            out["cache_write_1h"] = self.cache_write_1h
        return out

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Usage:
        """From a stored record's {"input", "output", "cache_write", "cache_read",
        "cache_write_1h"}; missing or unreadable counts are 0."""
        def count(key: str) -> int:
            value = values.get(key, 0)
            return value if isinstance(value, int) and value >= 0 else 0
        return cls(count("input"), count("output"), count("cache_write"), count("cache_read"),
                   count("cache_write_1h"))

    @classmethod
    def of_reply(cls, usage: Any) -> Usage:
        """From a Messages API reply's `usage` object (or None). The API's
        cache_creation_input_tokens counts both kinds of write; its `cache_creation`
        says how many of them were 1-hour writes."""
        def count(owner: Any, name: str) -> int:
            value = getattr(owner, name, None) if owner is not None else None
            return value if isinstance(value, int) and value > 0 else 0
        written = count(usage, "cache_creation_input_tokens")
        hour = min(count(getattr(usage, "cache_creation", None),
                         "ephemeral_1h_input_tokens"), written)
        return cls(count(usage, "input_tokens"), count(usage, "output_tokens"),
                   written - hour, count(usage, "cache_read_input_tokens"), hour)


@dataclass(frozen=True, slots=True)
class Rates:
    """US dollars per million tokens of each kind, for one prompt-size band."""

    input: float
    output: float
    cache_write: float
    """5-minute cache writes."""
    cache_read: float
    cache_write_1h: float


@dataclass(frozen=True, slots=True)
class Price:
    """What a model charges: its rates, and for models priced by prompt size, the
    rates that apply to a whole request once its prompt passes `long_above` tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    cache_write_1h: float | None = None
    """None: twice the input rate, as Anthropic prices every model it lists."""
    long_above: int | None = None
    long: Rates | None = None

    def __post_init__(self) -> None:
        if (self.long_above is None) != (self.long is None):
            raise ValueError("a long-prompt price needs both its threshold and its rates")
        if self.long_above is not None and self.long_above < 1:
            raise ValueError(f"long_above must be at least 1 token, not {self.long_above}")

    @property
    def base(self) -> Rates:
        hour = self.cache_write_1h if self.cache_write_1h is not None else self.input * 2
        return Rates(self.input, self.output, self.cache_write, self.cache_read, hour)

    def rates_for(self, usage: Usage) -> Rates:
        """The band a request falls in: the long-prompt rates when its prompt (cache
        reads and writes included) is above the threshold."""
        if self.long is not None and self.long_above is not None \
                and usage.prompt > self.long_above:
            return self.long
        return self.base


BATCH_SHARE = 0.5
"""What a request answered in a Message Batch pays of every token price (Anthropic's
pricing page: "50% discount on input and output", cache writes and reads included)."""


def cost(usage: Usage, price: Price, batch: bool = False) -> float:
    """The dollars one request's `usage` costs at `price` (`batch`: in a Message Batch)."""
    r = price.rates_for(usage)
    full = (usage.input * r.input + usage.output * r.output
            + usage.cache_write * r.cache_write + usage.cache_write_1h * r.cache_write_1h
            + usage.cache_read * r.cache_read) / PER
    return full * BATCH_SHARE if batch else full
