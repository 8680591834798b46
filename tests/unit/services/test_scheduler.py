"""Scheduler: clusters are exactly the connected groups of agents within the cluster radius,
in an order fixed by names alone, with forced agents first exactly once."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.constants import CLUSTER_BUFFER
from core.types import AgentName, Position
from services.scheduler import Scheduler

N = AgentName


def layout(**where: tuple[int, int]) -> dict[AgentName, Position]:
    return {N(name): Position(x, y) for name, (x, y) in where.items()}


def brute_clusters(positions, radius: int) -> list[list[AgentName]]:
    """Every pair compared; components grown by search; the documented order."""
    names = sorted(positions)
    unseen = set(names)
    clusters = []
    for start in names:
        if start not in unseen:
            continue
        unseen.discard(start)
        component, frontier = [start], [start]
        while frontier:
            here = positions[frontier.pop()]
            linked = [n for n in unseen if positions[n].chebyshev(here) <= radius]
            unseen.difference_update(linked)
            component += linked
            frontier += linked
        clusters.append(sorted(component))
    return sorted(clusters, key=lambda c: c[0])


def test_cluster_radius_is_vision_plus_buffer():
    assert Scheduler(3).cluster_radius == 3 + CLUSTER_BUFFER
    assert Scheduler(3, buffer=0).cluster_radius == 3


@pytest.mark.parametrize(("vision", "buffer"), [(-1, 2), (3, -1)])
def test_a_negative_radius_is_refused(vision, buffer):
    with pytest.raises(ValueError, match="must be 0 or more"):
        Scheduler(vision, buffer=buffer)


def test_empty_input_gives_no_clusters():
    assert Scheduler(3).compute_clusters({}) == []


def test_exact_radius_links_and_one_more_does_not():
    radius = Scheduler(3).cluster_radius
    s = Scheduler(3)
    assert s.compute_clusters(layout(a=(10, 10), b=(10 + radius, 10 - radius))) == [["a", "b"]]
    assert s.compute_clusters(layout(a=(10, 10), b=(10 + radius + 1, 10))) == [["a"], ["b"]]
    assert s.compute_clusters(layout(a=(10, 10), b=(10, 10 + radius + 1))) == [["a"], ["b"]]


def test_chains_link_transitively_even_when_the_ends_are_far_apart():
    step = Scheduler(3).cluster_radius
    chain = {N(f"c{i}"): Position(i * step, (i % 2) * step) for i in range(20)}
    loner = {N("zz"): Position(20 * step + step + 1, 0)}
    clusters = Scheduler(3).compute_clusters({**chain, **loner})
    assert clusters == [sorted(chain), ["zz"]]


def test_everyone_on_one_cell_is_one_cluster_and_many_cells_apart_are_many():
    assert Scheduler(0, buffer=0).compute_clusters(layout(b=(5, 5), a=(5, 5))) == [["a", "b"]]
    spread = {N(f"p{i:02d}"): Position(i * 2, 0) for i in range(30)}
    assert Scheduler(0, buffer=1).compute_clusters(spread) == [[n] for n in sorted(spread)]


def test_clusters_are_ordered_by_their_first_name():
    clusters = Scheduler(1, buffer=0).compute_clusters(
        layout(zed=(0, 0), amy=(1, 0), bob=(50, 50), yan=(50, 51), max=(9, 9))
    )
    assert clusters == [["amy", "zed"], ["bob", "yan"], ["max"]]


coords = st.integers(-30, 60)


@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(st.tuples(coords, coords), max_size=60),
    vision=st.integers(0, 6),
    buffer=st.integers(0, 3),
)
def test_clusters_match_an_all_pairs_search(points, vision, buffer):
    positions = {N(f"n{i}"): Position(x, y) for i, (x, y) in enumerate(points)}
    scheduler = Scheduler(vision, buffer=buffer)
    assert scheduler.compute_clusters(positions) == brute_clusters(
        positions, scheduler.cluster_radius
    )


@settings(max_examples=100, deadline=None)
@given(points=st.lists(st.tuples(coords, coords), max_size=40), seed=st.integers(0, 2**32))
def test_input_order_never_changes_the_answer(points, seed):
    positions = {N(f"n{i}"): Position(x, y) for i, (x, y) in enumerate(points)}
    items = list(positions.items())
    random.Random(seed).shuffle(items)
    assert Scheduler(3).compute_clusters(dict(items)) == Scheduler(3).compute_clusters(positions)


def test_forced_agents_go_first_in_request_order_then_the_rest_by_name():
    positions = layout(ash=(0, 0), birch=(1, 0), cedar=(2, 0), dusk=(3, 0), far=(90, 90))
    s = Scheduler(3)
    s.force_next(N("dusk"))
    s.force_next(N("cedar"))
    s.force_next(N("dusk"))  # asked again: keeps its first place
    assert s.compute_clusters(positions) == [["dusk", "cedar", "ash", "birch"], ["far"]]


def test_forcing_is_one_shot():
    positions = layout(ash=(0, 0), birch=(1, 0))
    s = Scheduler(3)
    s.force_next(N("birch"))
    assert s.compute_clusters(positions) == [["birch", "ash"]]
    assert s.compute_clusters(positions) == [["ash", "birch"]]


def test_forcing_moves_an_agent_only_within_its_own_cluster_and_keeps_cluster_order():
    positions = layout(ash=(0, 0), birch=(1, 0), cedar=(40, 40), zed=(41, 40))
    s = Scheduler(3)
    s.force_next(N("zed"))
    s.force_next(N("birch"))
    assert s.compute_clusters(positions) == [["birch", "ash"], ["zed", "cedar"]]


def test_a_request_for_someone_not_scheduled_lapses():
    s = Scheduler(3)
    s.force_next(N("sleeper"))
    assert s.compute_clusters(layout(ash=(0, 0))) == [["ash"]]
    positions = layout(ash=(0, 0), sleeper=(1, 0))
    assert s.compute_clusters(positions) == [["ash", "sleeper"]]


def test_the_members_of_one_conversation_share_a_cluster_however_far_apart() -> None:
    """Issue 40: what one says is heard by the others, so their turns go one after
    another in a set order, not in the order their models answer."""
    scheduler = Scheduler(vision_radius=3)
    positions = {AgentName("Ember"): Position(0, 0), AgentName("Sage"): Position(400, 400),
                 AgentName("River"): Position(200, 0), AgentName("Moss"): Position(1, 1)}
    apart = scheduler.compute_clusters(positions)
    assert apart == [["Ember", "Moss"], ["River"], ["Sage"]]
    talking = scheduler.compute_clusters(positions, [("Sage", "River")])
    assert talking == [["Ember", "Moss"], ["River", "Sage"]]
    everyone = scheduler.compute_clusters(positions, [("Sage", "Moss"), ("River", "Sage"),
                                                      ("Nobody", "Ember")])
    assert everyone == [["Ember", "Moss", "River", "Sage"]]
