"""The engine as a command wires it (`--run` and the observer): over an open world,
each agent with the mind chosen for it (Claude, a local model, a replay, else the
offline one), the spend meter with its prices and budgets, and the model clients.

Each check that can refuse a run (a damaged world, a key or model the API refuses, a
model with no price, a local key not set) runs here, before the first tick and before
the world records which model now speaks for whom.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adapters.capacity import Capacities
from adapters.mind_choice import CLAUDE, LOCAL, REPLAY, SEAT, MindChoiceError, mind_kinds
from adapters.offline_mind import OfflineMind
from adapters.request_sizing import lowest_tier
from config import HearthConfig, RuntimeEnv
from core.agent import Agent
from core.clock import day_of, first_tick_of_day
from engine.engine import HearthEngine
from services.budget import Budgets, SpendMeter, UnpricedModel, requests_in_record
from services.command_errors import EXIT_RUNTIME, EXIT_USAGE, CliError
from services.mind import Mind
from services.status_command import first_problem
from storage import Storage
from storage.batch_file import write_pending
from storage.limits_file import read_limits, write_limits

if TYPE_CHECKING:
    from adapters.claude_mind import ClaudeMind
    from adapters.claude_setup import ClaudeParts
    from adapters.openai_mind import OpenAIMind
    from engine.seat_wiring import ServedSeats


@dataclass
class WiredEngine:
    """What `wire_engine` built: the engine, and what a command reports after a run (the
    meter's spend; whether Claude spoke for anyone)."""

    engine: HearthEngine
    meter: SpendMeter
    claude: ClaudeMind | None
    capacities: Capacities | None = None
    """The room at each model's endpoint: which limits paced the run."""
    seats: ServedSeats | None = None
    """The seats served over MCP (agents with `mind: seat`), if any."""


async def wire_engine(
    env: RuntimeEnv, config: HearthConfig, storage: Storage, mind: str | None,
    on_budget: Callable[[str], object], *, economy: bool = False,
    on_pending: Callable[[Any], None] | None = None,
) -> WiredEngine:
    """The engine over an open world, each agent with the mind chosen for it, the spend
    meter and the model clients; `engine.close()` closes the clients. A budget reached
    stops the engine after the turn in flight and is reported to `on_budget`.
    A world with a damaged row is refused first, in one line, before anything is read
    into the engine or written (storage/world_check.py)."""
    if damage := await first_problem(storage, env):
        raise CliError(damage)
    state = await storage.world.get_world_state()
    if state is None:
        raise CliError(f"{storage.db_path} holds no world yet (run "
                       f"`{env.command('--init')}`)")
    stored = await storage.agents.get_all_agents()
    residents = _as_agents_yaml_says(stored, config)
    kinds = choose_minds([a.name for a in residents], config, mind, env)
    offline = OfflineMind(state.seed, {a.name: a.personality for a in residents})
    speakers = [a for a in residents if kinds[a.name] == CLAUDE]
    meter = await _spend_meter(speakers, config, storage, state.tick)
    engine: HearthEngine | None = None

    def reached(what: str) -> None:
        on_budget(what)
        if engine is not None:
            engine.request_stop()

    scheduling = config.settings.scheduling
    capacities = Capacities(start=scheduling.model_requests_start,
                            ceiling=scheduling.model_requests_max,
                            remembered=read_limits(env.data_dir), lowest=lowest_tier)
    parts = await _claude_parts(speakers, config, env, storage, meter, reached, capacities)
    await _check_prices(meter, speakers, config, parts)
    claude = parts.mind if parts is not None else None
    narrator = parts.narrator if parts is not None else None
    gate = None
    write_pending(env.data_dir, None)  # a note a run that stopped hard left behind
    if economy and claude is not None:  # unattended: each step's requests in one batch
        from adapters.claude_batches import BatchGate
        gate = claude.batches = BatchGate(
            poll_seconds=config.settings.claude.batch_poll_seconds, on_pending=on_pending)
        # A retelling would wait for a batch of its own (each round costs the step its
        # time, and the prompt cache its life): the templates tell instead, for free.
        narrator = None
    local = _local_minds([a for a in residents if kinds[a.name] == LOCAL], config, storage,
                         capacities)
    await _record_model_changes(storage, stored, residents)  # only once every check passed
    minds: dict[str, Mind] = dict(local)
    replayed = None
    if REPLAY in kinds.values():  # --mind replay: decisions from the stored turns
        from adapters.memory_rebuild import MemoryLimits
        from engine.replay import replay_parts
        replayed = await replay_parts(storage, env.data_dir,
                                      [n for n, kind in kinds.items() if kind == REPLAY],
                                      limits=MemoryLimits.of(config.settings.claude))
        minds.update(replayed.minds)
        narrator = narrator or replayed.narrator
    if claude is not None:
        minds.update({n: claude for n, kind in kinds.items() if kind == CLAUDE})
    seats = None
    if seated := [n for n, kind in kinds.items() if kind == SEAT]:
        from engine.seat_wiring import seat_mind  # the MCP server loads only for seats
        seats = seat_mind(seated, residents, config, env.data_dir)
        minds.update({n: seats for n in seated})
    clients = {id(c): c for m in local.values() for c in m.shards.clients}
    for client in parts.clients if parts is not None else ():
        clients[id(client)] = client

    async def keep_limits() -> None:  # the next run starts knowing them
        write_limits(env.data_dir, capacities.said())

    closers: list[Callable[[], Awaitable[object]]] = [c.close for c in clients.values()]
    closers.append(keep_limits)
    if gate is not None:
        closers.append(gate.close)  # first (they close last first): cancels a batch
    if replayed is not None:
        closers.append(replayed.close)
    try:
        engine = await HearthEngine.open(
            storage, config, mind=offline, agents_dir=env.agents_dir, minds=minds,
            narrator=narrator, scene_narrator=narrator,
        )
    except BaseException:  # a world that cannot be loaded: what was opened is closed
        while closers:
            await closers.pop()()
        raise
    engine.on_close += closers
    if claude is not None:  # once stopping, no turn asks again and nothing is retold
        claude.stopping = lambda: engine.stop_requested
    if narrator is not None:
        narrator.stopping = lambda: engine.stop_requested
    for each in {id(m): m for m in local.values()}.values():
        each.stopping = lambda: engine.stop_requested
    served = None
    if seats is not None:  # last: a refusal here closes what was opened above
        from engine.seat_wiring import serve_seats
        try:
            served = await serve_seats(seats, config, env.data_dir, engine)
        except CliError:
            await engine.close()  # its clients, and a snapshot it may have begun
            raise
    return WiredEngine(engine, meter, claude, capacities, served)


async def check_claude_before_a_world(config: HearthConfig, env: RuntimeEnv,
                                       mind: str | None) -> None:
    """Before a world is made for a run Claude will speak in: a key the API refuses, or a
    model it no longer serves, stops the program now rather than after the making.
    (Warnings wait for the run's own check, so each is said once.)"""
    configured = [a.name for a in config.agents.agents]
    kinds = choose_minds(configured, config, mind, env)
    models = {a.model_id: [a.name] for a in config.agents.agents if kinds[a.name] == CLAUDE}
    if not models or env.api_key is None:
        return
    narrator = config.settings.claude.narrator_model
    if narrator:
        models.setdefault(narrator, ["the narrator"])
    from adapters.claude_models import KeyRefused, ModelRefused, check_models
    from adapters.claude_setup import new_client

    client = new_client(env.api_key, config.settings.claude.timeout_seconds)
    try:
        await check_models(client, models, datetime.date.today())
    except KeyRefused as exc:
        raise CliError(str(exc), EXIT_RUNTIME) from None
    except ModelRefused as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    finally:
        await client.close()


def _as_agents_yaml_says(residents: list[Agent], config: HearthConfig) -> list[Agent]:
    """The world's agents, each speaking through the model agents.yaml now names for it
    (agents it does not list, generated ones, follow its first agent, as when they were
    made): a model that retired is replaced by editing agents.yaml."""
    configured = {a.name: a.model_id for a in config.agents.agents}
    first = config.agents.agents[0].model_id if config.agents.agents else None
    out = []
    for agent in residents:
        model = configured.get(agent.name, first)
        out.append(agent if model in (None, agent.model_id)
                   else dataclasses.replace(agent, model_id=model))
    return out


async def _record_model_changes(storage: Storage, before: list[Agent],
                                after: list[Agent]) -> None:
    """The world remembers which model now speaks for whom, and the user is told."""
    was = {a.name: a.model_id for a in before}
    moved = [(a.name, a.model_id) for a in after if was.get(a.name) != a.model_id]
    await storage.agents.set_models(moved)
    for name, model in moved:
        print(f"{name} now speaks through {model} (was {was[name]}), as "
              "config/agents.yaml says.", file=sys.stderr)


def choose_minds(
    names: list[str], config: HearthConfig, flag: str | None, env: RuntimeEnv
) -> dict[str, str]:
    """Each named agent's kind of mind (`adapters/mind_choice.py`); a choice that cannot
    be honoured (Claude with no key) is a usage mistake, refused before anything runs."""
    configured = {a.name: a.mind for a in config.agents.agents}
    try:
        return mind_kinds(names, configured, flag, env.api_key is not None)
    except MindChoiceError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


async def _spend_meter(
    residents: list[Agent], config: HearthConfig, storage: Storage, tick: int
) -> SpendMeter:
    """This run's meter: the price table, the budgets, and what today already cost."""
    ticks_per_day = config.settings.time.ticks_per_day
    start_hour = config.settings.time.start_hour
    budgets = config.settings.claude.budgets
    day_start = first_tick_of_day(day_of(tick, ticks_per_day, start_hour), ticks_per_day,
                                  start_hour)
    earlier = []
    for at, agent, record in await storage.engine.records_of_mind("claude", day_start):
        earlier += [(agent, at, model, usage, batch)
                    for model, usage, batch in requests_in_record(record)]
    meter = SpendMeter(
        config.settings.claude.price_table(),
        Budgets(budgets.per_run, budgets.per_agent_per_day, budgets.per_tick),
        ticks_per_day, earlier, now=tick, start_hour=start_hour)
    return meter


async def _check_prices(meter: SpendMeter, residents: list[Agent], config: HearthConfig,
                        parts: ClaudeParts | None) -> None:
    """Every model Claude speaks through has a price (after the models were found to
    exist, so a retired or misspelt id is named as such, not as unpriced)."""
    narrator = config.settings.claude.narrator_model
    from core.model_catalog import facts

    used = {a.model_id for a in config.agents.agents} | {narrator, config.settings.gardener.model}
    for model in sorted(config.settings.claude.prices):
        if facts(model) is None and model not in used:
            print(f"warning: settings.yaml prices {model}, a model Hearth does not know and "
                  "nobody here uses (a typo?)", file=sys.stderr)
    try:
        meter.check_models([a.model_id for a in residents]
                           + ([narrator] if narrator and residents else []))
    except UnpricedModel as exc:
        for client in parts.clients if parts is not None else ():
            await client.close()
        raise CliError(f"config error: {exc}", EXIT_USAGE) from None


async def _claude_parts(
    residents: list[Agent], config: HearthConfig, env: RuntimeEnv, storage: Storage,
    meter: SpendMeter, on_budget: Callable[[str], None], capacities: Capacities,
) -> ClaudeParts | None:
    """The Claude mind for every agent Claude speaks for, and the narrator (None if
    Claude speaks for nobody). The key and each model are checked first: a key the API
    refuses stops here (exit 1), a retired or unknown model too (exit 2); a deprecated
    one is named once, with its end of life.

    The SDK reads ANTHROPIC_BASE_URL itself, so any compatible endpoint can stand in."""
    if not residents or env.api_key is None:
        return None
    from adapters.claude_models import KeyRefused, ModelRefused
    from adapters.claude_setup import Speaker, claude_parts

    efforts = {a.name: a.effort for a in config.agents.agents}
    speakers = [Speaker(a.name, a.model_id, a.personality, efforts.get(a.name))
                for a in residents]
    try:
        parts = await claude_parts(
            speakers, config.settings.claude, env.api_key, today=datetime.date.today(),
            meter=meter, on_budget=on_budget, trace=storage.traces.write_now,
            capacities=capacities)
    except KeyRefused as exc:
        raise CliError(str(exc), EXIT_RUNTIME) from None
    except ModelRefused as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    for line in parts.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return parts


def _local_minds(
    residents: list[Agent], config: HearthConfig, storage: Storage, capacities: Capacities,
) -> dict[str, OpenAIMind]:
    """A mind per OpenAI-compatible endpoint, for the agents agents.yaml gives `mind: local`.

    The key, if the endpoint wants one, is read from the environment variable the agent
    names (`api_key_env`); a variable that is not set is refused before anything runs."""
    if not residents:
        return {}
    from adapters.client_shards import clients_needed
    from adapters.openai_mind import OpenAIMind, OpenAIProfile, local_client

    settings = config.settings.claude
    configured = {a.name: a for a in config.agents.agents}
    groups: dict[tuple[str, str | None], list[Agent]] = {}
    for agent in residents:
        spec = configured[agent.name]
        groups.setdefault((str(spec.base_url), spec.api_key_env), []).append(agent)
    minds: dict[str, OpenAIMind] = {}
    for (url, key_env), agents in groups.items():
        key = os.environ.get(key_env, "").strip() if key_env else "not-needed"
        if not key:
            raise CliError(f"{', '.join(a.name for a in agents)} use {url} with the key in "
                           f"${key_env}, which is not set", EXIT_USAGE)
        client, *more = [local_client(url, key, settings.max_retries,
                                      settings.timeout_seconds)
                         for _ in range(clients_needed(len(agents)))]
        mind = OpenAIMind(client, {a.name: OpenAIProfile(a.model_id, a.personality)
                                   for a in agents}, more_clients=more,
                          max_tokens=settings.max_tokens, trace=storage.traces.write_now,
                          compact_above_chars=settings.compact_above_chars,
                          keep_recent_chars=settings.keep_recent_chars,
                          summary_max_chars=settings.summary_max_chars,
                          capacities=capacities)
        minds.update({a.name: mind for a in agents})
    return minds
