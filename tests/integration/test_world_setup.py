"""Creating a new world on a real SQLite file: plan, write, read back, look at it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from config import HearthConfig, load_config
from config.settings import TimeSettings
from core.agent import Agent
from core.raster import TerrainRaster
from core.terrain import TERRAIN_CODE, TERRAIN_ORDER, Terrain, Weather
from core.types import AgentName, Position
from core.world import Cell, WorldState
from services.status import world_status
from services.world_setup import (
    MATERIAL_CELLS,
    MATERIAL_RADIUS,
    NewWorld,
    WorldSetupError,
    create_world,
    pick_seed,
    plan_world,
    status_text,
    write_world,
)
from services.world_view import terrain_codes, world_picture
from storage import Storage
from storage.homes import STATUS_FILE, AgentHomes

SIZE = (96, 96)
SEED = 1234
GRASS = TERRAIN_CODE[Terrain.GRASS]
STONE = TERRAIN_CODE[Terrain.STONE]


@pytest.fixture(scope="module")
def config() -> HearthConfig:
    return load_config(None)


@pytest.fixture
def plan(config: HearthConfig) -> NewWorld:
    return plan_world(config, seed=SEED, size=SIZE)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
async def storage(data_dir: Path) -> AsyncIterator[Storage]:
    async with Storage(data_dir) as store:
        yield store


# --- plan_world -------------------------------------------------------------------


def test_plan_world_writes_nothing(
    config: HearthConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    world = plan_world(config, seed=SEED, size=SIZE)
    assert world.agents
    assert list(tmp_path.iterdir()) == []


def test_plan_world_has_the_asked_size_and_seed(plan: NewWorld) -> None:
    assert plan.state == WorldState(96, 96, SEED)
    assert plan.state.tick == 0
    assert plan.terrain.codes.shape == (96, 96)
    assert plan.terrain.codes.dtype == np.uint8
    assert int(plan.terrain.codes.max()) < len(TERRAIN_ORDER)


def test_plan_world_houses_the_configured_agents(plan: NewWorld, config: HearthConfig) -> None:
    assert [a.name for a in plan.agents] == [a.name for a in config.agents.agents]
    assert [a.model_id for a in plan.agents] == [a.model_id for a in config.agents.agents]
    assert plan.generated_agents == ()


def test_agents_stand_on_grass_inside_the_map_apart(plan: NewWorld) -> None:
    codes = plan.terrain.codes
    positions = [a.position for a in plan.agents]
    assert len(set(positions)) == len(positions)
    for pos in positions:
        assert 0 <= pos.x < 96 and 0 <= pos.y < 96
        assert codes[pos.y, pos.x] == GRASS


def test_agents_do_not_start_on_landmarks(plan: NewWorld) -> None:
    marks = {m.position for m in plan.landmarks}
    assert not marks & {a.position for a in plan.agents}


def test_landmarks_stand_on_their_terrain(plan: NewWorld, config: HearthConfig) -> None:
    specs = config.landmarks.landmarks
    codes = plan.terrain.codes
    assert plan.landmarks, "a 96x96 world should have room for some landmarks"
    for mark in plan.landmarks:
        assert mark.kind in specs
        assert 0 <= mark.position.x < 96 and 0 <= mark.position.y < 96
        allowed = {TERRAIN_CODE[Terrain(t)] for t in specs[mark.kind].terrains}
        assert codes[mark.position.y, mark.position.x] in allowed, mark
    positions = [m.position for m in plan.landmarks]
    assert len(set(positions)) == len(positions)


def test_landmark_counts_stay_within_config(plan: NewWorld, config: HearthConfig) -> None:
    specs = config.landmarks.landmarks
    for kind, spec in specs.items():
        assert sum(m.kind == kind for m in plan.landmarks) <= spec.count


def test_same_seed_gives_the_same_plan(config: HearthConfig, plan: NewWorld) -> None:
    again = plan_world(config, seed=SEED, size=SIZE)
    assert again.terrain.codes.tobytes() == plan.terrain.codes.tobytes()
    assert [a.position for a in again.agents] == [a.position for a in plan.agents]
    assert again.agents == plan.agents
    assert again.landmarks == plan.landmarks
    assert again.state == plan.state


def test_another_seed_gives_another_world(config: HearthConfig, plan: NewWorld) -> None:
    other = plan_world(config, seed=SEED + 1, size=SIZE)
    assert other.terrain.codes.tobytes() != plan.terrain.codes.tobytes()
    assert other.state.seed == SEED + 1


def test_more_agents_than_configured_are_generated(config: HearthConfig) -> None:
    world = plan_world(config, seed=SEED, size=SIZE, agent_count=5)
    assert len(world.agents) == 5
    assert len(world.generated_agents) == 2
    assert list(world.generated_agents) == [a.name for a in world.agents[3:]]
    positions = {a.position for a in world.agents}
    assert len(positions) == 5
    for pos in positions:
        assert world.terrain.codes[pos.y, pos.x] == GRASS


def test_fewer_agents_than_configured(config: HearthConfig) -> None:
    world = plan_world(config, seed=SEED, size=SIZE, agent_count=1)
    assert [a.name for a in world.agents] == [config.agents.agents[0].name]


@pytest.mark.parametrize("count", [0, -2])
def test_no_agents_is_refused(config: HearthConfig, count: int) -> None:
    with pytest.raises(WorldSetupError, match="at least one agent"):
        plan_world(config, seed=SEED, size=SIZE, agent_count=count)


def test_agents_that_cannot_fit_are_refused(config: HearthConfig) -> None:
    with pytest.raises(WorldSetupError) as info:
        plan_world(config, seed=SEED, size=(12, 12), agent_count=400)
    message = str(info.value)
    assert "400 agents" in message
    assert "\n" not in message


def test_agents_that_cannot_fit_are_named_once(config: HearthConfig) -> None:
    with pytest.raises(WorldSetupError) as info:
        plan_world(config, seed=SEED, size=(12, 12), agent_count=400)
    assert str(info.value).count("400 agents") == 1


def test_progress_is_reported(config: HearthConfig) -> None:
    calls: list[tuple[str, float]] = []
    plan_world(config, seed=SEED, size=SIZE, progress=lambda s, f: calls.append((s, f)))
    assert calls
    assert ("placing landmarks and agents", 1.0) in calls


# --- pick_seed and status_text -------------------------------------------------------


def test_pick_seed_prefers_the_flag_then_the_config() -> None:
    assert pick_seed(5, 9) == 9
    assert pick_seed(5, None) == 5
    assert pick_seed(None, 0) == 0
    assert pick_seed(0, None) == 0


def test_pick_seed_without_any_is_a_fresh_seed() -> None:
    seeds = {pick_seed(None, None) for _ in range(20)}
    assert all(isinstance(s, int) and 0 <= s < 2**31 for s in seeds)
    assert len(seeds) > 1


def test_status_text(config: HearthConfig) -> None:
    agent = Agent(AgentName("Ember"), "m", "p", Position(4, 7))
    text = status_text(agent, WorldState(20, 20, 1), config)
    assert text.splitlines() == [
        "# Written by Hearth; changes here are overwritten.",
        "name: Ember",
        "tick: 0",
        "time: day 1, 08:00 (morning)",
        "weather: clear",
        "position: (4, 7)",
        "asleep: no",
    ]
    assert text.endswith("\n")
    assert "inventory" not in text


def test_status_text_later_and_asleep(config: HearthConfig) -> None:
    agent = Agent(AgentName("Sage"), "m", "p", Position(0, 1), is_sleeping=True)
    text = status_text(agent, WorldState(20, 20, 1, tick=16, weather=Weather.RAINY), config)
    assert "tick: 16\n" in text
    assert "time: day 2, 00:00 (night)\n" in text
    assert "weather: rainy\n" in text
    assert "asleep: yes\n" in text


# --- write_world --------------------------------------------------------------------


async def test_write_world_then_read_back(
    plan: NewWorld, config: HearthConfig, data_dir: Path
) -> None:
    async with Storage(data_dir) as store:
        await write_world(store, plan, config)
    # A fresh connection proves it reached the file.
    async with Storage(data_dir, create=False) as store:
        assert await store.world.get_world_state() == plan.state
        raster = await store.world.get_terrain()
        assert raster is not None
        assert (raster.width, raster.height) == (96, 96)
        assert raster.codes == plan.terrain.codes.tobytes()
        assert await store.world.get_landmarks() == list(plan.landmarks)
        agents = await store.agents.get_all_agents()
        assert {a.name: a.position for a in agents} == {a.name: a.position for a in plan.agents}
        stored = {a.name: a for a in agents}
        for agent in plan.agents:
            assert stored[agent.name].model_id == agent.model_id
            assert stored[agent.name].personality == agent.personality
            assert not stored[agent.name].is_sleeping
        assert await store.world.count_cells() == 0


async def test_write_world_records_stage_times(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    assert {"terrain", "placement", "database", "homes"} <= set(plan.seconds)
    assert all(v >= 0 for v in plan.seconds.values())


async def test_write_world_makes_homes_with_status(
    plan: NewWorld, config: HearthConfig, storage: Storage, tmp_path: Path
) -> None:
    homes = AgentHomes(tmp_path / "agents")
    await write_world(storage, plan, config, homes)
    assert sorted(p.name for p in homes.root.iterdir()) == sorted(a.name for a in plan.agents)
    for agent in plan.agents:
        home = homes.path(agent.name)
        for name in ("journal.md", "notes.md", "discoveries.md"):
            assert (home / name).is_file()
        status = (home / STATUS_FILE).read_text(encoding="utf-8")
        assert f"name: {agent.name}\n" in status
        assert f"position: ({agent.position.x}, {agent.position.y})\n" in status
        assert "time: day 1, 08:00 (morning)\n" in status
        assert status == status_text(agent, plan.state, config)


async def test_write_world_keeps_an_existing_journal(
    plan: NewWorld, config: HearthConfig, storage: Storage, tmp_path: Path
) -> None:
    homes = AgentHomes(tmp_path / "agents")
    name = plan.agents[0].name
    homes.path(name).mkdir(parents=True)
    (homes.path(name) / "journal.md").write_text("from before", encoding="utf-8")
    await write_world(storage, plan, config, homes)
    assert (homes.path(name) / "journal.md").read_text(encoding="utf-8") == "from before"


async def test_write_world_without_homes_makes_no_folders(
    plan: NewWorld, config: HearthConfig, storage: Storage, tmp_path: Path
) -> None:
    await write_world(storage, plan, config)
    assert [p.name for p in tmp_path.iterdir()] == ["data"]


async def _snapshot(store: Storage) -> tuple:
    raster = await store.world.get_terrain()
    agents = await store.agents.get_all_agents()
    return (
        await store.world.get_world_state(),
        raster.codes if raster else None,
        await store.world.get_landmarks(),
        [(a.name, a.model_id, a.position) for a in agents],
    )


async def test_write_world_into_a_database_with_a_world_is_refused(
    plan: NewWorld, config: HearthConfig, storage: Storage, tmp_path: Path
) -> None:
    await write_world(storage, plan, config)
    before = await _snapshot(storage)
    other = plan_world(config, seed=SEED + 1, size=(64, 48), agent_count=4)
    homes = AgentHomes(tmp_path / "agents")

    with pytest.raises(WorldSetupError, match="already holds a world") as info:
        await write_world(storage, other, config, homes)

    assert str(storage.db_path) in str(info.value)
    assert await _snapshot(storage) == before
    assert not homes.root.exists()


async def test_a_world_state_alone_counts_as_a_world(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await storage.world.save_world_state(WorldState(10, 10, 3))
    with pytest.raises(WorldSetupError):
        await write_world(storage, plan, config)
    assert await storage.world.get_terrain() is None
    assert await storage.agents.get_all_agents() == []
    assert await storage.world.get_landmarks() == []


async def test_create_world_plans_and_writes(
    config: HearthConfig, storage: Storage, plan: NewWorld, tmp_path: Path
) -> None:
    homes = AgentHomes(tmp_path / "agents")
    world = await create_world(storage, config, homes=homes, seed=SEED, size=SIZE)
    assert world.terrain.codes.tobytes() == plan.terrain.codes.tobytes()
    assert world.agents == plan.agents
    assert await storage.world.get_world_state() == plan.state
    assert all(homes.exists(a.name) for a in plan.agents)


async def test_create_world_refusal_leaves_the_database_empty(
    config: HearthConfig, storage: Storage
) -> None:
    with pytest.raises(WorldSetupError):
        await create_world(storage, config, seed=SEED, size=(12, 12), agent_count=400)
    assert await storage.world.get_world_state() is None
    assert await storage.world.get_terrain() is None
    assert await storage.agents.count_agents() == 0


def test_a_refused_plan_leaves_no_file(
    config: HearthConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WorldSetupError):
        plan_world(config, seed=SEED, size=(12, 12), agent_count=400)
    assert os.listdir(tmp_path) == []


# --- status and the picture ----------------------------------------------------------


async def test_world_status_after_writing(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    status = await world_status(storage, config.settings.time)
    assert status.initialised
    assert (status.width, status.height, status.seed, status.tick) == (96, 96, SEED, 0)
    assert set(status.terrain_shares) == {t.value for t in Terrain}
    assert sum(status.terrain_shares.values()) == pytest.approx(1.0, abs=1e-3)
    codes = plan.terrain.codes
    for terrain in Terrain:
        share = float((codes == TERRAIN_CODE[terrain]).mean())
        assert status.terrain_shares[terrain.value] == pytest.approx(share, abs=1e-4)
    assert status.counts["landmarks"] == len(plan.landmarks)
    assert len(status.landmarks) == len(plan.landmarks)
    assert status.counts["agents"] == len(plan.agents)
    assert status.counts["stored_cells"] == 0
    assert {a.name for a in status.agents} == {a.name for a in plan.agents}
    assert all(a.state == "awake" for a in status.agents)
    assert isinstance(status.time_of_day, str)
    assert status.time_of_day == "day 1, 08:00 (morning)"
    assert status.db_bytes > 0


async def test_world_status_uses_the_given_clock(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    status = await world_status(storage, TimeSettings(ticks_per_day=24, start_hour=20))
    assert status.time_of_day == "day 1, 20:00 (evening)"


async def test_world_status_of_an_empty_database(storage: Storage) -> None:
    status = await world_status(storage)
    assert not status.initialised
    assert status.time_of_day is None
    assert status.terrain_shares == {}
    assert status.agents == []


async def test_world_picture_matches_the_plan(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    picture = await world_picture(storage)
    assert picture is not None
    assert picture.codes.shape == (96, 96)
    assert picture.codes.dtype == np.uint8
    assert np.array_equal(picture.codes, plan.terrain.codes)
    assert dict(picture.agents) == {a.name: a.position for a in plan.agents}
    assert picture.landmarks == plan.landmarks


async def test_world_picture_of_an_empty_database(storage: Storage) -> None:
    assert await world_picture(storage) is None


async def test_terrain_codes_lay_changed_cells_over_the_raster(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    where = plan.agents[0].position
    assert plan.terrain.codes[where.y, where.x] != STONE
    await storage.world.set_cell(where, Cell(Terrain.STONE))

    codes = await terrain_codes(storage, 96, 96)

    assert codes[where.y, where.x] == STONE
    expected = plan.terrain.codes.copy()
    expected[where.y, where.x] = STONE
    assert np.array_equal(codes, expected)
    picture = await world_picture(storage)
    assert picture is not None and np.array_equal(picture.codes, expected)
    status = await world_status(storage, config.settings.time)
    assert status.counts["stored_cells"] == 1


async def test_terrain_codes_ignore_cells_off_the_map(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    await storage.world.set_cell(Position(500, 500), Cell(Terrain.STONE))
    codes = await terrain_codes(storage, 96, 96)
    assert np.array_equal(codes, plan.terrain.codes)


async def test_terrain_codes_do_not_change_the_stored_raster(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    codes = await terrain_codes(storage, 96, 96)
    codes[:] = STONE  # the result is a writable copy
    raster = await storage.world.get_terrain()
    assert raster is not None and raster.codes == plan.terrain.codes.tobytes()


async def test_a_cell_changed_to_grass_shows_as_grass(
    plan: NewWorld, config: HearthConfig, storage: Storage
) -> None:
    await write_world(storage, plan, config)
    ys, xs = np.nonzero(plan.terrain.codes != GRASS)
    where = Position(int(xs[0]), int(ys[0]))
    await storage.world.set_cell(where, Cell(Terrain.GRASS))
    codes = await terrain_codes(storage, 96, 96)
    assert codes[where.y, where.x] == GRASS


async def test_a_world_without_a_raster_is_all_grass(storage: Storage) -> None:
    await storage.world.save_world_state(WorldState(20, 10, 7))
    picture = await world_picture(storage)
    assert picture is not None
    assert picture.codes.shape == (10, 20)
    assert (picture.codes == GRASS).all()
    assert picture.agents == ()
    assert picture.landmarks == ()
    status = await world_status(storage)
    assert status.terrain_shares["grass"] == 1.0
    assert sum(status.terrain_shares.values()) == pytest.approx(1.0)


async def test_a_world_without_a_raster_still_shows_changed_cells(storage: Storage) -> None:
    await storage.world.save_world_state(WorldState(20, 10, 7))
    await storage.world.set_cell(Position(3, 4), Cell(Terrain.WATER))
    codes = await terrain_codes(storage, 20, 10)
    assert codes[4, 3] == TERRAIN_CODE[Terrain.WATER]
    assert int((codes != GRASS).sum()) == 1


async def test_a_raster_of_another_size_is_ignored(storage: Storage) -> None:
    await storage.world.save_world_state(WorldState(20, 10, 7))
    await storage.world.save_terrain(TerrainRaster(5, 5, bytes([STONE]) * 25))
    codes = await terrain_codes(storage, 20, 10)
    assert codes.shape == (10, 20)
    assert (codes == GRASS).all()


def _material_near(world: NewWorld, x: int, y: int, radius: int) -> int:
    """Forest and stone cells (the terrain whose harvest is a wall) around (x, y)."""
    codes = world.terrain.codes[max(0, y - radius): y + radius + 1,
                                max(0, x - radius): x + radius + 1]
    return int(np.isin(codes, [TERRAIN_CODE[Terrain.FOREST], TERRAIN_CODE[Terrain.STONE]]).sum())


@pytest.mark.parametrize("seed", [3, 11, 27])
def test_agents_wake_on_the_horizon_of_the_middle_landmark_with_wood_or_stone_near(
    config: HearthConfig, seed: int
) -> None:
    world = plan_world(config, seed=seed, size=(300, 300))
    by_middle = sorted(world.landmarks, key=lambda m: (abs(m.position.x - 150)
                                                       + abs(m.position.y - 150), m.name))
    settled = [m for m in by_middle
               if _material_near(world, m.position.x, m.position.y, MATERIAL_RADIUS)
               >= MATERIAL_CELLS]
    middle = (settled or by_middle)[0]
    horizon = config.settings.scheduling.horizon
    for agent in world.agents:
        gap = max(abs(agent.position.x - middle.position.x),
                  abs(agent.position.y - middle.position.y))
        assert gap <= horizon, f"{agent.name} wakes {gap} cells from {middle.name}"


def test_a_landmark_in_bare_grassland_is_passed_over_for_one_with_wood_near(
    config: HearthConfig,
) -> None:
    """Seed 27 of `bench life` at the default size: the standing stone nearest the middle
    stands in grassland with no wood or stone within 20 cells, and agents settled there
    never built; they now wake by a landmark that has some."""
    world = plan_world(config, seed=27)
    cx, cy = world.state.width // 2, world.state.height // 2
    nearest = min(world.landmarks, key=lambda m: (abs(m.position.x - cx)
                                                  + abs(m.position.y - cy), m.name))
    assert _material_near(world, nearest.position.x, nearest.position.y, MATERIAL_RADIUS) == 0
    horizon = config.settings.scheduling.horizon
    chosen = [m for m in world.landmarks
              if all(max(abs(a.position.x - m.position.x), abs(a.position.y - m.position.y))
                     <= horizon for a in world.agents)
              and _material_near(world, m.position.x, m.position.y, MATERIAL_RADIUS)
              >= MATERIAL_CELLS]
    assert chosen, "no landmark with wood or stone near has every agent on its horizon"
