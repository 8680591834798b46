"""Before a run: does the key work, and may it use each model the world is set to use?

    lineup = await check_models(client, {"claude-sonnet-5-5": ["Ember", "Sage"]}, today)
    lineup.warnings        # a line per deprecated model, with its end of life
    lineup.options_for("claude-sonnet-5-5", "medium")   # what each request adds

The Models API (`GET /v1/models`, free) answers both questions at once: a wrong
key is refused there (401) before any tick, and each model it lists carries its
lifecycle (active, deprecated, retired), its retirement date and what it can do
(which effort levels it takes, its largest `max_tokens`). An endpoint that does
not offer the list (a proxy, an older compatible server) is not held against the
user: the built-in table (core/model_catalog.py) judges the ids instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic

from adapters.claude_calls import describe
from core.model_catalog import EFFORTS, facts, replacement


class ModelRefused(Exception):
    """A model (or an effort) that cannot be used: a setting to change (exit 2)."""


class KeyRefused(Exception):
    """The API refused the key itself: nothing can run until it is fixed (exit 1)."""


@dataclass(frozen=True, slots=True)
class Abilities:
    efforts: tuple[str, ...] = ()
    """Effort levels the model takes; empty: send none."""
    max_tokens: int | None = None
    """The largest `max_tokens` it takes, when known."""


@dataclass
class Lineup:
    abilities: dict[str, Abilities] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    listed: bool = False
    """Whether the endpoint listed its models (else the built-in table judged)."""

    def options_for(self, model: str, effort: str | None, max_tokens: int) -> dict[str, Any]:
        """What a request to `model` carries besides the conversation: `max_tokens`
        (never above the model's own limit) and the effort, for models that take one."""
        known = self.abilities.get(model) or abilities_from_table(model)
        options: dict[str, Any] = {"max_tokens": min(max_tokens, known.max_tokens or max_tokens)}
        level = nearest_effort(effort, known.efforts)
        if level is not None:
            options["output_config"] = {"effort": level}
        return options


def nearest_effort(effort: str | None, takes: tuple[str, ...]) -> str | None:
    """The effort to send: `effort` if the model takes it, else the highest level it takes
    below it (settings.yaml's one effort for all models meets models with fewer levels),
    else its lowest; None for no effort asked or a model that takes none."""
    if effort is None or not takes or effort not in EFFORTS:
        return None
    if effort in takes:
        return effort
    rank = EFFORTS.index(effort)
    below = [level for level in takes if level in EFFORTS and EFFORTS.index(level) < rank]
    return below[-1] if below else takes[0]


def abilities_from_table(model: str) -> Abilities:
    known = facts(model)
    return Abilities(known.efforts) if known is not None else Abilities()


def _abilities(info: Any) -> Abilities:
    """From a listed model's `capabilities` (absent on some endpoints: then the table)."""
    caps = getattr(info, "capabilities", None)
    effort = getattr(caps, "effort", None)
    limit = getattr(info, "max_tokens", None)
    limit = limit if isinstance(limit, int) and limit > 0 else None
    if effort is None:
        return Abilities(abilities_from_table(info.id).efforts, limit)
    if not getattr(effort, "supported", False):
        return Abilities((), limit)
    levels = tuple(level for level in ("low", "medium", "high", "xhigh", "max")
                   if getattr(getattr(effort, level, None), "supported", False))
    return Abilities(levels, limit)


async def _listed(client: anthropic.AsyncAnthropic, lineup: Lineup) -> dict[str, Any]:
    try:
        return {m.id: m async for m in client.models.list(limit=1000)}
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        raise KeyRefused(_key_line(exc)) from None
    except anthropic.NotFoundError:
        return {}  # no models list here: the table judges
    except anthropic.APIError as exc:
        lineup.warnings.append(f"could not list the API's models ({describe(exc)}); "
                               "going on without checking them")
        return {}


def _key_line(exc: anthropic.APIStatusError) -> str:
    if exc.status_code == 401:
        return ("the API refused the key (401 authentication_error): set ANTHROPIC_API_KEY "
                "to a valid key, or run with --mind offline")
    return (f"the key may not use the API ({describe(exc)}); check its organisation and "
            "workspace, or run with --mind offline")


def _instead(model: str) -> str:
    better = replacement(model)
    return f"use {better} instead" if better else "use a current model (see the Models API)"


async def check_models(
    client: anthropic.AsyncAnthropic,
    uses: Mapping[str, Sequence[str]],
    today: dt.date,
    efforts: Mapping[str, Mapping[str, str]] | None = None,
) -> Lineup:
    """Judge every model in `uses` (model id -> who uses it); `efforts` (model id ->
    {who: effort asked}) are checked against what each model takes. Raises KeyRefused
    or ModelRefused with one line; gives the abilities and any warnings."""
    lineup = Lineup()
    listed = await _listed(client, lineup)
    lineup.listed = bool(listed)
    for model, who in uses.items():
        users = ", ".join(who)
        info = listed.get(model)
        if listed and info is None:
            info = await _retrieve(client, model)
            if info is None:
                raise ModelRefused(f"{model} ({users}) is not a model this key can use: it is "
                                   f"retired, misspelt or not offered; {_instead(model)}")
        if info is not None:
            _judge_listed(model, users, info, lineup)
            lineup.abilities[model] = _abilities(info)
        else:
            _judge_by_table(model, users, today, lineup)
            lineup.abilities[model] = abilities_from_table(model)
        for name, effort in (efforts or {}).get(model, {}).items():
            takes = lineup.abilities[model].efforts
            if not takes:
                raise ModelRefused(f"{name}'s effort {effort!r} cannot be sent: {model} takes "
                                   "no effort setting (remove `effort:` from agents.yaml)")
            if effort not in takes:
                raise ModelRefused(f"{name}'s effort {effort!r} is not one {model} takes "
                                   f"({', '.join(takes)})")
    return lineup


async def _retrieve(client: anthropic.AsyncAnthropic, model: str) -> Any | None:
    """A model the list lacks may still be an alias the API resolves."""
    try:
        return await client.models.retrieve(model)
    except anthropic.NotFoundError:
        return None
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        raise KeyRefused(_key_line(exc)) from None


def _judge_listed(model: str, users: str, info: Any, lineup: Lineup) -> None:
    stage = getattr(info, "lifecycle", None) or "active"
    retires = getattr(info, "retires_at", None)
    if stage == "retired":
        raise ModelRefused(f"{model} ({users}) is retired: requests naming it fail; "
                           f"{_instead(model)} (config/agents.yaml, settings.yaml)")
    if stage == "deprecated" or retires is not None:
        when = f" on {_day(retires)}" if isinstance(retires, dt.date) else " soon"
        lineup.warnings.append(f"{model} ({users}) is deprecated and retires{when}; "
                               f"{_instead(model)}")
        return
    known = facts(model)
    if known is not None and known.retires is not None:
        lineup.warnings.append(f"{model} ({users}) is deprecated and retires on "
                               f"{_day(known.retires)}; {_instead(model)}")


def _day(when: dt.date) -> str:
    """A date as people write it: November 30, 2026."""
    return f"{when:%B} {when.day}, {when.year}"


def _judge_by_table(model: str, users: str, today: dt.date, lineup: Lineup) -> None:
    known = facts(model)
    if known is None or known.retires is None:
        return  # an id the table does not know: the endpoint's own (a proxy's, a newer one)
    if known.retired_on(today):
        raise ModelRefused(f"{model} ({users}) retired on {_day(known.retires)}: requests "
                           f"naming it fail; {_instead(model)} (config/agents.yaml)")
    lineup.warnings.append(f"{model} ({users}) is deprecated and retires on "
                           f"{_day(known.retires)}; {_instead(model)}")
