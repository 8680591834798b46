"""Turns that run at once stay independent (issue 40): what a turn makes is named by the
turn alone, whatever order the model's replies come back in.

Claude minds through the real SDK and the Messages API stand-in, whose replies each
take a random time (a seeded draw per run), so the turns of clusters far apart
interleave differently in each run. Every agent walks and writes a sign each turn. Two
runs of the same world must end identical, ids included: an id is (world seed, tick,
agent, its order in the turn), never keyed to whichever turn began last.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sqlite3
from pathlib import Path

from adapters.claude_mind import ClaudeMind, ClaudeProfile
from storage import Storage
from tests.messages_standin import StrictMessagesApi
from tests.standin.pairs import pair_agent, pair_up

TICKS = 48
FORK_AT = 20


def _objects(world: Path) -> list[tuple]:
    db = sqlite3.connect(world / "world.db")
    try:
        things = db.execute("SELECT id, object_type, x, y, created_by, created_tick, extras "
                            "FROM objects ORDER BY x, y").fetchall()
        talks = db.execute("SELECT c.id, c.started_tick, c.ended_tick, p.agent_name, "
                           "p.joined_tick, p.left_tick FROM conversations c JOIN "
                           "conversation_participants p ON p.conversation_id = c.id "
                           "ORDER BY c.started_tick, p.agent_name").fetchall()
        built = db.execute("SELECT id, created_by, created_tick FROM structures "
                           "ORDER BY id").fetchall()
        owned = db.execute("SELECT * FROM inventory_items ORDER BY 1, 2").fetchall()
        # In the order they were said within each conversation: who heard what first.
        said = db.execute("SELECT conversation_id, speaker, message, tick "
                          "FROM conversation_turns ORDER BY conversation_id, id").fetchall()
        return [*things, *talks, *said, *built, *owned]
    finally:
        db.close()


async def _live(world: Path, agents_dir: Path, config, order_seed: int) -> list[tuple]:
    draw = random.Random(order_seed)

    async def some_time(_: float) -> None:  # the model's latency: a random order of replies
        await asyncio.sleep(draw.uniform(0.0, 0.03))

    api = StrictMessagesApi(behaviour=pair_agent, latency=0.01, sleep=some_time)
    async with Storage(world) as storage:
        agents = await storage.agents.get_all_agents()
    profiles = {a.name: ClaudeProfile("claude-sonnet-5-5", a.personality, "low")
                for a in agents}
    from engine.engine import HearthEngine

    storage = Storage(world)
    engine = await HearthEngine.open(storage, config, mind=ClaudeMind(api.client(), profiles),
                          agents_dir=agents_dir)
    try:
        for _ in range(TICKS):
            assert (await engine.tick_once()).completed
    finally:
        await engine.close()
        await storage.close()
    assert api.refused == []
    return _objects(world)


async def test_ids_do_not_depend_on_the_order_replies_come_back_in(
        small_world: Path, config, tmp_path: Path) -> None:
    pair_up(small_world / "world.db")
    worlds = []
    for run in (1, 2):
        copy = tmp_path / f"run{run}"
        shutil.copytree(small_world, copy)
        worlds.append(await _live(copy, tmp_path / f"agents{run}", config, order_seed=run))
    first, second = worlds
    signs = [row for row in first if row[1:2] == ("sign",)]
    assert len({row[4] for row in signs}) >= 3  # several agents wrote, their turns at once
    assert len(signs) >= 8
    talks = {row[0] for row in first if str(row[0]).startswith("conv-")}
    assert len(talks) >= 2  # each pair talked
    assert any(str(row[0]).startswith("structure-") for row in first)  # shelters built
    assert any("carved_bowl" in str(row) for row in first)  # bowls carved
    assert first == second


async def test_a_fork_replayed_to_the_end_is_its_parent_ids_and_all(
        small_world: Path, config, tmp_path: Path) -> None:
    """A fork walks the parent's stored turns one at a time; with ids keyed to whichever
    turn began last, its ids were not the parent's (the walk is checked against them)."""
    from adapters.memory_rebuild import MemoryLimits
    from engine.engine import HearthEngine
    from engine.fork import fork_world
    from engine.replay import replay_parts

    pair_up(small_world / "world.db")
    parent = await _live(small_world, tmp_path / "agents", config, order_seed=3)
    await fork_world(small_world, config, FORK_AT, tmp_path / "fork")
    data = tmp_path / "fork" / "data"
    storage = Storage(data)
    await storage.open()
    names = [a.name for a in await storage.agents.get_all_agents()]
    parts = await replay_parts(storage, data, names,
                               limits=MemoryLimits.of(config.settings.claude))
    engine = await HearthEngine.open(storage, config, mind=next(iter(parts.minds.values())),
                          agents_dir=tmp_path / "fork" / "agents", minds=dict(parts.minds),
                          narrator=parts.narrator, scene_narrator=parts.narrator)
    try:
        for _ in range(TICKS - FORK_AT):
            assert (await engine.tick_once()).completed
    finally:
        await engine.close()
        await storage.close()
        await parts.close()
    assert _objects(data) == parent
