"""Which mind speaks for each agent: the offline mind or Claude.

    kinds = mind_kinds(names, configured={"Ember": "claude"}, flag=None, has_key=True)

Each agent's choice comes from its `mind:` in agents.yaml (agents not listed there,
such as generated ones, take "auto"). "auto" means Claude when an API key is set
and the offline mind otherwise, so a world with no key always lives; "local" is a
model behind an OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp), which needs
no Anthropic key; "seat" is an outside agent that fills the seat over MCP
(adapters/seats). `--mind offline` or `--mind claude` on the command line puts
everyone on that mind; `--mind auto` resolves every agent as "auto" except those
agents.yaml gives a local model or a seat, which keep it. Asking for Claude with no key is
refused before anything runs, naming who asked for it and how to fix it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

OFFLINE, CLAUDE, AUTO, LOCAL, REPLAY, SEAT = (
    "offline", "claude", "auto", "local", "replay", "seat")
MIND_CHOICES = (OFFLINE, CLAUDE, AUTO, REPLAY)
"""`--mind replay` (adapters/replay_mind.py): every agent does again what the stored
turns of the world it was forked from (or its own past) say it did; no model is asked."""


class MindChoiceError(ValueError):
    """A choice of minds that cannot be honoured; the message says what to change."""


def mind_kinds(
    names: Iterable[str],
    configured: Mapping[str, str],
    flag: str | None,
    has_key: bool,
) -> dict[str, str]:
    """Each agent's mind: "offline", "claude", "local", "seat" or "replay"."""
    if flag is not None and flag not in MIND_CHOICES:
        raise MindChoiceError(f"--mind must be one of {', '.join(MIND_CHOICES)}, not {flag!r}")
    if flag == CLAUDE and not has_key:
        raise MindChoiceError(_NO_KEY.format(who="--mind claude"))
    kinds: dict[str, str] = {}
    wanting: list[str] = []
    for name in names:
        own = configured.get(name, AUTO)
        choice = own if flag is None or (flag == AUTO and own in (LOCAL, SEAT)) else flag
        if choice == AUTO:
            choice = CLAUDE if has_key else OFFLINE
        elif choice == CLAUDE and not has_key:
            wanting.append(name)
        kinds[name] = choice
    if wanting:
        raise MindChoiceError(_NO_KEY.format(
            who=f"agents.yaml gives {', '.join(sorted(wanting))} `mind: claude`"))
    return kinds


_NO_KEY = ("{who}, but ANTHROPIC_API_KEY is not set. Set it, or run with --mind offline "
           "(or --mind auto: Claude only when a key is set).")
