"""The Claude models Hearth knows: their prices, how they think, and where they are in life.

One table, so the default prices in settings.yaml, the check before a run and the
options each request carries all agree. It is what Anthropic's documentation said
in November 2026 (the pricing page, each model's overview, the deprecations page);
before a run the Models API (`GET /v1/models`) has the last word on which ids an
account can use and when they retire, and this table only fills in where an
endpoint does not offer that list.

Models retire: from its retirement date on, every request naming the id fails with
404. A retired id is refused before a run and the table names what to use instead.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from core.spend import Price, Rates

ADAPTIVE, EXTENDED = "adaptive", "extended"
"""How a model thinks: 5.x models decide for themselves how much (adaptive thinking,
steered by `output_config.effort`); older ones think only when asked with a budget."""

EFFORTS = ("low", "medium", "high", "xhigh", "max")
"""Every effort level the Messages API names, least to most."""


@dataclass(frozen=True, slots=True)
class ModelFacts:
    id: str
    price: Price
    thinking: str = ADAPTIVE
    efforts: tuple[str, ...] = ()
    """Effort levels the model takes; empty: it takes no `effort` at all."""
    default_effort: str | None = None
    retires: dt.date | None = None
    """The day its id stops working (scheduled or past); None: not scheduled."""
    replacement: str | None = None
    """What to use instead, once it is deprecated or retired."""
    legacy: bool = False
    """Still served and not scheduled to retire, but no longer the current model of its line."""
    lightest: str | None = None
    """The documented `thinking.type` that thinks least before acting, for models that have
    one besides adaptive (Sonnet 5.5: between_tools; Haiku 5.5: disabled); it holds only up
    to effort high."""

    def retired_on(self, today: dt.date) -> bool:
        return self.retires is not None and today >= self.retires


def _price(i: float, o: float, read: float | None = None, write: float | None = None,
           hour: float | None = None) -> Price:
    """Anthropic's usual multiples of the input rate unless a model's page says otherwise:
    5-minute writes 1.25x, 1-hour writes 2x, reads 0.1x."""
    return Price(i, o, write if write is not None else i * 1.25,
                 read if read is not None else i / 10, hour if hour is not None else i * 2)


_ALL = EFFORTS
_UP_TO_MAX = ("low", "medium", "high", "max")

CATALOG: dict[str, ModelFacts] = {m.id: m for m in (
    ModelFacts("claude-fable-5-1", _price(10, 50, read=0.25), efforts=_ALL,
               default_effort="high"),
    ModelFacts("claude-opus-5-5", _price(4, 20, read=0.20, write=5, hour=8), efforts=_ALL,
               default_effort="medium"),
    ModelFacts("claude-sonnet-5-5", _price(2, 10, read=0.10), efforts=_ALL,
               default_effort="high", lightest="between_tools"),
    ModelFacts("claude-haiku-5-5",
               Price(0.10, 0.50, 0.125, 0.01, 0.20, long_above=100_000,
                     long=Rates(0.50, 2.50, 0.625, 0.05, 1.00)),
               efforts=_ALL, default_effort="medium", lightest="disabled"),
    ModelFacts("claude-opus-5", _price(5, 25), efforts=_ALL, default_effort="high",
               legacy=True, replacement="claude-opus-5-5"),
    ModelFacts("claude-sonnet-5", _price(2, 10, read=0.20), efforts=_ALL,
               default_effort="high", legacy=True, replacement="claude-sonnet-5-5"),
    ModelFacts("claude-haiku-4-5", _price(1, 5), thinking=EXTENDED,
               replacement="claude-haiku-5-5"),
    ModelFacts("claude-sonnet-4-6", _price(3, 15), efforts=_UP_TO_MAX, legacy=True,
               replacement="claude-sonnet-5-5"),
    ModelFacts("claude-opus-4-5", _price(5, 25), thinking=EXTENDED,
               efforts=("low", "medium", "high"), retires=dt.date(2027, 1, 22),
               replacement="claude-opus-5-5"),
    ModelFacts("claude-sonnet-4-5", _price(3, 15), thinking=EXTENDED,
               retires=dt.date(2026, 11, 30), replacement="claude-sonnet-5-5"),
    ModelFacts("claude-sonnet-4", _price(3, 15), thinking=EXTENDED,
               retires=dt.date(2026, 6, 15), replacement="claude-sonnet-5-5"),
    ModelFacts("claude-opus-4-1", _price(15, 75), thinking=EXTENDED,
               retires=dt.date(2026, 8, 5), replacement="claude-opus-5-5"),
)}

LINES = {"fable": "claude-fable-5-1", "opus": "claude-opus-5-5",
         "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}
"""The current model of each line: the replacement named for an id the table lacks."""


def undated(model: str) -> str:
    """A dated snapshot id's model (`claude-sonnet-4-5-20250929` is claude-sonnet-4-5)."""
    head, _, tail = model.rpartition("-")
    return head if head and tail.isdigit() and len(tail) == 8 else model


def facts(model: str) -> ModelFacts | None:
    """What the table knows of an id, a dated snapshot id (`claude-sonnet-4-5-20250929`)
    included; None for ids it does not know (a local endpoint's, a newer model's)."""
    return CATALOG.get(model) or CATALOG.get(undated(model))


def price_in(prices: Mapping[str, Price], model: str) -> Price | None:
    """A model's price in a table, a dated snapshot id priced as its model."""
    return prices.get(model) or prices.get(undated(model))


def replacement(model: str) -> str | None:
    """The current model to move to from `model`: the table's word, else the current
    model of the line its id names (sonnet, haiku, opus, fable)."""
    known = facts(model)
    if known is not None and known.replacement is not None:
        return known.replacement
    for line, current in LINES.items():
        if line in model and current != model:
            return current
    return None


def nearest(model: str, also: Iterable[str] = ()) -> str | None:
    """The current model (or one of `also`) whose id `model` is a slip of the keys from,
    if any is that close. Every id begins `claude-`, which alone makes two ids look
    alike to difflib's usual cutoff (0.6), so the cutoff here is higher: a letter or two
    wrong or missing, not another model."""
    close = difflib.get_close_matches(model, [*LINES.values(), *also], n=1, cutoff=0.8)
    return close[0] if close else None


def default_prices() -> dict[str, Price]:
    """Every model's price, for settings.yaml's defaults."""
    return {m.id: m.price for m in CATALOG.values()}
