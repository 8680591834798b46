"""Claude model ids in the config that no model answers to, refused when it is read.

A misspelt `model_id` (claude-sonet-5-5) used to pass `--init` and `--run` whenever no
key was set, the offline mind speaking instead, and to be stored in the world. Now it
is a config mistake, key or no key, named with the current id it is nearest to.

Which ids are known: those in Hearth's table (core/model_catalog.py, a dated snapshot
of one included) and those settings.yaml prices under `claude.prices`. That is every
id Claude could ever speak through, as a model with no price is refused before a run
anyway (spend must be counted): so an endpoint's own model (a proxy's behind
`ANTHROPIC_BASE_URL`, or one newer than the table) is used by pricing it, and the
Models API, asked before every run with a key (adapters/claude_models.py), still has
the last word on whether the key may use it, and on retired models. An agent with
`mind: local` is not checked: its model_id is its endpoint's own name. Every other
agent is, `mind: offline` included, since `--mind claude` or `--mind auto` can hand
it to Claude.
"""

from __future__ import annotations

from config.agents import AgentsConfig
from config.settings import Settings
from core.model_catalog import LINES, nearest, price_in, replacement

Found = tuple[str, tuple[str | int, ...], str]
"""A file's name, the path of the key in it, and the problem."""


def unknown_models(settings: Settings, agents: AgentsConfig) -> list[Found]:
    """Every Claude model id that is neither in the table nor priced, in file order."""
    prices = settings.claude.price_table()
    used: list[tuple[str, tuple[str | int, ...], str | None]] = [
        ("agents.yaml", ("agents", i, "model_id"), agent.model_id)
        for i, agent in enumerate(agents.agents) if agent.mind != "local"]
    used += [("settings.yaml", ("claude", "narrator_model"), settings.claude.narrator_model),
             ("settings.yaml", ("gardener", "model"), settings.gardener.model)]
    return [(name, loc, _problem(model, settings.claude.prices))
            for name, loc, model in used
            if model is not None and price_in(prices, model) is None]


def _problem(model: str, priced: dict) -> str:
    said = f"{model} is not a Claude model Hearth knows"
    if close := nearest(model, priced):
        return f"{said}; did you mean {close}?"
    own = "(an endpoint's own model: price it under claude.prices in settings.yaml)"
    if line := replacement(model):
        return f"{said}; use {line} {own}"
    return f"{said}; use one of {', '.join(LINES.values())} {own}"
