"""settings.yaml's `claude:` section: how Claude minds call the API, what it costs, the limits.

The default prices come from core/model_catalog.py, the one table of the models
Hearth knows; a price given in the file replaces the default for that model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from config.base import StrictInt, _Model
from core.model_catalog import default_prices
from core.spend import Price, Rates

EffortName = Literal["low", "medium", "high", "xhigh", "max"]
"""How hard a 5.x model thinks (`output_config.effort`); see core/model_catalog.py."""


class LongPromptPrice(_Model):
    """Rates for a whole request once its prompt (cache reads and writes included) is
    above `above_tokens`: Claude Haiku 5.5 is priced this way."""

    above_tokens: StrictInt = Field(ge=1)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    cache_write_1h: float | None = Field(None, ge=0)


class ModelPrice(_Model):
    """US dollars per million tokens, as Anthropic publishes them."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    """5-minute cache writes."""
    cache_read: float = Field(ge=0)
    cache_write_1h: float | None = Field(None, ge=0)
    """1-hour cache writes; left out: twice the input rate (Anthropic's usual multiple)."""
    long_prompt: LongPromptPrice | None = None

    def to_core(self) -> Price:
        long = self.long_prompt
        return Price(
            self.input, self.output, self.cache_write, self.cache_read, self.cache_write_1h,
            long.above_tokens if long else None,
            Rates(long.input, long.output, long.cache_write, long.cache_read,
                  long.cache_write_1h if long.cache_write_1h is not None else long.input * 2)
            if long else None)


class BudgetSettings(_Model):
    """Hard limits on spend, in US dollars (null: no limit). Reaching one stops the run."""

    per_run: float | None = Field(2.0, gt=0)
    """Shipped on (settings.yaml says why): a first run with a key costs at most this."""
    per_agent_per_day: float | None = Field(1.0, gt=0)
    """What one agent may cost in one in-world day (midnight to midnight on the world's
    clock), over however many runs."""
    per_tick: float | None = Field(None, gt=0)


class ClaudeSettings(_Model):
    """How Claude minds call the API (issues 6 and 24)."""

    max_tokens: StrictInt = Field(16_000, ge=16, le=64_000)
    """The most a reply may hold in one request, thinking included (a turn may make
    several requests). Only what is written is paid for, so room costs nothing."""
    effort: EffortName | None = "medium"
    """How hard the agents' models think, for models that take an effort; an agent's
    own `effort:` in agents.yaml wins. null: each model's own default."""
    follow_up_effort: EffortName | None = "low"
    """The effort of a request that answers tool results within a turn; null: the same as
    the turn's first request."""
    thinking: Literal["light", "adaptive"] = "light"
    """light: each model's lightest documented thinking (Sonnet 5.5 thinks only between
    tool calls, Haiku 5.5 not at all; others adaptive); adaptive: every model's default."""
    results_next_turn: bool = True
    """A turn whose calls all succeeded and asked to learn nothing ends there; their
    results open the agent's next turn (saving a request that would only hear them)."""
    hour_cache_after_seconds: float | None = Field(240.0, gt=0)
    """An agent whose next turn is expected further off than this (the world's seconds a
    tick, times the night's ticks if it may sleep) writes the prompt cache for an hour
    (a 5-minute entry would be gone); null: always 5 minutes."""
    batch_poll_seconds: float = Field(30.0, gt=0, le=3600)
    """`--run --economy`: how often a pending Message Batch is asked whether it ended."""
    max_retries: StrictInt = Field(4, ge=0, le=20)
    """Retries of one request after 529, 5xx, a timeout or a dropped connection (a 429
    is waited out at the endpoint's room instead: adapters/capacity.py)."""
    timeout_seconds: float = Field(120.0, gt=0, le=3600)
    """How long one request may take before it counts as timed out (then retried)."""
    retry_after_max_seconds: float = Field(30.0, ge=0, le=3600)
    """The longest `retry-after` a turn waits out after a failure other than a rate
    limit; an API asking for a longer wait ends the turn instead (the agent acts again
    next tick). A 429's wait is the rate limit's: the turn waits for room."""
    turn_deadline_seconds: float = Field(300.0, gt=0, le=86_400)
    """How long one agent's turn may spend waiting on the API, retries included (time
    waiting for room under a rate limit is not counted)."""
    narrator_timeout_seconds: float = Field(10.0, gt=0, le=600)
    """The narrator's own time limit per request (it retries once, then the template
    stands): a retelling is never worth holding the world for."""
    compact_above_chars: StrictInt = Field(48_000, ge=2_000)
    """When an agent's history passes this size (JSON characters, about 4 to a token),
    its oldest turns are folded into a summary before the next turn."""
    keep_recent_chars: StrictInt = Field(8_000, ge=1_000)
    """About how much of the newest history stays word for word after compaction."""
    summary_max_chars: StrictInt = Field(6_000, ge=500)
    """The longest the summary of older turns may grow (its oldest lines go first)."""
    narrator_model: str | None = Field("claude-haiku-5-5", min_length=1)
    """The small model that retells actions and sights for agents Claude speaks for;
    null keeps the templates (free, and what offline agents always get)."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """Prices that replace the built-in table's (core/model_catalog.py) for these model
    ids, or price ids it lacks; a model Claude speaks through must have a price either
    way (spend is always known)."""
    budgets: BudgetSettings = Field(default_factory=BudgetSettings)

    @model_validator(mode="after")
    def _keep_less_than_limit(self) -> ClaudeSettings:
        if self.keep_recent_chars + self.summary_max_chars >= self.compact_above_chars:
            raise ValueError(
                "keep_recent_chars + summary_max_chars must be below compact_above_chars "
                f"({self.keep_recent_chars} + {self.summary_max_chars} >= "
                f"{self.compact_above_chars}), or every turn would compact again")
        return self

    def price_table(self) -> dict[str, Price]:
        """The built-in prices with the file's on top, as core values."""
        table = dict(default_prices())
        table.update({model: p.to_core() for model, p in self.prices.items()})
        return table
