"""AgentService's bucket index: nearby and same-cell queries answer exactly what a scan of
the whole roster would, in the same order, after any sequence of arrivals and moves."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from config import load_config
from core.agent import Agent
from core.terrain import TERRAIN_CODE, Terrain
from core.types import CARDINALS, AgentName, Direction, Position
from core.world import WorldState
from services.agent_service import BUCKET_SIZE, AgentRuleError, AgentService
from services.world_service import TerrainRules, WorldService

RULES = TerrainRules.from_traits(load_config(None).terrain.terrains)
SIZE = 3 * BUCKET_SIZE + 5
"""Not a multiple of the bucket size, so the last buckets are partial."""


def make_service(agents: list[Agent] = (), size: int = SIZE) -> AgentService:
    grass = np.full((size, size), TERRAIN_CODE[Terrain.GRASS], np.uint8)
    return AgentService(WorldService(WorldState(size, size, 1), grass, RULES), agents)


def person(name: str, x: int, y: int) -> Agent:
    return Agent(name=AgentName(name), model_id="m", personality="p", position=Position(x, y))


def scan_nearby(service: AgentService, pos: Position, radius: int) -> list[Agent]:
    """The definition: a Chebyshev square, nearest first by Manhattan, then by name."""
    found = [a for a in service.get_all_agents() if a.position.chebyshev(pos) <= radius]
    return sorted(found, key=lambda a: (a.position.manhattan(pos), a.name))


def scan_at(service: AgentService, roster: list[str], pos: Position) -> list[Agent]:
    """Everyone on `pos`, in the order they joined the roster."""
    return [a for n in roster if (a := service.require(n)).position == pos]


def assert_matches_scan(service, roster, queries) -> None:
    for pos, radius in queries:
        assert service.get_nearby_agents(pos, radius) == scan_nearby(service, pos, radius)
        assert service.agents_at(pos) == scan_at(service, roster, pos)


coord = st.integers(0, SIZE - 1)
operation = st.one_of(
    st.tuples(st.just("add"), coord, coord),
    st.tuples(st.just("teleport"), st.integers(0, 99), coord, coord),
    st.tuples(st.just("step"), st.integers(0, 99), st.sampled_from(CARDINALS)),
    st.tuples(st.just("journey"), st.integers(0, 99), coord, coord),
    st.tuples(st.just("sleep"), st.integers(0, 99)),
)
query = st.tuples(
    st.builds(Position, st.integers(-4, SIZE + 3), st.integers(-4, SIZE + 3)),
    st.one_of(st.just(0), st.integers(0, 4), st.integers(0, 2 * SIZE)),
)


@settings(max_examples=150, deadline=None)
@given(
    start=st.lists(st.tuples(coord, coord), max_size=12),
    operations=st.lists(operation, max_size=80),
    queries=st.lists(query, min_size=1, max_size=25),
)
def test_queries_match_a_full_scan_after_any_moves(start, operations, queries):
    roster = [f"s{i}" for i in range(len(start))]
    service = make_service([person(n, x, y) for n, (x, y) in zip(roster, start, strict=True)])
    for op in operations:
        kind, *args = op
        if kind == "add":
            roster.append(f"a{len(roster)}")
            service.add_agent(person(roster[-1], *args))
            continue
        if not roster:
            continue
        name = roster[args[0] % len(roster)]
        try:
            if kind == "teleport":
                service.update_position(name, Position(args[1], args[2]))
            elif kind == "step":
                service.move_agent(name, args[1])
            elif kind == "journey":
                service.start_journey(name, Position(args[1], args[2]))
                for _ in range(3):
                    if service.require(name).journey is not None:
                        service.advance_journey(name)
            else:
                service.set_sleeping(name, True)
        except AgentRuleError:
            pass  # off the map, or already there: nothing moved
        here = service.require(name).position
        assert_matches_scan(service, roster, [(here, 0), (here, 1)])
    everyone = [(service.require(n).position, r) for n in roster for r in (0, 3)]
    assert_matches_scan(service, roster, queries + everyone)


def test_radius_zero_finds_only_the_cell_itself():
    service = make_service([person("Ash", 7, 7), person("Birch", 8, 7), person("Cedar", 7, 7)])
    assert [a.name for a in service.get_nearby_agents(Position(7, 7), 0)] == ["Ash", "Cedar"]
    assert service.get_nearby_agents(Position(7, 8), 0) == []
    assert service.get_nearby_agents(Position(7, 7), -1) == []


def test_corners_and_edges_are_found_from_outside_and_inside_the_map():
    last = SIZE - 1
    corners = [person("NW", 0, 0), person("NE", last, 0), person("SW", 0, last),
               person("SE", last, last)]
    service = make_service(corners)
    assert [a.name for a in service.get_nearby_agents(Position(-2, -2), 2)] == ["NW"]
    assert [a.name for a in service.get_nearby_agents(Position(last + 1, last), 1)] == ["SE"]
    assert [a.name for a in service.get_nearby_agents(Position(0, 0), last)] == [
        "NW", "NE", "SW", "SE"
    ]
    assert [a.name for a in service.agents_at(Position(last, 0))] == ["NE"]


def test_order_is_nearest_first_then_by_name_not_by_arrival():
    service = make_service([
        person("Zed", 10, 10), person("Cid", 12, 10), person("Abe", 10, 12),
        person("Bea", 11, 10),
    ])
    names = [a.name for a in service.get_nearby_agents(Position(10, 10), 3)]
    assert names == ["Zed", "Bea", "Abe", "Cid"]


def test_a_move_across_a_bucket_boundary_is_seen_at_once():
    edge = BUCKET_SIZE - 1
    service = make_service([person("Ash", edge, edge)])
    service.move_agent("Ash", Direction.EAST)  # into the next bucket
    assert service.agents_at(Position(edge, edge)) == []
    assert [a.name for a in service.agents_at(Position(edge + 1, edge))] == ["Ash"]
    assert service.get_nearby_agents(Position(edge - 1, edge), 1) == []
    assert [a.name for a in service.get_nearby_agents(Position(edge - 1, edge), 2)] == ["Ash"]


def test_same_cell_lists_keep_roster_order_after_moves():
    service = make_service([person("Cedar", 1, 1), person("Ash", 3, 3)])
    service.add_agent(person("Birch", 3, 3))
    service.update_position("Cedar", Position(3, 3))
    assert [a.name for a in service.agents_at(Position(3, 3))] == ["Cedar", "Ash", "Birch"]


def test_emptied_buckets_are_dropped_so_the_index_stays_the_size_of_the_crowd():
    service = make_service([person("Ash", 0, 0)])
    for x in range(1, SIZE):
        service.update_position("Ash", Position(x, x))
    assert len(service._buckets) == 1
