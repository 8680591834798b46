"""SqliteHealthSource and observe() on a real world that the real engine has lived in.

One small world is made and run once for the module: three agents start together and
one far off in a corner. The offline mind speaks for two of them (so they roam, talk,
build, sleep at night); the loner's mind does nothing at all, and the gatherer's does
nothing until GATHER_FROM, then gathers its own cell twice a turn (five units, then
failures, every one a real action through the engine). Halfway the Gardener's view is
taken while the engine is still open, as a real Gardener takes it.

Every expectation is worked out here again from the tables themselves, by plain
Python over every row, or by the engine's own Gathering for what a cell holds, never
by asking the code under test.
"""

from __future__ import annotations

import asyncio
import sqlite3
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.offline_mind import OfflineMind
from config import HearthConfig, load_config
from core.gardener.health import HealthFigures
from core.terrain import TERRAIN_ORDER, Terrain
from core.types import AgentName, Position
from engine import HearthEngine
from services.gardener.observe import gathering_args, observe, observe_args
from services.gathering import Gathering, Spent
from services.mind import MindDefaults, ToolCall, ToolOutcome, TurnStart
from services.world_setup import create_world
from storage import Storage
from storage.gardener_source import (
    LASTING_CHANGE_KINDS,
    SOCIAL_PARTIES,
    SqliteHealthSource,
)
from tests.integration.storage import reference_history as reference

SEED = 11
SIZE = (48, 40)
GATHER_FROM = 30
"""The tick the gatherer starts gathering, and the Gardener's first look."""
END = 40
"""Ticks run in all: the world ends at night (8 o'clock start, 24 ticks a day)."""
RADIUS = 8


# --------------------------------------------------------------------------- the minds


class _Calls:
    """A turn that makes the given calls once, then ends."""

    def __init__(self, calls: Sequence[tuple[str, dict]]) -> None:
        self.calls = list(calls)

    async def next_calls(self, outcomes: Sequence[ToolOutcome]) -> Sequence[ToolCall]:
        calls, self.calls = self.calls, []
        return [ToolCall(f"g{i}", name, args) for i, (name, args) in enumerate(calls)]

    async def finish(self, outcomes: Sequence[ToolOutcome], reason: str) -> None:
        pass

    def record(self) -> Mapping[str, Any]:
        return {}


class _Cast(MindDefaults):
    """A test double of the Mind port (the engine's edge): the offline mind for most,
    nothing for the loner, gathering for the gatherer from GATHER_FROM on."""

    kind = "cast"
    reads_text = False
    answers_at_once = True

    def __init__(self, offline: OfflineMind, loner: str, gatherer: str) -> None:
        self.offline, self.loner, self.gatherer = offline, loner, gatherer

    def begin(self, start: TurnStart):
        if start.agent == self.loner:
            return _Calls([])
        if start.agent == self.gatherer:
            return _Calls([("gather", {}), ("gather", {})] if start.tick >= GATHER_FROM else [])
        return self.offline.begin(start)

    def get_state(self, agent: AgentName) -> Mapping[str, Any]:
        return self.offline.get_state(agent)

    def set_state(self, agent: AgentName, state: Mapping[str, Any]) -> None:
        self.offline.set_state(agent, state)


# --------------------------------------------------------------------------- the world


@dataclass(frozen=True)
class Lived:
    db: Path
    config: HearthConfig
    loner: str
    gatherer: str
    friends: tuple[str, str]
    before: HealthFigures
    """observe() at GATHER_FROM, with the engine open."""
    snapshot_ticks: tuple[int, int, int]
    """world().tick inside one snapshot before and after the engine committed a tick,
    then after the snapshot ended."""


def _read_only(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)


def _terrain(db: sqlite3.Connection) -> dict[Position, Terrain]:
    """Every cell's terrain: the raster, then the changed cells over it."""
    width, height, data = db.execute("SELECT width, height, data FROM terrain_raster").fetchone()
    raw = zlib.decompress(data)
    land = {Position(x, y): TERRAIN_ORDER[raw[y * width + x]]
            for y in range(height) for x in range(width)}
    for x, y, name in db.execute("SELECT x, y, terrain FROM cells"):
        land[Position(x, y)] = Terrain(name)
    return land


def _place(db: Path, where: Mapping[str, Position]) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.executemany("UPDATE agents SET x = ?, y = ? WHERE name = ?",
                         [(p.x, p.y, name) for name, p in where.items()])
        conn.commit()
    finally:
        conn.close()


def _observe(db: Path, config: HearthConfig) -> HealthFigures:
    conn = _read_only(db)
    try:
        return observe(SqliteHealthSource(conn), **observe_args(config))
    finally:
        conn.close()


async def _live(data: Path, config: HearthConfig, agents_dir: Path) -> Lived:
    async with Storage(data) as storage:
        await create_world(storage, config, seed=SEED, size=SIZE, agent_count=4)
        state = await storage.world.get_world_state()
        people = sorted(await storage.agents.get_all_agents(), key=lambda a: a.name)
    db = data / "world.db"
    conn = sqlite3.connect(db)
    land = _terrain(conn)
    conn.close()
    terrains = config.terrain.terrains
    gatherer, first, second, loner = (a.name for a in people)
    # The gatherer on a gatherable cell, its friends on the walkable cells nearest it,
    # the loner on the walkable cell farthest from it.
    home = next(p for p, t in sorted(land.items(), key=lambda kv: (abs(kv[0].x - 20)
                                                                   + abs(kv[0].y - 20)))
                if terrains[t].gather and terrains[t].passable)
    walkable = [p for p, t in land.items() if terrains[t].passable and p != home]
    walkable.sort(key=lambda p: (home.chebyshev(p), p.y, p.x))
    where = {gatherer: home, first: walkable[0], second: walkable[1], loner: walkable[-1]}
    _place(db, where)

    offline = OfflineMind(state.seed, {a.name: a.personality for a in people})
    storage = Storage(data)
    engine = await HearthEngine.open(storage, config, mind=_Cast(offline, loner, gatherer),
                          agents_dir=agents_dir)
    try:
        for _ in range(GATHER_FROM):
            assert (await engine.tick_once()).completed
        before = _observe(db, config)
        reader = _read_only(db)
        try:
            source = SqliteHealthSource(reader)
            with source.snapshot():
                first_look = source.world().tick
                assert (await engine.tick_once()).completed
                second_look = source.world().tick
            after_look = source.world().tick
        finally:
            reader.close()
        for _ in range(END - GATHER_FROM - 1):
            assert (await engine.tick_once()).completed
    finally:
        await engine.close()
        await storage.close()
    return Lived(db, config, loner, gatherer, (first, second), before,
                 (first_look, second_look, after_look))


@pytest.fixture(scope="module")
def lived(tmp_path_factory: pytest.TempPathFactory) -> Lived:
    base = tmp_path_factory.mktemp("gardener")
    return asyncio.run(_live(base / "data", load_config(None), base / "agents"))


@pytest.fixture
def source(lived: Lived) -> Iterator[SqliteHealthSource]:
    conn = _read_only(lived.db)
    try:
        yield SqliteHealthSource(conn)
    finally:
        conn.close()


@pytest.fixture
def table(lived: Lived) -> Iterator[sqlite3.Connection]:
    """The same file, for the expectations."""
    conn = _read_only(lived.db)
    try:
        yield conn
    finally:
        conn.close()


# --------------------------------------------------------------------------- expectations


def _units_near(table: sqlite3.Connection, config: HearthConfig, positions, radius: int,
                tick: int | None) -> dict[Position, int]:
    """Cell by cell, with the engine's own Gathering saying what each cell holds."""
    rules = config.settings.gathering
    gathering = Gathering(
        capacity=rules.cell_capacity, regrow_ticks=rules.regrow_ticks,
        spent=[(Position(x, y), Spent(units, since)) for x, y, units, since
               in table.execute("SELECT x, y, units, since_tick FROM spent_cells")])
    land = _terrain(table)
    terrains = config.terrain.terrains
    out = {}
    for pos in positions:
        total = 0
        for cell, kind in land.items():
            if pos.chebyshev(cell) <= radius and terrains[kind].gather:
                if tick is None:
                    spent = gathering.spent_at(cell)
                    total += rules.cell_capacity - (spent.units if spent else 0)
                else:
                    total += gathering.available(cell, tick)
        out[pos] = total
    return out


# --------------------------------------------------------------------------- the source


def test_world_and_agents_are_the_rows(lived: Lived, source, table) -> None:
    world = source.world()
    assert (world.tick, world.width, world.height) == (END, *SIZE)
    rows = table.execute("SELECT name, x, y, is_sleeping FROM agents ORDER BY name").fetchall()
    assert [(a.name, a.x, a.y, a.sleeping) for a in source.agents()] == \
        [(name, x, y, bool(s)) for name, x, y, s in rows]
    assert source.agents()[0].position == Position(rows[0][1], rows[0][2])


def test_last_social_ticks_name_every_party(lived: Lived, source, table) -> None:
    expected = reference.last_social(table)
    assert source.last_social_ticks() == expected
    assert lived.loner not in expected  # nobody came to the corner
    # The conversation the offline mind held: its last word makes its speaker's tick.
    speaker, said = table.execute(
        "SELECT speaker, tick FROM conversation_turns ORDER BY id DESC LIMIT 1").fetchone()
    assert source.last_word_tick() == said
    assert expected[speaker] >= said
    # A conversation's start names everyone in it, though only the inviter is its agent.
    started = [e for e in reference.events(table) if e["type"] == "conversation_started"]
    assert started
    for name in started[-1]["participants"]:
        assert source.last_social_ticks()[name] >= started[-1]["tick"]


def test_every_social_event_kind_is_read_by_its_party_fields() -> None:
    assert SOCIAL_PARTIES["conversation_started"] == ((), ("participants",))
    assert SOCIAL_PARTIES["item_given"] == (("agent", "recipient"), ())
    assert SOCIAL_PARTIES["invitation_accepted"] == (("agent", "inviter"), ())
    assert "invitation_expired" not in SOCIAL_PARTIES


@pytest.mark.parametrize("since", [0, 10, GATHER_FROM, END - 1])
def test_action_counts_are_the_turn_records(lived: Lived, source, table, since: int) -> None:
    assert source.action_counts(since) == reference.actions(table, since, END + 1)
    assert source.action_counts(0, since) == reference.actions(table, 0, since)


def test_the_gatherer_failed_once_its_cell_was_spent(lived: Lived, source) -> None:
    gathers = 2 * (END - GATHER_FROM)
    capacity = lived.config.settings.gathering.cell_capacity
    assert source.action_counts(GATHER_FROM)[lived.gatherer] == (gathers, gathers - capacity)
    assert lived.gatherer not in source.action_counts(0, GATHER_FROM)
    assert lived.loner not in source.action_counts(0)


def test_lasting_changes_count_the_things_left(lived: Lived, source, table) -> None:
    kinds = [(e["tick"], e["type"]) for e in reference.events(table)]
    for since in (0, 12, GATHER_FROM):
        assert source.lasting_changes(since) == sum(
            1 for tick, kind in kinds if tick >= since and kind in LASTING_CHANGE_KINDS)
    assert source.lasting_changes(0) > 0
    assert source.lasting_changes(0, 12) == sum(
        1 for tick, kind in kinds if tick < 12 and kind in LASTING_CHANGE_KINDS)
    assert "resource_gathered" not in LASTING_CHANGE_KINDS  # gathered land grows back


def test_asleep_ticks_follow_sleep_and_wake(lived: Lived, source, table) -> None:
    kinds = {e["type"] for e in reference.events(table)}
    assert {"agent_slept", "agent_woke"} <= kinds  # the offline agents slept a night
    sleepers = [a.name for a in source.agents() if a.sleeping]
    assert sleepers  # ...and lie down again at the end
    for since in (0, 5, 16, 25, END - 1, END - 30):
        assert source.asleep_ticks(since, END) == reference.asleep(table, since, END)
    # A span inside the night, with no event in it, for someone asleep throughout.
    first_sleep = min(e["tick"] for e in reference.events(table) if e["type"] == "agent_slept")
    assert source.asleep_ticks(first_sleep + 1, first_sleep + 3) == \
        reference.asleep(table, first_sleep + 1, first_sleep + 3)
    assert source.asleep_ticks(0, END)[lived.loner] == 0
    # A span after the last sleep: no event in it, so whoever sleeps now slept it all.
    later = source.asleep_ticks(END, END + 2)
    assert later == reference.asleep(table, END, END + 2)
    assert {name for name, ticks in later.items() if ticks == 2} == set(sleepers)


@pytest.mark.parametrize("radius", [0, 1, 3, RADIUS])
def test_gatherable_units_near_match_the_engines_gathering(lived: Lived, source, table,
                                                           radius: int) -> None:
    config = lived.config
    width, height = SIZE
    spots = [a.position for a in source.agents()]
    spots += [Position(0, 0), Position(width - 1, height - 1), Position(width // 2, 0)]
    spots += [Position(x, y) for x, y, _, _ in table.execute("SELECT * FROM spent_cells")]
    args = gathering_args(config)
    got = source.gatherable_units_near(spots, radius, args["capacity"], args["gatherable"],
                                       regrow_ticks=args["regrow_ticks"], tick=END)
    assert got == _units_near(table, config, spots, radius, END)
    stored = source.gatherable_units_near(spots, radius, args["capacity"], args["gatherable"])
    assert stored == _units_near(table, config, spots, radius, None)


def test_gatherable_terrain_comes_from_the_caller(lived: Lived, source, table) -> None:
    home = next(a.position for a in source.agents() if a.name == lived.gatherer)
    everything = source.gatherable_units_near([home], 2, 1, [t.value for t in Terrain])
    spent = sum(1 for x, y in table.execute("SELECT x, y FROM spent_cells")
                if home.chebyshev(Position(x, y)) <= 2)  # capacity 1: each spent cell is bare
    assert spent and everything == {home: 25 - spent}
    assert source.gatherable_units_near([home], 2, 5, []) == {home: 0}
    with pytest.raises(ValueError, match="unknown terrain 'lava'"):
        source.gatherable_units_near([home], 2, 5, ["lava"])


def test_a_snapshot_sees_one_state_while_the_engine_commits(lived: Lived) -> None:
    inside, still_inside, after = lived.snapshot_ticks
    assert inside == still_inside == GATHER_FROM
    assert after == GATHER_FROM + 1


# --------------------------------------------------------------------------- observe


def test_observe_alone_and_together(lived: Lived, tmp_path: Path) -> None:
    """Moved by hand after the run: the gatherer and one friend side by side, the other
    friend off on its own; the loner never left its corner."""
    db = tmp_path / "world.db"
    with sqlite3.connect(lived.db) as original, sqlite3.connect(db) as copy:
        original.backup(copy)
    first, second = lived.friends
    conn = sqlite3.connect(db)
    gatherer = Position(*conn.execute("SELECT x, y FROM agents WHERE name = ?",
                                      (lived.gatherer,)).fetchone())
    loner = Position(*conn.execute("SELECT x, y FROM agents WHERE name = ?",
                                   (lived.loner,)).fetchone())
    conn.close()
    sight = lived.config.settings.vision.radius
    aside = Position(gatherer.x + sight, gatherer.y)  # as far as one can see, and no more
    away = next(Position(x, y) for x in range(SIZE[0]) for y in range(SIZE[1])
                if min(gatherer.chebyshev(Position(x, y)), loner.chebyshev(Position(x, y)))
                > 2 * sight)
    _place(db, {first: aside, second: away})

    figures = _observe(db, lived.config)
    table = _read_only(db)
    try:
        social = reference.last_social(table)
    finally:
        table.close()
    # the world is younger than the configured window: only the ticks lived are looked at
    assert lived.config.settings.gardener.window_ticks > END
    assert figures.tick == END and figures.window == END
    by_name = {h.name: h for h in figures.agents}
    assert by_name[lived.gatherer].ticks_alone == 0
    assert by_name[first].ticks_alone == 0
    assert by_name[second].ticks_alone == END - social[second]
    assert by_name[lived.loner].ticks_alone == END  # never met anyone at all
    assert by_name[first].position == aside


@pytest.mark.parametrize("window", [None, 1, 10])
def test_observe_counts_match_the_source(lived: Lived, source, table, window) -> None:
    """With the configured window (longer than the world is old) and shorter ones."""
    args = observe_args(lived.config)
    if window is not None:
        args["window"] = window
    figures = observe(source, **args)
    window = figures.window
    since = END - window
    counts = reference.actions(table, since, END)
    asleep = reference.asleep(table, since, END)
    for health in figures.agents:
        assert (health.actions, health.failures) == counts.get(health.name, (0, 0))
        assert health.ticks_asleep == asleep[health.name]
    said = table.execute("SELECT MAX(tick) FROM conversation_turns").fetchone()[0]
    assert figures.ticks_since_conversation == END - said
    assert figures.changes == sum(1 for e in reference.events(table) if since <= e["tick"] < END
                                  and e["type"] in LASTING_CHANGE_KINDS)
    social, sight = reference.last_social(table), args["sight"]
    for health in figures.agents:
        seen = any(other.name != health.name and other.position.chebyshev(health.position)
                   <= sight for other in figures.agents)
        assert health.ticks_alone == (0 if seen else END - social.get(health.name, 0))
    spots = [h.position for h in figures.agents]
    near = _units_near(table, lived.config, spots, args["look_radius"], END)
    assert {h.position: h.resources_near for h in figures.agents} == near


def test_resources_fall_where_the_gatherer_gathered(lived: Lived, source) -> None:
    before = lived.before.agent(lived.gatherer)
    after = _observe(lived.db, lived.config).agent(lived.gatherer)
    assert before is not None and after is not None
    assert before.position == after.position  # it never moved
    assert after.resources_near < before.resources_near
    assert before.actions == 0 and after.actions == 2 * (END - GATHER_FROM)
    args = gathering_args(lived.config)
    here = source.gatherable_units_near([after.position], 0, args["capacity"],
                                        args["gatherable"], regrow_ticks=args["regrow_ticks"],
                                        tick=END)
    assert here == {after.position: 0}  # its own cell, bare


def test_observe_refuses_a_window_of_nothing(lived: Lived, source) -> None:
    with pytest.raises(ValueError, match="window"):
        observe(source, window=0, look_radius=1, sight=1, gatherable=(), capacity=5)


def test_observe_args_come_from_the_config(lived: Lived) -> None:
    args = observe_args(lived.config)
    assert args["gatherable"] == {"sand", "grass", "forest", "stone"}
    assert args["capacity"] == lived.config.settings.gathering.cell_capacity
    assert args["sight"] == lived.config.settings.vision.radius
    assert args["window"] == lived.config.settings.gardener.window_ticks


def test_a_social_horizon_reads_only_recent_history(lived: Lived, source, table) -> None:
    """Past the horizon, how long someone has been alone is not told apart: the read
    stops there, and ticks_alone says at most the horizon."""
    everything = source.last_social_ticks()
    recent = source.last_social_ticks(END - 10)
    assert recent == {who: tick for who, tick in everything.items() if tick >= END - 10}
    args = {**observe_args(lived.config), "alone_horizon": 10}
    figures = observe(source, **args)
    loner = figures.agent(lived.loner)
    assert loner is not None and loner.ticks_alone == 10  # never met anyone: capped
    unbounded = observe(source, **{**args, "alone_horizon": None}).agent(lived.loner)
    assert unbounded is not None and unbounded.ticks_alone == END
