"""The perception text is lossless: an independent reader (`perception_reader.py`, which
shares no code with the builder) rebuilds the window from the words alone, and what
it reads is compared with the world's own state, read straight from the world and
simulation objects.

Random small worlds: random ground, walls and doors (and a walled hut with a door
that agents stand in), agents asleep, talking or neither, signs, piles and items,
landmarks, named places, by day and by night, at the world's edges and corners.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.perception import PerceptionBuilder
from config import load_config
from core.agent import Agent
from core.landmarks import Landmark
from core.objects import Item, PlacedItem, Sign
from core.places import NamedPlace
from core.structures import Structure
from core.terrain import TERRAIN_CODE, Terrain
from core.types import CARDINALS, AgentName, Direction, Position
from core.world import WorldState
from services.agent_service import AgentService
from services.simulation import Simulation, build_simulation
from services.world_service import Clock, TerrainRules, WorldService
from tests.unit.adapters.perception_reader import Reading, Unreadable, read

CONFIG = load_config(None)
RULES = TerrainRules.from_traits(CONFIG.terrain.terrains)
NIGHT = 14
"""The default clock starts at 08:00, 24 ticks a day: tick 14 is 22:00 (night)."""
WINDOWS = 10_000
SIDE = {Direction.NORTH: "north", Direction.EAST: "east", Direction.SOUTH: "south",
        Direction.WEST: "west"}


# ---------------------------------------------------------------------- random worlds


def random_world(rng: random.Random) -> tuple[Simulation, int]:
    """A small lived-in world and the horizon to build with."""
    width, height = rng.randint(2, 14), rng.randint(2, 14)
    kinds = [TERRAIN_CODE[t] for t in Terrain]
    codes = np.array([[rng.choice(kinds) if rng.random() < 0.5 else TERRAIN_CODE[Terrain.GRASS]
                       for _ in range(width)] for _ in range(height)], np.uint8)
    marks = tuple(
        Landmark("rock", f"Stone {i}", "a stone",
                 Position(rng.randrange(width), rng.randrange(height)))
        for i in range(rng.randint(0, 12))
    )
    world = WorldService(WorldState(width, height, 1), codes, RULES,
                         clock=Clock(vision_radius=rng.choice((1, 2, 3, 3, 4, 5))),
                         landmarks=marks)
    for _ in range(rng.randint(0, width * height // 2)):  # walls and doors
        pos = Position(rng.randrange(width), rng.randrange(height))
        way = rng.choice(CARDINALS)
        if world.edge_inside(pos, way) and not world.has_wall(pos, way):
            world.place_wall(pos, way)
            if rng.random() < 0.3:
                world.place_door(pos, way)
    huts = []
    if width >= 3 and height >= 3 and rng.random() < 0.4:  # a walled hut with a door
        x, y = rng.randrange(1, width - 1), rng.randrange(1, height - 1)
        hut = Position(x, y)
        for way in CARDINALS:
            if not world.has_wall(hut, way):
                world.place_wall(hut, way)
        world.place_door(hut, rng.choice(CARDINALS)) if not any(
            world.has_door(hut, way) for way in CARDINALS) else None
        world.add_structure(Structure("hut", frozenset({hut}), None, 0,
                                      rng.choice((None, "the Hut"))))
        huts.append(hut)
    names = [AgentName(f"Agent{i}") for i in range(rng.randint(1, 30 if rng.random() < 0.1
                                                                 else 7))]
    people = [Agent(n, "m", "p", huts[0] if huts and i == 0 else
                    Position(rng.randrange(width), rng.randrange(height)))
              for i, n in enumerate(names)]
    agents = AgentService(world, people)
    sim = build_simulation(world, CONFIG, agents, seed=rng.randrange(1 << 30))
    for name in names:
        if rng.random() < 0.2:
            agents.set_sleeping(name, True)
    if len(names) > 1 and rng.random() < 0.5 and agents.can_see(names[0], names[1]):
        sim.conversations.create_invite(names[0], names[1], "public", 0)
        sim.conversations.accept_invite(names[1], 0)
    for i in range(rng.randint(0, 10)):
        pos = Position(rng.randrange(width), rng.randrange(height))
        roll = rng.random()
        if roll < 0.4:
            world.add_object(Sign(f"s{i}", pos, names[0], 0, "hello"))
        elif roll < 0.7:
            world.add_object(PlacedItem(f"p{i}", pos, None, 0, resource="wood",
                                        quantity=rng.randint(1, 9)))
        else:
            world.add_object(PlacedItem(f"p{i}", pos, None, 0,
                                        item=Item(f"i{i}", "carved_bowl")))
    for i in range(rng.randint(0, 30 if rng.random() < 0.1 else 3)):
        pos = Position(rng.randrange(width), rng.randrange(height))
        world.name_place(NamedPlace(f"Place {i}: the {rng.choice(('ford', 'hut'))}", pos,
                                    names[0], 0))
    return sim, rng.choice((0, 3, 12, 40))


def windows(seed: int, count: int) -> Iterator[tuple[Simulation, str, int, object]]:
    """(sim, agent, horizon, perception) for `count` random windows, half by night."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        sim, horizon = random_world(rng)
        builder = PerceptionBuilder(sim.world, sim.agents, sim.conversations, sim.gathering,
                                    horizon=horizon)
        for tick in (0, NIGHT):
            if tick:
                sim.world.set_tick(tick)
            for agent in sim.agents.get_all_agents():
                yield sim, agent.name, horizon, builder.build(agent.name, tick)
                made += 1
                if made == count:
                    return


# ---------------------------------------------------------------------- the world's truth


def differences(sim: Simulation, name: str, horizon: int, seen: Reading) -> list[str]:
    """Where what was read differs from the world's own state."""
    world, agents = sim.world, sim.agents
    me = agents.require(name).position
    r = world.vision_radius()
    xs = range(max(0, me.x - r), min(world.width, me.x + r + 1))
    ys = range(max(0, me.y - r), min(world.height, me.y + r + 1))
    diffs = []

    def check(what: str, got: object, want: object) -> None:
        if got != want:
            diffs.append(f"{what}: read {got!r}, the world has {want!r}")

    check("position", seen.me, (me.x, me.y))
    check("ground", seen.ground, world.terrain_at(me).value)
    check("night", seen.night, world.is_night)
    check("radius", seen.radius, r)
    check("columns", seen.xs, xs)
    check("rows", seen.ys, ys)
    check("edges", seen.edges, {side for side, out in (
        ("north", me.y - r < 0), ("east", me.x + r >= world.width),
        ("south", me.y + r >= world.height), ("west", me.x - r < 0)) if out})
    check("terrain", seen.terrain,
          {(x, y): world.terrain_at(Position(x, y)).value for y in ys for x in xs})
    check("walls", seen.walls, world_edges(sim, name))
    others = {}
    for other in agents.get_all_agents():
        there = other.position
        if other.name != name and there.x in xs and there.y in ys:
            state = "asleep" if other.is_sleeping else (
                "talking" if sim.conversations.is_talking(other.name) else "")
            others[str(other.name)] = ((there.x, there.y), state)
    check("agents", seen.agents, others)
    reach = max(r, horizon)
    near, far = {}, {}
    for mark in world.landmarks:
        there = mark.position
        if max(abs(there.x - me.x), abs(there.y - me.y)) <= reach:
            (near if there.x in xs and there.y in ys else far)[mark.name] = (there.x, there.y)
    check("landmarks in view", seen.landmarks, near)
    check("landmarks beyond", seen.far_landmarks, far)
    check("places", Counter(seen.places), Counter(
        (p.name, (p.position.x, p.position.y)) for p in world.all_places()
        if p.position.x in xs and p.position.y in ys))
    things = Counter()
    for obj in world.all_objects():
        if obj.position.x in xs and obj.position.y in ys:
            if isinstance(obj, Sign):
                phrase = "a sign"
            elif obj.resource:
                phrase = f"a pile of {obj.quantity} {obj.resource}"
            else:
                phrase = f"a {obj.item.item_type}"
            things[(phrase, (obj.position.x, obj.position.y))] += 1
    check("objects", Counter(seen.objects), things)
    steps = {}
    for way in CARDINALS:
        there = me.step(way)
        if not world.in_bounds(there):
            steps[SIDE[way]] = ("edge", False, "")
            continue
        edge = ""
        if world.has_wall(me, way):
            edge = "door" if world.has_door(me, way) else "wall"
        steps[SIDE[way]] = (world.terrain_at(there).value, world.step_refusal(me, way) == 0,
                            edge)
    check("steps", seen.steps, steps)
    ground = world.terrain_at(me)
    in_view = {world.terrain_at(Position(x, y)).value for y in ys for x in xs} - {ground.value}
    check("kinds of ground listed", set(seen.nearest), in_view)
    for kind, (x, y) in seen.nearest.items():
        check(f"ground of the nearest {kind}", world.terrain_at(Position(x, y)).value, kind)
        closest = min(abs(i - me.x) + abs(j - me.y) for j in ys for i in xs
                      if world.terrain_at(Position(i, j)).value == kind)
        check(f"distance of the nearest {kind}", abs(x - me.x) + abs(y - me.y), closest)
    check("shelter", seen.shelter, world.structure_at(me) is not None)
    return diffs


def world_edges(sim: Simulation, name: str) -> dict[tuple[int, int, str], str]:
    """(x, y, "e" or "s") -> "wall" or "door" for every walled edge between two cells of
    the agent's window, as the world holds them (asked edge by edge)."""
    world = sim.world
    me = sim.agents.require(name).position
    r = world.vision_radius()
    xs = range(max(0, me.x - r), min(world.width, me.x + r + 1))
    ys = range(max(0, me.y - r), min(world.height, me.y + r + 1))
    walls = {}
    for y in ys:
        for x in xs:
            for way, key, inside in ((Direction.EAST, "e", x + 1 in xs),
                                     (Direction.SOUTH, "s", y + 1 in ys)):
                if inside and world.has_wall(Position(x, y), way):
                    walls[(x, y, key)] = "door" if world.has_door(Position(x, y), way) else "wall"
    return walls


def structured_edges(sim: Simulation, name: str, p) -> list[str]:
    """Where the structured walls and doors (what the offline mind reads) differ from the
    world's, or are not sorted tuples."""
    told = {**{edge: "wall" for edge in p.walls}, **{edge: "door" for edge in p.doors}}
    diffs = []
    if len(told) != len(p.walls) + len(p.doors):
        diffs.append(f"an edge listed twice: {p.walls!r} / {p.doors!r}")
    if list(p.walls) != sorted(p.walls) or list(p.doors) != sorted(p.doors):
        diffs.append(f"edges not sorted: {p.walls!r} / {p.doors!r}")
    if not isinstance(p.walls, tuple) or not isinstance(p.doors, tuple):
        diffs.append("walls and doors are not tuples")
    want = world_edges(sim, name)
    if told != want:
        diffs.append(f"structured walls/doors: {told!r}, the world has {want!r}")
    return diffs


def same_facts(p, seen: Reading) -> list[str]:
    """Where the structured Perception (what the offline mind reads) says otherwise than
    the text."""
    told = {
        "terrain": {(c.position.x, c.position.y): c.terrain.value for c in p.cells},
        "passable": {(c.position.x, c.position.y): c.passable for c in p.cells
                     if (c.position.x, c.position.y) in {
                         (seen.me[0] + dx, seen.me[1] + dy)
                         for dx, dy in ((0, -1), (1, 0), (0, 1), (-1, 0))}},
        "agents": {str(a.name): ((a.position.x, a.position.y),
                                 "asleep" if a.is_sleeping else
                                 "talking" if a.in_conversation else "") for a in p.agents},
        "landmarks": {m.name: (m.position.x, m.position.y) for m in p.landmarks},
        "places": Counter((q.name, (q.position.x, q.position.y)) for q in p.places),
        "objects": Counter((o.kind, (o.position.x, o.position.y)) for o in p.objects),
        "ground": p.standing_on.value, "shelter": p.inside_structure,
        "walls": {**{edge: "wall" for edge in p.walls}, **{edge: "door" for edge in p.doors}},
    }
    read_as = {
        "terrain": seen.terrain,
        "passable": {(seen.me[0] + dx, seen.me[1] + dy): can
                     for side, (_, can, edge) in seen.steps.items() if edge != "wall"
                     for dx, dy in [{"north": (0, -1), "east": (1, 0), "south": (0, 1),
                                     "west": (-1, 0)}[side]] if _ != "edge"},
        "agents": seen.agents,
        "landmarks": {**seen.landmarks, **seen.far_landmarks},
        "places": Counter(seen.places),
        "objects": Counter(("sign" if what == "a sign" else "placed_item", pos)
                           for what, pos in seen.objects),
        "ground": seen.ground, "shelter": seen.shelter,
        "walls": seen.walls,
    }
    walled = {(seen.me[0] + dx, seen.me[1] + dy) for side, (_, _, edge) in seen.steps.items()
              if edge == "wall" for dx, dy in [{"north": (0, -1), "east": (1, 0),
                                                "south": (0, 1), "west": (-1, 0)}[side]]}
    told["passable"] = {k: v for k, v in told["passable"].items() if k not in walled}
    return [f"structure and text differ on {k}: {told[k]!r} / {read_as[k]!r}"
            for k in told if told[k] != read_as[k]]


COVERED = ("night", "corner", "edge", "walls", "doors", "shelter", "agents", "objects",
           "landmarks", "far landmarks", "places", "hidden marks")


def compare(seed: int, count: int) -> tuple[int, int, list[str], Counter[str]]:
    """(windows checked, windows mismatched, a few examples, windows of each kind)."""
    checked = mismatched = 0
    examples: list[str] = []
    kinds: Counter[str] = Counter()
    for sim, name, horizon, perception in windows(seed, count):
        text = perception.as_text()
        try:
            seen = read(text)
            diffs = (differences(sim, name, horizon, seen) + same_facts(perception, seen)
                     + structured_edges(sim, name, perception))
        except Unreadable as why:
            diffs = [f"unreadable: {why}"]
        else:
            marked = [p for p in (*[a[0] for a in seen.agents.values()], *seen.landmarks.values(),
                                  *[p for _, p in seen.places], *[p for _, p in seen.objects])]
            kinds.update(kind for kind, present in (
                ("night", seen.night), ("corner", len(seen.edges) >= 2),
                ("edge", len(seen.edges) == 1),
                ("walls", "wall" in seen.walls.values()),
                ("doors", "door" in seen.walls.values()), ("shelter", seen.shelter),
                ("agents", seen.agents), ("objects", seen.objects),
                ("landmarks", seen.landmarks), ("far landmarks", seen.far_landmarks),
                ("places", seen.places),
                ("hidden marks", len(marked) > len(set(marked)))) if present)
        checked += 1
        if diffs:
            mismatched += 1
            if len(examples) < 3:
                examples.append(f"{name}: {diffs}\n{text}")
    return checked, mismatched, examples, kinds


def test_the_reader_rebuilds_every_window_from_the_text_alone():
    checked, mismatched, examples, kinds = compare(seed=27, count=WINDOWS)
    assert checked == WINDOWS
    assert mismatched == 0, "\n\n".join(examples)
    assert all(kinds[kind] >= 100 for kind in COVERED), kinds  # every case, many times


@pytest.mark.slow
def test_the_reader_rebuilds_a_hundred_thousand_windows():
    checked, mismatched, examples, _ = compare(seed=2027, count=10 * WINDOWS)
    assert (checked, mismatched) == (10 * WINDOWS, 0), "\n\n".join(examples)


def _busy_window() -> tuple[Simulation, str, int, str]:
    """A window with walls, another agent and something on the ground."""
    for sim, name, horizon, perception in windows(seed=5, count=2000):
        text = perception.as_text()
        if "│" in text and "\nA " in text and "📜" in text:
            return sim, name, horizon, text
    raise AssertionError("no busy window among 2,000")


def _caught(sim: Simulation, name: str, horizon: int, text: str) -> bool:
    try:
        return differences(sim, name, horizon, read(text)) != []
    except Unreadable:
        return True


def test_the_comparison_catches_a_text_with_one_fact_changed():
    sim, name, horizon, text = _busy_window()
    assert differences(sim, name, horizon, read(text)) == []
    me = sim.agents.require(name).position
    first_map_line = text.split("Map, north")[1].split("\n")[1]
    mutations = {
        "the position": text.replace(f"You are at ({me.x}, {me.y})",
                                     f"You are at ({me.x + 1}, {me.y})"),
        "a wall": text.replace("│", " ", 1),
        "an agent's mark": text.replace("\nA ", "\nB ", 1),
        "a sign's cell": text.replace("📜 a sign: ", "✨ a sign: ", 1),
        "north for south": text.replace("One step north", "One step south", 1),
        "the ground underfoot": text.replace("standing on ", "standing on not ", 1),
        "a map row": text.replace(first_map_line, first_map_line[3:] + first_map_line[:3], 1),
        "day for night": (text.replace(" by day ", " by night ") if " by day " in text
                          else text.replace(" by night ", " by day ")),
    }
    assert [what for what, changed in mutations.items()
            if changed == text or not _caught(sim, name, horizon, changed)] == []


# ---------------------------------------------------------------------- offsets


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 1 << 30))
def test_every_offset_named_in_a_perception_matches_the_world(seed):
    """Every "<offset>, at (x, y)" anywhere in the text is that offset from the agent,
    and what the text names there is there in the world."""
    for sim, name, _, perception in windows(seed, 4):
        text = perception.as_text()
        me = sim.agents.require(name).position
        world = sim.world
        found = 0
        for m in re.finditer(r"(\d+ (?:north|south)(?:, \d+ (?:east|west))?|\d+ (?:east|west))"
                             r", at \((\d+), (\d+)\)", text):
            dx = dy = 0
            for part in m[1].split(", "):
                n, side = part.split(" ")
                step = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}[side]
                dx, dy = dx + step[0] * int(n), dy + step[1] * int(n)
            there = Position(int(m[2]), int(m[3]))
            assert (there.x - me.x, there.y - me.y) == (dx, dy), m[0]
            line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.end())]
            if line.startswith(("Nearest", "Landmarks beyond")):
                named = [p for p in re.split(r"[:;] ", line) if m[0] in p][0]
                what = named[: named.index(m[0])].rstrip(", ")
                if line.startswith("Nearest"):
                    assert world.terrain_at(there).value == what, line
                else:
                    assert what in {k.name for k in world.landmarks_at(there)}, line
            else:  # a key line: "<mark> <what>: <offset>, at (x, y), on <ground>."
                assert line.endswith(f", on {world.terrain_at(there).value}."), line
                what = line.split(" ", 1)[1].rsplit(": ", 1)[0]
                held = ({str(a.name) for a in sim.agents.agents_at(there)}
                        | {k.name for k in world.landmarks_at(there)}
                        | {p.name for p in world.places_at(there)}
                        | {type(o).__name__ for o in world.objects_at(there)})
                bare = re.sub(r" \((asleep|talking|landmark|named place)\)$", "", what)
                kind = {"a sign": "Sign"}.get(bare, "PlacedItem" if bare.startswith("a ")
                                              else bare)
                assert kind in held, (line, held)
            found += 1
        assert text.count(", at (") == found


def test_the_comparison_catches_structured_walls_that_differ():
    """A structure that drops, adds or turns a wall into a door is caught."""
    sim, name, _, perception = next(
        found for found in windows(seed=5, count=2000) if found[3].walls and found[3].doors)
    assert structured_edges(sim, name, perception) == []
    wall, door = perception.walls[0], perception.doors[0]
    for walls, doors in ((perception.walls[1:], perception.doors),
                         (perception.walls, perception.doors[1:]),
                         (perception.walls[1:], tuple(sorted((*perception.doors, wall)))),
                         (tuple(sorted((*perception.walls, door))), perception.doors[1:])):
        changed = dataclasses.replace(perception, walls=walls, doors=doors)
        assert structured_edges(sim, name, changed) != []
