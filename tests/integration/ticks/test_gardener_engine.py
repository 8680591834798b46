"""The engine's side of the Gardener on a real world: each kind of request applied at
the start of a tick, perceived by the agents in reach, remembered across a restart,
and gone when its time is up."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from core.terrain import Weather
from storage.gardener_db import GardenerStore


def _ask(world: Path, tick: int, level: str, *requests: tuple[str, dict]) -> int:
    with GardenerStore(world / "world.db") as store:
        return store.add_cycle(tick, level, "[]", "{}", "test", "{}", "a test", None,
                               [(kind, json.dumps(params)) for kind, params in requests])


async def test_each_kind_is_applied_perceived_and_remembered(
    make_engine, scripted, small_world: Path, config
) -> None:
    idle = scripted(lambda start: [])
    happening = "A fox trots past and looks at you."
    # The small world is all one area at the shipped 40 cells: make areas small here.
    gardener = config.settings.gardener
    caps = gardener.caps.model_copy(update={"area_cells": 2})
    settings = config.settings.model_copy(
        update={"gardener": gardener.model_copy(update={"caps": caps})})
    config = dataclasses.replace(config, settings=settings)
    async with make_engine(idle, config=config) as engine:
        people = sorted(engine.sim.agents.get_all_agents(), key=lambda a: a.name)
        first, second = people[0], people[-1]
        mark = engine.sim.world.landmarks[0]
        gathering = engine.sim.gathering
        spot = first.position
        gathering.take(spot, engine.tick)  # something gathered here, to grow back
        weather = Weather.FOGGY if engine.sim.world.weather != Weather.FOGGY else Weather.CLEAR
        _ask(small_world, engine.tick, "CRITICAL",
             ("event", {"x": spot.x, "y": spot.y, "radius": 1, "text": happening}),
             ("weather", {"weather": weather.value}))
        _ask(small_world, engine.tick, "WARNING",
             ("reveal_landmark", {"landmark": mark.name, "x": second.position.x,
                                  "y": second.position.y, "radius": 0}))
        ctx = await engine.tick_once()
        kinds = [e.event_type for e in ctx.events]
        assert kinds.count("gardener_intervention") == 3 and "weather_changed" in kinds
        assert engine.sim.world.weather == weather
        told = engine.last_perceptions[first.name]
        assert happening in told.notices and f"You notice: {happening}" in told.as_text()
        shown = engine.last_perceptions[second.name]
        assert mark.name in {m.name for m in shown.landmarks}
        assert any(mark.name in n for n in shown.notices)
        # a regrowth in its own cycle, elsewhere in time (the area rule): the land is whole
        assert gathering.spent_at(spot) is not None
        tick = engine.tick
    # A restarted engine still has the notices that are running, and the caps' history.
    async with make_engine(idle, config=config) as engine:
        assert len(engine.stewardship.notices) == 2
        assert len(engine.stewardship.applied) == 3
        for _ in range(config.settings.gardener.happening_ticks):
            await engine.tick_once()
        assert happening not in engine.last_perceptions[first.name].notices
        assert engine.stewardship.notices == []
        _ask(small_world, engine.tick, "WARNING",
             ("regrowth", {"x": spot.x, "y": spot.y, "radius": 2}))
        engine.stewardship.applied.clear()  # as if the area's last change were long ago
        await engine.tick_once()
        assert engine.sim.gathering.spent_at(spot) is None
        assert engine.tick > tick
    with sqlite3.connect(f"file:{small_world / 'world.db'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT kind, status FROM gardener_requests ORDER BY id").fetchall()
    assert rows == [("event", "applied"), ("weather", "applied"),
                    ("reveal_landmark", "applied"), ("regrowth", "applied")]
