"""bench parts times a mind through a wrapper: the world must not notice the wrapper."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from adapters.offline_mind import OfflineMind
from bench.turn_parts import Stopwatch, TimedMind, _timed
from engine import HearthEngine
from storage import Storage

TICKS = 6


def _history(db: Path) -> tuple[list[tuple], list[tuple], list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return (
            conn.execute("SELECT tick, agent, kind, data FROM events ORDER BY seq").fetchall(),
            conn.execute("SELECT tick, agent, mind, actions, ended, record FROM turns "
                         "ORDER BY tick, agent").fetchall(),
            conn.execute("SELECT agent, kind, state FROM minds ORDER BY agent").fetchall(),
        )
    finally:
        conn.close()


async def _live(data: Path, agents: Path, config, timed: Stopwatch | None) -> None:
    async with Storage(data) as storage:
        seed = (await storage.world.get_world_state()).seed
        people = {a.name: a.personality for a in await storage.agents.get_all_agents()}
        mind = OfflineMind(seed, people)
        engine = await HearthEngine.open(storage, config, agents_dir=agents,
                              mind=mind if timed is None else TimedMind(mind, timed))
        if timed is not None:
            tools = engine.turn_tools
            tools.execute = _timed(tools.execute, timed, "actions")
            engine.run_agent_turn = _timed(engine.run_agent_turn, timed, "turns")
            timed.running = True
        try:
            for _ in range(TICKS):
                await engine.tick_once()
        finally:
            await engine.close()


async def test_a_timed_offline_mind_lives_exactly_as_the_bare_one(
    small_world: Path, config, tmp_path: Path,
) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(small_world, twin)
    watch = Stopwatch()
    await _live(small_world, tmp_path / "agents", config, watch)
    await _live(twin, tmp_path / "agents-twin", config, None)

    timed, bare = _history(small_world / "world.db"), _history(twin / "world.db")
    assert timed == bare
    events, turns, minds = timed
    assert turns and events and minds
    assert {row[2] for row in turns} == {"offline"}  # the wrapper keeps the mind's kind
    # Every part was counted, and the parts fit inside the turns that hold them.
    assert watch.mind > 0 and watch.actions > 0
    assert watch.mind + watch.actions < watch.turns


def test_the_wrapper_says_what_the_mind_says_of_itself() -> None:
    mind = OfflineMind(1, {"Ember": "curious"})
    timed = TimedMind(mind, Stopwatch())
    assert (timed.kind, timed.reads_text, timed.answers_at_once) == (
        mind.kind, mind.reads_text, mind.answers_at_once)
    assert timed.state_json("Ember") == mind.state_json("Ember")
