"""What a Claude agent costs per in-world day on the 5.5 models, mind and narrator together.

    python -m bench claude      (these figures come after the prompt-cache ones)

The real engine runs a small world (48x40, 3 agents placed apart) for in-world days
of `time.ticks_per_day` ticks, every agent on the model measured: each current model
in turn (`MODELS`). The mind and the narrator are built as the program builds
them, by adapters/claude_setup.py `claude_parts(...)` with the shipped settings
(settings.yaml `claude`: `effort` medium, `max_tokens`, compaction, the narrator on
`narrator_model`, claude-haiku-5-5), today 2026-11-26, and a SpendMeter priced from
`claude.prices`; so the figure is what a user pays for one agent's day: its mind's
requests and the narrator's retellings for it. A sleeping agent takes no turns,
which would be part of an agent-day, but the stand-in's agent never chooses to
sleep: every agent takes a turn every tick, so the figure leans high for agents
who sleep through the night.

The Messages API is tests/messages_standin.py (StrictMessagesApi), reached by the
real SDK over httpx2.MockTransport: every request is checked against the API's
documented rules (a refused request fails this bench) and usage follows a simulated
prompt cache. The model's part is the stand-in's `simple_agent`: on a fresh
perception it thinks, says a line and walks or gathers; after the results it thinks
briefly and ends its turn. HOW LONG IT THINKS IS AN ASSUMPTION of the stand-in
(tests/standin/agent.py THINKING_TOKENS: at effort medium 150 / 600 / 2,000 tokens,
shortest / median / longest, log-normal), not a measured figure; real agents may
also take more actions a turn. The cache's clock moves TICK_SECONDS a tick.

- *$ per agent-day*: the meter's per-agent spend over one day, averaged over the
  agents; the second day shows the steady state (longer histories, cache warm).
  The reference is what the 4.5 models cost before (issue 24: about $0.40-0.57 per
  Sonnet 4.5 agent-day and $0.19-0.23 per Haiku 4.5 agent-day, measured on those
  models); the ratio is the figure over that range's two ends.
- *Stopped by max_tokens*: the share of replies cut by `max_tokens` (it should be
  sized so thinking never cuts a reply), and the longest reply against it.
- *Cache reads*: the share of prompt tokens (uncached + written + read) read from
  the cache, for the mind's requests and the narrator's.
- *Thinking*: its share of the dollars (it is billed as output), to show how much
  the figure rests on the assumed thinking lengths.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import Figure
from config import load_config
from core.spend import Usage
from engine import HearthEngine
from services.budget import Budgets, SpendMeter
from services.world_setup import create_world
from storage import Storage

MODELS = ("claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5", "claude-fable-5-1")
"""Every current model, so README can say what an agent-day costs on each."""
REFERENCE_45: Mapping[str, tuple[str, float, float]] = {
    "claude-sonnet-5-5": ("Sonnet 4.5", 0.40, 0.57),
    "claude-haiku-5-5": ("Haiku 4.5", 0.19, 0.23),
}
"""Dollars per agent-day measured on the 4.5 models before (issue 24)."""
TODAY = dt.date(2026, 11, 26)
SIZE = (48, 40)
AGENTS = 3
SEED = 11
DAYS = 4
BATCH_SECONDS = 60.0
"""`economy`: how long the stand-in takes to end a Message Batch (the docs: most within
the hour; an assumption well inside the prompt cache's 5 minutes, see DESIGN.md)."""
TICK_SECONDS = 30.0
"""Wall time a tick takes for the stand-in's prompt cache (entries live 5 minutes):
about one turn of two requests with thinking. An assumption."""


@dataclass(frozen=True)
class Day:
    per_agent: float
    """Dollars per agent over the day (the meter's by_agent, averaged)."""
    mind: float
    narrator: float
    """The day's spend split by who asked, per agent."""
    turns: int
    """Turns taken (a turn's first request carries a fresh perception), all agents."""
    prompt_tokens: int = 0
    output_tokens: int = 0
    dearest: float = 0.0
    """The day's spend of the agent who spent most (issue 42: every agent's day)."""
    """Tokens the minds' requests sent (uncached, written and read) and received, all
    agents: divided by `turns`, what a turn costs in tokens."""


@dataclass(frozen=True)
class Measured:
    model: str
    days: list[Day]
    replies: int
    cut: int
    """Replies whose stop_reason was max_tokens."""
    longest: int
    """Most output tokens in one mind reply."""
    max_tokens: int
    mind_cache: float
    narrator_cache: float
    """Cache reads' share of prompt tokens."""
    thinking_share: float
    """Thinking's share of the dollars spent (thinking is billed as output)."""
    mean_thinking: float
    """Mean thinking tokens a mind reply."""


def _usage(values: Mapping[str, Any]) -> Usage:
    written = int(values.get("cache_creation_input_tokens") or 0)
    hour = min(int((values.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0),
               written)
    return Usage(int(values.get("input_tokens") or 0), int(values.get("output_tokens") or 0),
                 written - hour, int(values.get("cache_read_input_tokens") or 0), hour)


def _thinking(values: Mapping[str, Any]) -> int:
    return int((values.get("output_tokens_details") or {}).get("thinking_tokens") or 0)


def _cache_share(usages: Sequence[Usage]) -> float:
    prompt = sum(u.prompt for u in usages)
    return sum(u.cache_read for u in usages) / prompt if prompt else 0.0


def _no_refusals(api: Any, model: str, cause: BaseException | None = None) -> None:
    """Fail loudly if the stand-in refused anything: Hearth sent a request the real
    API would refuse, and the spend figures would not be what a user pays."""
    if api.refused:
        raise RuntimeError(f"the Messages API stand-in refused {len(api.refused)} request(s) "
                           f"on {model}; the first: {api.refused[0]}") from cause


async def measure(model: str, ticks: int, *, days: int = 1, agents: int = AGENTS,
                  size: tuple[int, int] = SIZE, sleeps: bool = False,
                  claude: Mapping[str, Any] | None = None, levers: Any = None,
                  tick_seconds: float = TICK_SECONDS, economy: bool = False) -> Measured:
    """Run `days` spans of `ticks` ticks with every agent on `model`; raise if the
    stand-in refused any request. `sleeps`: the stand-in's agent sleeps at night
    (tests/standin/agent.py sleepy_agent); `claude`: settings.yaml `claude:` values
    changed; `levers`: the mind's Levers as given, not as the settings make them."""
    from adapters.claude_setup import Speaker, claude_parts
    from tests.messages_standin import StrictMessagesApi
    from tests.standin.agent import simple_agent, sleepy_agent

    config = load_config(None)
    if claude:
        changed = config.settings.claude.model_validate(
            {**config.settings.claude.model_dump(), **claude})
        config = dataclasses.replace(config, settings=config.settings.model_copy(
            update={"claude": changed}))
    settings = config.settings
    clock = [0.0]
    api = StrictMessagesApi(today=TODAY, clock=lambda: clock[0],
                            behaviour=sleepy_agent if sleeps else simple_agent,
                            batch_seconds=BATCH_SECONDS if economy else 0.0)
    meter = SpendMeter(settings.claude.price_table(), Budgets(), settings.time.ticks_per_day,
                       start_hour=settings.time.start_hour)
    spans: list[Day] = []
    with tempfile.TemporaryDirectory() as tmp:
        async with Storage(Path(tmp) / "data") as storage:
            await create_world(storage, config, seed=SEED, size=size, agent_count=agents)
            residents = await storage.agents.get_all_agents()
            await storage.agents.set_models([(a.name, model) for a in residents])
            speakers = [Speaker(a.name, model, a.personality) for a in residents]

            def client(api_key: str, timeout: float) -> Any:
                return api.client(api_key=api_key, timeout=timeout)

            parts = await claude_parts(speakers, settings.claude, "test-key", today=TODAY,
                                       meter=meter, make_client=client)
            parts.mind.clock = lambda: clock[0]  # the world's pace as the mind sees it
            if levers is not None:
                parts.mind.levers = levers
            if economy:  # `--run --economy`: each step's requests in one Message Batch
                from adapters.claude_batches import BatchGate

                async def waited(seconds: float) -> None:  # the gate's waits move the clock
                    clock[0] += seconds
                    await asyncio.sleep(0)
                parts.mind.batches = BatchGate(poll_seconds=settings.claude.batch_poll_seconds,
                                               sleep=waited, clock=lambda: clock[0])
                parts.narrator = None  # as engine/wiring.py does: the templates tell
            engine = await HearthEngine.open(storage, config, mind=parts.mind,
                                  agents_dir=Path(tmp) / "agents", narrator=parts.narrator,
                                  scene_narrator=parts.narrator)
            engine.on_close += [c.close for c in parts.clients]
            try:
                for _ in range(days):
                    before, seen = dict(meter.by_agent), len(api.served)
                    for _ in range(ticks):
                        clock[0] += tick_seconds
                        await engine.tick_once()
                    spent = [meter.by_agent.get(a.name, 0.0) - before.get(a.name, 0.0)
                             for a in residents]
                    served = api.served[seen:]
                    mind = sum(meter.cost(s.model, _usage(s.usage), s.batch) for s in served
                               if s.body.get("tools"))
                    told = sum(meter.cost(s.model, _usage(s.usage), s.batch) for s in served
                               if not s.body.get("tools"))
                    turns = sum(1 for s in served if s.body.get("tools")
                                and s.body["messages"][-1]["content"][-1]["type"] == "text")
                    asked = [_usage(s.usage) for s in served if s.body.get("tools")]
                    spans.append(Day(sum(spent) / len(spent), mind / len(spent),
                                     told / len(spent), turns,
                                     sum(u.input + u.cache_write + u.cache_write_1h
                                         + u.cache_read for u in asked),
                                     sum(u.output for u in asked), max(spent)))
            except Exception as exc:
                _no_refusals(api, model, exc)
                raise
            finally:
                await engine.close()
    _no_refusals(api, model)
    total = sum(d.mind + d.narrator for d in spans) * len(residents)
    if abs(total - meter.run) > 1e-6 * max(1.0, meter.run):
        raise RuntimeError(f"the meter counted ${meter.run:.6f}, the served replies cost "
                           f"${total:.6f}: some spend went uncounted")
    minds = [s for s in api.served if s.body.get("tools")]
    told = [s for s in api.served if not s.body.get("tools")]
    thinking = [_thinking(s.usage) for s in minds]
    thought = sum(_thinking(s.usage) * meter.prices[s.model].rates_for(_usage(s.usage)).output
                  for s in api.served) / 1e6
    return Measured(
        model, spans, len(api.served),
        sum(1 for s in api.served if s.stop_reason == "max_tokens"),
        max((int(s.usage.get("output_tokens") or 0) for s in minds), default=0),
        settings.claude.max_tokens,
        _cache_share([_usage(s.usage) for s in minds]),
        _cache_share([_usage(s.usage) for s in told]),
        thought / meter.run if meter.run else 0.0,
        sum(thinking) / len(thinking) if thinking else 0.0)


def figures(results: Sequence[Measured], ticks: int) -> list[Figure]:
    out: list[Figure] = []
    narrator = load_config(None).settings.claude.narrator_model
    for r in results:
        reference = REFERENCE_45.get(r.model)
        for i, day in enumerate(r.days, 1):
            value = f"${day.per_agent:.3f} (mind ${day.mind:.3f} + narrator ${day.narrator:.3f}"
            target = ""
            if reference is not None:
                name, low, high = reference
                value += f"; {day.per_agent / high:.2f}-{day.per_agent / low:.2f}x 4.5"
                target = f"{name} measured ${low:.2f}-${high:.2f}"
            out.append(Figure(
                f"$ per agent-day, {r.model} + {narrator} narrator, asleep 22-06, day {i} "
                f"({ticks} ticks, {day.turns} turns)", value + ")", target))
        for i, day in enumerate(r.days, 1):
            if day.turns:
                out.append(Figure(
                    f"tokens per turn, {r.model} mind, day {i}",
                    f"{day.prompt_tokens / day.turns:,.0f} prompt (cached or not) + "
                    f"{day.output_tokens / day.turns:,.0f} output"))
        share = r.cut / r.replies if r.replies else 0.0
        out += [
            Figure(f"replies stopped by max_tokens, {r.model}",
                   f"{share:.1%} ({r.cut} of {r.replies}; longest mind reply {r.longest:,} "
                   f"tokens of {r.max_tokens:,})", "0% (thinking never cuts a reply)",
                   r.cut == 0),
            Figure(f"cache reads, share of prompt tokens, {r.model}",
                   f"mind {r.mind_cache:.1%}, narrator {r.narrator_cache:.1%}"),
            Figure(f"thinking, share of the spend, {r.model} (lengths assumed)",
                   f"{r.thinking_share:.0%} (mean {r.mean_thinking:,.0f} tokens a mind reply)"),
        ]
    return out


def run(ticks: int | None = None, models: Sequence[str] = MODELS, days: int = DAYS
        ) -> list[Figure]:
    per_day = ticks or load_config(None).settings.time.ticks_per_day
    results = [asyncio.run(measure(m, per_day, days=days, sleeps=True)) for m in models]
    return figures(results, per_day)


if __name__ == "__main__":  # python -m bench.claude_cost: just these figures
    for f in run():
        print(f"{f.name}: {f.value}" + (f"   (target {f.target})" if f.target else ""))
