"""Narration says "within your walls" only for what was done within walls (issue 29, 14).

An agent that walked home across open ground was told "Within your walls tonight, the
sand takes your weight — you walk north onto sand": the indoors colour came from where
the walk ended (inside its shelter), not from where it was walked. A real engine on a
real world: the agent builds its own shelter, walks out through the door, walks back in,
and does something inside; the stored narrations are read back from the database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.types import Direction, Position
from services.narrator import COLOUR
from storage import Storage


def _indoor_openings() -> tuple[str, ...]:
    return tuple(sorted({f"{clause}, " for (_, _, inside), clauses in COLOUR.items() if inside
                         for clause in clauses}))


def _outdoor_openings() -> tuple[str, ...]:
    return tuple(sorted({f"{clause}, " for (_, _, inside), clauses in COLOUR.items()
                         if not inside for clause in clauses}))


def _home_site(world, near: Position) -> Position:
    """The cell nearest `near` with two passable cells south of it and open ground all
    round, away from the world's edge: where the shelter goes."""
    best = None
    for y in range(2, world.height - 4):
        for x in range(2, world.width - 2):
            cells = [Position(x + dx, y + dy) for dy in (-1, 0, 1, 2) for dx in (-1, 0, 1)]
            if all(world.is_passable(c) for c in cells):
                far = abs(x - near.x) + abs(y - near.y)
                if best is None or far < best[0]:
                    best = (far, Position(x, y))
    assert best is not None
    return best[1]


SCRIPT = (
    ("build_shelter", {}),                          # tick 0: inside, just built
    ("walk", {"direction": "south", "steps": 2}),   # tick 1: out through the door
    ("walk", {"direction": "north", "steps": 2}),   # tick 2: home across open ground
    ("sense_others", {}),                           # tick 3: inside all along
)


async def test_a_walk_home_across_open_ground_is_not_told_as_indoors(
    small_world: Path, make_engine, scripted,
) -> None:
    async with Storage(small_world) as storage:
        walker = sorted(a.name for a in await storage.agents.get_all_agents())[0]

    def script(start):  # type: ignore[no-untyped-def]
        if start.agent != walker or start.tick >= len(SCRIPT):
            return []
        return [SCRIPT[start.tick]]

    async with make_engine(scripted(script)) as engine:
        sim = engine.sim
        home = _home_site(sim.world, sim.agents.require(walker).position)
        sim.agents.update_position(walker, home)
        sim.agents.add_resource(walker, "wood", 20)
        for _ in SCRIPT:
            await engine.tick_once()
        shelter = sim.world.structure_at(home)
        assert shelter is not None and shelter.interior == frozenset({home})
        assert sim.world.has_door(home, Direction.SOUTH)
        assert sim.agents.require(walker).position == home

    conn = sqlite3.connect(small_world / "world.db")
    try:
        told = {tick: record for tick, record in conn.execute(
            "SELECT tick, json_extract(record, '$.actions[0].text') FROM turns "
            "WHERE agent = ? ORDER BY tick", (walker,))}
    finally:
        conn.close()
    assert sorted(told) == [0, 1, 2, 3], told
    indoors, outdoors = _indoor_openings(), _outdoor_openings()
    assert told[0].startswith(indoors), told[0]     # built around itself: inside
    assert told[1].startswith(outdoors), told[1]    # walked out: under the sky
    assert "you walk 2 steps north" in told[2]
    assert not told[2].startswith(indoors), told[2]  # walked home under the sky
    assert told[2].startswith(outdoors), told[2]
    assert told[3].startswith(indoors), told[3]     # at home, indoors again
