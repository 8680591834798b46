"""Spend as it happens, against the keeper's hard limits.

    meter = SpendMeter(prices, Budgets(per_run=5.0), ticks_per_day=24)
    meter.add("Ember", tick, "claude-sonnet-4-5", usage)   # after every request
    meter.reached()   # None, or which budget is reached and how much was spent

The meter counts this run's spend, each tick's, and each agent's per in-world day
(seeded with what earlier runs spent on the current day, so a day's limit holds
across restarts). A mind asks `reached()` before every request and sends nothing
once a budget is reached; the run then stops after the turns in flight.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from core.clock import day_of
from core.model_catalog import price_in
from core.spend import Price, Usage, cost


def requests_in_record(record_json: str) -> list[tuple[str, Usage, bool]]:
    """(model, usage, in a batch) of every request a stored turn record holds: its Claude
    mind's and its model narrator's. A record without any, or one unreadable, gives []."""
    try:
        record = json.loads(record_json)
    except ValueError:
        return []
    found: list[tuple[str, Usage, bool]] = []
    if not isinstance(record, Mapping):
        return found
    for part in (record.get("mind"), record.get("narration")):
        if not isinstance(part, Mapping):
            continue
        model, requests = part.get("model"), part.get("requests")
        if not isinstance(model, str) or not isinstance(requests, list):
            continue
        found += [(model, Usage.of(r["usage"]), r.get("batch") is True) for r in requests
                  if isinstance(r, Mapping) and isinstance(r.get("usage"), Mapping)]
    return found


class UnpricedModel(ValueError):
    """A model with no price: spend could not be counted, so it is not used."""


@dataclass(frozen=True)
class Budgets:
    """US dollars; None means no limit."""

    per_run: float | None = None
    per_agent_per_day: float | None = None
    per_tick: float | None = None


class SpendMeter:
    def __init__(
        self,
        prices: Mapping[str, Price],
        budgets: Budgets,
        ticks_per_day: int,
        earlier: Iterable[tuple[str, int, str, Usage] | tuple[str, int, str, Usage, bool]] = (),
        now: int | None = None,
        start_hour: int = 0,
    ) -> None:
        """`earlier`: (agent, tick, model, usage[, in a batch]) of requests made before this
        run, which count towards each agent's day but not towards this run; `now`, the tick the run
        starts at: a day's budget already spent is reached from the start. Days are the
        world clock's (`start_hour` is the hour tick 0 falls on): they turn at midnight."""
        self.prices = dict(prices)
        self.budgets = budgets
        self.ticks_per_day = ticks_per_day
        self.start_hour = start_hour
        self.run = 0.0
        self.by_agent: dict[str, float] = {}
        """This run's spend per agent."""
        self.usage = Usage()
        """This run's tokens."""
        self._ticks: dict[int, float] = {}
        self._days: dict[tuple[str, int], float] = {}
        self._reached: str | None = None
        for agent, tick, model, usage, *batch in earlier:
            key = (agent, self.day(tick))
            price = price_in(self.prices, model)
            if price is not None:  # a model priced no longer is not held against anyone
                self._days[key] = self._days.get(key, 0.0) + cost(usage, price, any(batch))
        limit = budgets.per_agent_per_day
        if now is not None and limit is not None:
            for (agent, day), spent in sorted(self._days.items()):
                if day == self.day(now) and spent >= limit:
                    self._reached = (f"{agent}'s budget of {_usd(limit)} for day {day + 1} is "
                                     f"reached: {_usd(spent)} spent that day")
                    break

    def day(self, tick: int) -> int:
        """The world clock's day (from 0) a tick falls in."""
        return day_of(tick, self.ticks_per_day, self.start_hour)

    def check_models(self, models: Iterable[str]) -> None:
        """Refuse, before anything runs, models the price table does not know."""
        missing = sorted({m for m in models if price_in(self.prices, m) is None})
        if missing:
            raise UnpricedModel(
                f"no price for {', '.join(missing)} in settings.yaml (claude.prices); "
                "add one so spend can be counted and budgets kept")

    def cost(self, model: str, usage: Usage, batch: bool = False) -> float:
        price = price_in(self.prices, model)
        if price is None:
            raise UnpricedModel(f"no price for {model} in settings.yaml (claude.prices)")
        return cost(usage, price, batch)

    def add(self, agent: str, tick: int, model: str, usage: Usage, batch: bool = False
            ) -> float:
        """Count one request (`batch`: answered in a Message Batch); gives its cost."""
        spent = self.cost(model, usage, batch)
        self.run += spent
        self.usage = self.usage + usage
        self.by_agent[agent] = self.by_agent.get(agent, 0.0) + spent
        self._ticks[tick] = self._ticks.get(tick, 0.0) + spent
        key = (agent, self.day(tick))
        self._days[key] = self._days.get(key, 0.0) + spent
        if self._reached is None:
            self._reached = self._first_reached(agent, tick)
        return spent

    def reached(self) -> str | None:
        """The first budget reached this run, in words with the spend; None while none is."""
        return self._reached

    def _first_reached(self, agent: str, tick: int) -> str | None:
        b = self.budgets
        if b.per_run is not None and self.run >= b.per_run:
            return f"the per-run budget of {_usd(b.per_run)} is reached: {_usd(self.run)} spent"
        if b.per_tick is not None and self._ticks[tick] >= b.per_tick:
            return (f"the per-tick budget of {_usd(b.per_tick)} is reached at tick {tick}: "
                    f"{_usd(self._ticks[tick])} spent in it")
        day = self.day(tick)
        spent = self._days[(agent, day)]
        if b.per_agent_per_day is not None and spent >= b.per_agent_per_day:
            return (f"{agent}'s budget of {_usd(b.per_agent_per_day)} for day {day + 1} is "
                    f"reached: {_usd(spent)} spent that day")
        return None


def _usd(amount: float) -> str:
    """Dollars as people read them: cents, or four places below a cent."""
    return f"${amount:,.2f}" if amount >= 0.01 else f"${amount:.4f}"


def spend_rates(spent: float, seconds: float, agent_ticks: int,
                ticks_per_day: int) -> tuple[float | None, float | None]:
    """(dollars an hour of running, dollars an agent-day): an agent-day is one agent
    living one in-world day, `ticks_per_day` of its turns. None where too little has run
    to say (under a second; no turn lived)."""
    per_hour = spent * 3600.0 / seconds if seconds >= 1.0 else None
    per_day = spent * ticks_per_day / agent_ticks if agent_ticks > 0 else None
    return per_hour, per_day


def spend_rate(spent: float, seconds: float, agent_ticks: int, ticks_per_day: int) -> str:
    """Spend so far and its rate, in words (`spend_rates`)."""
    per_hour, per_day = spend_rates(spent, seconds, agent_ticks, ticks_per_day)
    parts = [f"{_usd(spent)} spent"]
    if per_hour is not None:
        parts.append(f"{_usd(per_hour)} an hour of running")
    if per_day is not None:
        parts.append(f"{_usd(per_day)} an agent-day")
    return ", ".join(parts)
