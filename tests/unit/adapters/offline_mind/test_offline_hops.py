"""Journeys are hops: bounded in length, toward far goals and along the search spiral.

Why it matters: a journeying agent has no turns (cheap for the engine), but it
goes one cell a tick and sees nothing new; hops keep both halves of that bargain.
"""

from __future__ import annotations

from typing import Any

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.memory import Memory
from adapters.offline_mind.walking import HOP_LEAST, HOP_MOST, JOURNEY_FROM
from core.actions import ActionResult
from services.mind import ToolCall
from tests.unit.adapters.offline_mind.conftest import (
    PERSONALITIES,
    calls_of,
    landmark,
    perceive,
    play,
    seen_agent,
    start,
    succeed,
)


def _moves(log: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(n, a) for n, a in calls_of(log) if n in ("walk", "journey")]


async def test_no_journey_is_longer_than_a_hop_and_none_shorter_than_journey_from() -> None:
    at = (200, 200)
    journeys = []
    for seed in range(1, 7):
        for agent in ("Ember", "Sage", "River"):
            mind = OfflineMind(seed, PERSONALITIES)
            for tick in range(1, 30):
                log = await play(mind, start(perceive(agent, tick, at)))
                journeys += [a for n, a in _moves(log) if n == "journey" and "destination" in a]
    assert journeys, "nobody ever hopped along the search spiral"
    for args in journeys:
        dx, dy = args["destination"][0] - at[0], args["destination"][1] - at[1]
        assert JOURNEY_FROM <= abs(dx) + abs(dy) <= HOP_MOST, args


async def test_searching_hops_go_along_the_spiral_leg() -> None:
    at = (200, 200)
    hops = 0
    for seed in range(1, 11):
        mind = OfflineMind(seed, PERSONALITIES)
        for tick in range(1, 20):
            log = await play(mind, start(perceive("Ember", tick, at)))
            for name, args in _moves(log):
                if name == "journey":
                    dx, dy = args["destination"][0] - at[0], args["destination"][1] - at[1]
                    assert dx == 0 or dy == 0, args  # straight on, in the leg's direction
                    assert HOP_LEAST <= abs(dx) + abs(dy) <= HOP_MOST
                    hops += 1
    assert hops


async def test_a_far_landmark_is_reached_by_hops_toward_it() -> None:
    at, ruins = (100, 100), (130, 110)  # 40 cells off
    memory = Memory.of(target=("the Ruins", *ruins), origin=at, anchor=at)
    seen = []
    for seed in range(1, 9):
        mind = OfflineMind(seed, PERSONALITIES)
        mind.set_state("River", memory.to_state())
        log = await play(mind, start(perceive("River", 5, at, landmarks=(
            landmark("the Ruins", ruins, at),))))
        seen += [a for n, a in _moves(log) if n == "journey"]
    assert seen, "a 40-cell goal was never journeyed toward"
    far = abs(ruins[0] - at[0]) + abs(ruins[1] - at[1])
    for args in seen:
        x, y = args["destination"]
        assert abs(x - at[0]) + abs(y - at[1]) == HOP_MOST, args
        assert abs(ruins[0] - x) + abs(ruins[1] - y) == far - HOP_MOST, args  # nearer by all of it


async def test_a_failed_hop_sets_out_the_whole_way_and_keeps_the_target() -> None:
    """A hop's end in a lake says nothing of the target: the world plans the whole way."""
    at, ruins = (100, 100), (130, 100)
    memory = Memory.of(target=("the Ruins", *ruins), origin=at, anchor=at)

    def no_hops(call: ToolCall) -> ActionResult:
        if call.name == "journey" and "destination" in call.arguments:
            return ActionResult.fail("water at the destination cannot be stood on")
        return succeed(call)

    for seed in range(1, 9):
        mind = OfflineMind(seed, PERSONALITIES)
        mind.set_state("River", memory.to_state())
        log = await play(mind, start(perceive("River", 5, at, landmarks=(
            landmark("the Ruins", ruins, at),))), no_hops)
        moves = _moves(log)
        if moves and moves[0][0] == "journey":
            assert moves[1:] == [("journey", {"place_name": "the Ruins"})], moves
            assert mind.memory("River").target == ("the Ruins", *ruins)
            return
    raise AssertionError("no seed tried a hop toward the far landmark")


async def test_when_no_journey_gets_there_the_turn_still_moves() -> None:
    at, ruins = (100, 100), (130, 100)
    memory = Memory.of(target=("the Ruins", *ruins), origin=at, anchor=at)

    def no_journeys(call: ToolCall) -> ActionResult:
        if call.name == "journey":
            return ActionResult.fail("no way there could be found")
        return succeed(call)

    for seed in range(1, 9):
        mind = OfflineMind(seed, PERSONALITIES)
        mind.set_state("River", memory.to_state())
        log = await play(mind, start(perceive("River", 5, at, landmarks=(
            landmark("the Ruins", ruins, at),))), no_journeys)
        names = [n for n, _ in _moves(log)]
        if "journey" in names:
            assert names == ["journey", "journey", "walk"], names  # a walk in the same turn
            return
    raise AssertionError("no seed tried a hop toward the far landmark")


async def test_with_someone_awake_in_view_it_walks_instead_of_journeying() -> None:
    at, ruins = (100, 100), (110, 100)
    # It invited Sage a tick ago, so it does not invite again now: this turn is for moving.
    memory = Memory.of(target=("the Ruins", *ruins), origin=at, anchor=at, met=(("Sage", 4),))
    moves: dict[bool, list[str]] = {True: [], False: []}
    for company in (True, False):
        for seed in range(1, 13):
            mind = OfflineMind(seed, PERSONALITIES)
            mind.set_state("River", memory.to_state())
            others = (seen_agent("Sage", (99, 101), at, is_sleeping=not company),)  # no chase
            log = await play(mind, start(perceive("River", 5, at, agents=others, landmarks=(
                landmark("the Ruins", ruins, at),))))
            moves[company] += [n for n, _ in _moves(log)]
    assert "journey" in moves[False]  # alone (the other asleep), it journeys there
    assert moves[True] and "journey" not in moves[True]


async def test_at_dusk_it_walks_back_to_its_haunt_rather_than_journeying() -> None:
    at, haunt = (100, 100), (100, 125)
    memory = Memory.of(haunt="the Ruins", anchor=haunt, origin=haunt, visited=("the Ruins",),
                       marks=(("the Ruins", *haunt),))
    moves = []
    for seed in range(1, 9):
        mind = OfflineMind(seed, PERSONALITIES)
        mind.set_state("Sage", memory.to_state())
        log = await play(mind, start(perceive("Sage", 19, at, period="evening")))
        moves += _moves(log)
    assert moves and all(n == "walk" and a["direction"] == "south" for n, a in moves), moves
