"""What Claude needs before a run's first tick: the clients, the check, the mind, the narrator.

    parts = await claude_parts(speakers, settings, api_key, today=..., trace=..., meter=...)
    parts.warnings       # one line per deprecated model (print each once)
    parts.mind, parts.narrator, parts.clients

The check (adapters/claude_models.py) runs first, so a key the API refuses or a
model it no longer serves stops the program before anything moves. The agents'
mind and the narrator get clients of their own: a slow or failing narrator then
never shares a connection pool, a timeout or a retry budget with the turns.
Every client has the SDK's retries off; adapters/claude_calls.py retries instead,
within a deadline.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic

from adapters.capacity import Capacities
from adapters.claude_calls import CallPolicy
from adapters.claude_mind import ClaudeMind, ClaudeProfile
from adapters.claude_mind.levers import levers_of
from adapters.claude_mind.narrator import ModelNarrator
from adapters.claude_models import Lineup, check_models
from adapters.client_shards import clients_needed
from adapters.sdk_http import sdk_http_client
from config.claude import ClaudeSettings
from services.budget import SpendMeter

NARRATOR_EFFORT = "low"
"""A retelling needs little thought; the least effort a model takes, where it takes one."""
NARRATOR_MAX_TOKENS = 2_000

# Hearth says once, before the run, which models are deprecated and until when; the
# SDK would say it again on every request.
warnings.filterwarnings("ignore", message=r"The model '.*' is deprecated",
                        category=DeprecationWarning)


@dataclass(frozen=True, slots=True)
class Speaker:
    """An agent Claude speaks for."""

    name: str
    model: str
    personality: str
    effort: str | None = None


@dataclass
class ClaudeParts:
    mind: ClaudeMind
    narrator: ModelNarrator | None
    lineup: Lineup
    warnings: list[str] = field(default_factory=list)
    clients: list[anthropic.AsyncAnthropic] = field(default_factory=list)


def new_client(api_key: str, timeout: float, *,
               base_url: str | None = None) -> anthropic.AsyncAnthropic:
    """A client whose retries are Hearth's (adapters/claude_calls.py), not the SDK's.

    Agents are spread over a client for every few of them (adapters/client_shards.py),
    so every client Hearth makes shares one TLS context: each would otherwise read the
    system's certificates again (some 20 ms and their memory, per client). It is the
    context the SDK's HTTP client makes by default (`SSL_CERT_FILE` and all), and the
    client is the SDK's own `DefaultAsyncHttpxClient`, transports and defaults
    (adapters/sdk_http.py). `base_url`:
    another endpoint than the SDK's (None: the SDK's, `ANTHROPIC_BASE_URL` included)."""
    http = sdk_http_client(anthropic.DefaultAsyncHttpxClient)
    return anthropic.AsyncAnthropic(api_key=api_key, max_retries=0, timeout=timeout,
                                    http_client=http, base_url=base_url)


async def claude_parts(
    speakers: Sequence[Speaker],
    settings: ClaudeSettings,
    api_key: str,
    *,
    today: dt.date,
    meter: SpendMeter | None = None,
    on_budget: Callable[[str], None] | None = None,
    trace: Callable[[str, Mapping[str, Any]], None] | None = None,
    make_client: Callable[[str, float], anthropic.AsyncAnthropic] | None = None,
    capacities: Capacities | None = None,
) -> ClaudeParts:
    """Check the key and models, then build the mind (and the narrator, if one is set).
    Raises adapters.claude_models.KeyRefused or ModelRefused with one line.
    `make_client(api_key, timeout)` builds each client (default `new_client`; a bench
    or test hands in one over a stand-in). `capacities` is the room at each endpoint
    and model, shared by the mind and the narrator (None: no pacing at all)."""
    make_client = make_client or new_client
    client = make_client(api_key, settings.timeout_seconds)
    narrator_model = settings.narrator_model
    uses: dict[str, list[str]] = {}
    efforts: dict[str, dict[str, str]] = {}
    for s in speakers:
        uses.setdefault(s.model, []).append(s.name)
        effort = s.effort or settings.effort
        if effort is not None and s.effort is not None:
            efforts.setdefault(s.model, {})[s.name] = effort
    if narrator_model:
        uses.setdefault(narrator_model, []).append("the narrator")
    try:
        lineup = await check_models(client, uses, today, efforts)
    except BaseException:
        await client.close()
        raise
    more = [make_client(api_key, settings.timeout_seconds)  # adapters/client_shards.py
            for _ in range(1, clients_needed(len(speakers)))]
    levers = levers_of(settings, [s.model for s in speakers] + [narrator_model or ""])
    mind = ClaudeMind(
        client,
        {s.name: ClaudeProfile(s.model, s.personality, s.effort or settings.effort)
         for s in speakers},
        max_tokens=settings.max_tokens, trace=trace,
        compact_above_chars=settings.compact_above_chars,
        keep_recent_chars=settings.keep_recent_chars,
        summary_max_chars=settings.summary_max_chars,
        meter=meter, on_budget=on_budget,
        policy=CallPolicy(settings.max_retries, settings.timeout_seconds,
                          settings.retry_after_max_seconds),
        turn_deadline=settings.turn_deadline_seconds,
        lineup=lineup, capacities=capacities, more_clients=more,
        levers=levers)
    parts = ClaudeParts(mind, None, lineup, list(lineup.warnings), [client, *more])
    if narrator_model:
        told = make_client(api_key, settings.narrator_timeout_seconds)
        parts.clients.append(told)
        parts.narrator = ModelNarrator(
            told, narrator_model, speakers=[s.name for s in speakers], meter=meter,
            options={**lineup.options_for(narrator_model, NARRATOR_EFFORT, NARRATOR_MAX_TOKENS),
                     # a retelling needs no thought up front: the lightest the model has
                     **({"thinking": light} if (light := levers.thinking_for(
                         narrator_model, NARRATOR_EFFORT)) else {})},
            policy=CallPolicy(1, settings.narrator_timeout_seconds,
                              min(5.0, settings.retry_after_max_seconds)),
            capacities=capacities)
    return parts
