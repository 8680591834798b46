"""`hearth --gardener [--once]`: the Gardener beside a running world.

Its process reads the world through a read-only connection and writes only its own
cycles and requests (`storage/gardener_db.py`); the engine judges and applies those at
its next tick. It never creates or migrates a world. It decides by its rules, or asks a
Claude model when a key is set and settings name one (`adapters/gardener_model.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import sys

from adapters.capacity import Capacity
from adapters.request_sizing import lowest_tier
from config import HearthConfig, RuntimeEnv
from services.command_errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, CliError
from storage import StorageError
from storage.world_files import identity

GARDENER_NICENESS = 10
"""How far the Gardener's process steps back for the scheduler (os.nice): on a busy
machine the engine's ticks get the processors first."""


def _step_back_for_the_engine() -> None:
    """Lower this process's priority: the Gardener is never urgent, and a cycle that
    waits a moment costs nothing, while a tick held up is felt by every agent."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(GARDENER_NICENESS)


async def run_gardener(env: RuntimeEnv, config: HearthConfig, *, once: bool) -> int:
    """`hearth --gardener`: cycles beside the running world until Ctrl+C (or one, with
    --once). It reads the world read-only and writes only its own cycles and requests;
    the engine applies those at its next tick."""
    import sqlite3

    from services.gardener.cycle import run_cycle
    from services.gardener.loop import Schedule, keep_gardening
    from services.gardener.observe import observe, observe_args
    from storage.gardener_db import GardenerStore
    from storage.gardener_source import SqliteHealthSource

    path = env.data_dir / "world.db"
    settings = config.settings.gardener
    with GardenerStore(path) as store:
        reader = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            source = SqliteHealthSource(reader)
            world = source.world()
            if not source.agents():
                raise CliError(f"{path}: the world has no agents, so there is no one whose "
                               "world could need tending", EXIT_USAGE)
            decider = await _gardener_model(config, env, (world.width, world.height))
            landmarks = source.landmarks()
            args = observe_args(config)

            async def cycle():  # type: ignore[no-untyped-def]
                try:
                    return await run_cycle(
                        observe(source, **args), landmarks, store,
                        thresholds=settings.thresholds.to_core(),
                        caps=settings.caps.to_core(),
                        decider=decider, memory_cycles=settings.memory_cycles)
                except (StorageError, sqlite3.OperationalError) as exc:
                    print(f"Gardener: this cycle could not run ({exc}); trying again",
                          file=sys.stderr, flush=True)
                    if once:
                        raise
                    return None

            who = "the rules" if decider is None else decider.name
            print(f"Gardener: tending {path} (decided by {who}; a cycle every "
                  f"{settings.every_ticks} ticks"
                  + (f" or {settings.every_minutes:g} minutes" if settings.every_minutes else "")
                  + ")", flush=True)
            schedule = Schedule(settings.every_ticks, settings.every_minutes,
                                settings.poll_seconds)
            if not once:  # a lasting process shares the machine with the engine
                _step_back_for_the_engine()
            tended = identity(path)

            def replaced() -> bool:  # a stat, never an open (storage/database.py)
                return identity(path) != tended

            try:
                await keep_gardening(lambda: source.world().tick, cycle, schedule, once=once,
                                     report=lambda r: print(r.summary(), flush=True),
                                     stop=replaced)
            except (KeyboardInterrupt, asyncio.CancelledError):
                print("Gardener: stopped", flush=True)
                return EXIT_INTERRUPTED
            if replaced():
                print(f"Gardener: the world in {env.data_dir} was replaced or moved; stopped. "
                      "Start it again to tend the world there now.", file=sys.stderr,
                      flush=True)
                return EXIT_RUNTIME
        finally:
            reader.close()
    return EXIT_OK


async def _gardener_model(config: HearthConfig, env: RuntimeEnv, size: tuple[int, int]):
    """The model the Gardener asks when a key is set and settings name one (else None:
    its rules decide). As for minds, a model with no price is refused, and the key and
    model are checked before the first cycle (a refused key: exit 1; a retired or
    unknown model: exit 2; a deprecated one is named once)."""
    settings = config.settings.gardener
    if env.api_key is None or not settings.model:
        return None
    from core.model_catalog import price_in

    price = price_in(config.settings.claude.price_table(), settings.model)
    if price is None:
        raise CliError(f"no price for {settings.model} in settings.yaml (claude.prices); add "
                       "one so the Gardener's spend can be counted", EXIT_USAGE)
    from adapters.claude_calls import CallPolicy
    from adapters.claude_models import KeyRefused, ModelRefused, check_models
    from adapters.claude_setup import new_client
    from adapters.gardener_model import ClaudeGardener

    client = new_client(env.api_key, settings.timeout_seconds)
    try:
        lineup = await check_models(client, {settings.model: ["the Gardener"]},
                                    datetime.date.today())
    except (KeyRefused, ModelRefused) as exc:
        await client.close()
        raise CliError(str(exc), EXIT_RUNTIME if isinstance(exc, KeyRefused)
                       else EXIT_USAGE) from None
    for line in lineup.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return ClaudeGardener(client, settings.model, price,
                          settings.caps.to_core(), size, max_tokens=settings.max_tokens,
                          budget=settings.budget_per_run,
                          options=lineup.options_for(settings.model, settings.effort,
                                                     settings.max_tokens),
                          policy=CallPolicy(1, settings.timeout_seconds, 10.0),
                          capacity=_room(settings.model))


def _room(model: str) -> Capacity:
    """The Gardener's one request at a time, paced to the lowest limits published for
    its model until an answer says the key's (adapters/request_sizing.py)."""
    room = Capacity(model, model=model, start=1, ceiling=1)
    if (lowest := lowest_tier(model)) is not None:
        room.assume_lowest(lowest)
    return room
