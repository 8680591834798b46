"""What a sensible person sees to among its errands (issue 5: every agent gathers, crafts,
builds and writes, and two of them talk, on nearly every fresh default world):

- a first wall's worth in hand goes up at once, not after the day's other errands;
- with nothing to build with, it does not walk back to company it already knows, and
  once it has made and written something (or found nothing at all to gather) every turn
  goes to finding material;
- a day gone by without a word written anywhere, it writes sooner;
- a landmark it has walked toward for two days without getting there is given up;
- having talked with nobody by its third day, it goes back to see another landmark it
  knows, where a sign may since say who comes back there;
- it does not set off on a hop in the afternoon or walk back at dusk by journey, nor,
  days gone by with nobody talked with, journey anywhere by day: a journey (a cell a
  tick) runs on into the evening, when company is at its place; but a far goal behind a
  lake is journeyed to, the whole way, rather than paced at along the shore;
- a wall it walked into part of the way is remembered and gone round.
"""

from __future__ import annotations

from typing import Any

import pytest

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.memory import BUILT, CRAFTED, GATHERED, TALKED, WROTE, Memory
from core.actions import ActionResult
from core.terrain import Terrain
from services.mind import ToolCall
from tests.unit.adapters.offline_mind.conftest import (
    PERSONALITIES,
    calls_of,
    cells_around,
    landmark,
    perceive,
    play,
    start,
    succeed,
)

pytestmark = pytest.mark.asyncio

AT = (50, 50)
SETTLED = GATHERED | CRAFTED | WROTE


def mind_with(agent: str, memory: Memory, seed: int = 3) -> OfflineMind:
    mind = OfflineMind(seed, {agent: PERSONALITIES[agent]})
    mind.set_state(agent, memory.to_state())
    return mind


def moves(log: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(n, a) for n, a in calls_of(log) if n in ("walk", "journey")]


def goes_east(name: str, args: dict[str, Any]) -> bool:
    if name == "walk":
        return args["direction"] == "east"
    return args.get("destination", [0])[0] > AT[0]


# ------------------------------------------------------------------ building


async def test_a_first_walls_worth_goes_up_on_the_first_turn_of_day_two() -> None:
    """River (a little maker) with four planks and nothing built: every turn raises it."""
    memory = Memory.of(origin=AT, anchor=AT, done=GATHERED | CRAFTED)
    for tick in range(25, 37):
        log = await play(mind_with("River", memory), start(perceive(
            "River", tick, AT, day=2, inventory={"plank": 4})))
        assert "place_wall" in [n for n, _ in calls_of(log)], (tick, calls_of(log))


async def test_with_nothing_to_build_with_it_does_not_go_back_to_company_it_knows() -> None:
    seen = ("Sage", AT[0] + 20, AT[1], 28)
    needy = Memory.of(origin=AT, anchor=AT, done=GATHERED, seen=seen, met=(("Sage", 5),))
    turn = mind_with("River", needy).begin(start(perceive(
        "River", 30, AT, day=2, inventory={"grass": 1})))
    assert turn._chasing() is None
    # Someone it has not met yet, or with a wall's worth in hand, it still goes after.
    stranger = mind_with("River", needy.replace(met=())).begin(start(perceive(
        "River", 30, AT, day=2, inventory={"grass": 1})))
    assert stranger._chasing() == seen[1:3]
    stocked = mind_with("River", needy).begin(start(perceive(
        "River", 30, AT, day=2, inventory={"plank": 4})))
    assert stocked._chasing() == seen[1:3]


@pytest.mark.parametrize("done", [SETTLED, 0])
async def test_made_and_written_or_nothing_gathered_every_turn_goes_for_material(
        done: int) -> None:
    """Wood remembered far to the east: with its first craft and first words behind it (or
    nothing at all gathered yet), every daytime turn of day two heads there."""
    memory = Memory.of(origin=AT, anchor=AT, done=done, stock=(90, 50))
    for tick in range(25, 37):
        log = await play(mind_with("Ember", memory), start(perceive(
            "Ember", tick, AT, day=2, inventory={"grass": 1})))
        first = moves(log)[:1]
        assert first and goes_east(*first[0]), (tick, calls_of(log))


# ------------------------------------------------------------------ writing


async def test_a_day_without_a_word_written_brings_writing_sooner() -> None:
    """River (hardly a writer), settled with a home, nothing written: day two has it write
    on far more turns than day one."""
    memory = Memory.of(origin=AT, anchor=AT, home=(AT[0] + 1, AT[1]), haunt="the Ruins",
                       done=GATHERED | CRAFTED | BUILT | TALKED)
    writes = {1: 0, 2: 0}
    for day in (1, 2):
        for tick in range(1, 41):
            log = await play(mind_with("River", memory, seed=tick), start(perceive(
                "River", tick, AT, day=day)))
            writes[day] += any(n in ("write_sign", "name_place") for n, _ in calls_of(log))
    assert writes[2] >= writes[1] + 5, writes


# ------------------------------------------------------------------ landmarks and company


def targeted(since: int, target: tuple[str, int, int] = ("the Spring", 50, 90)) -> Memory:
    return Memory.of(origin=AT, anchor=AT, haunt="the Ruins", target=target, since=since,
                     marks=(("the Ruins", *AT), target), visited=("the Ruins",),
                     done=SETTLED | BUILT | TALKED, home=AT)


async def test_a_landmark_not_reached_in_two_days_is_given_up() -> None:
    fresh = mind_with("Ember", targeted(since=10)).begin(start(perceive("Ember", 57, AT)))
    assert fresh._goal() == (50, 90)
    stale = mind_with("Ember", targeted(since=10)).begin(start(perceive("Ember", 59, AT)))
    assert stale._goal() != (50, 90)
    assert stale.target is None and "the Spring" in stale.visited


async def test_its_haunt_is_never_given_up() -> None:
    memory = targeted(since=10, target=("the Ruins", 50, 90)).replace(visited=())
    turn = mind_with("Ember", memory).begin(start(perceive("Ember", 150, AT)))
    assert turn._goal() == (50, 90)


async def test_a_memory_kept_before_it_knew_since_when_still_loads() -> None:
    old = {"v": 1, "target": ["the Spring", 50, 90], "haunt": "the Ruins"}
    assert Memory.from_state(old).since == 0
    assert Memory.from_state(old).target == ("the Spring", 50, 90)


LONELY = Memory.of(origin=AT, anchor=AT, haunt="the Ruins", home=AT, done=SETTLED | BUILT,
                   marks=(("the Ruins", *AT), ("the Spring", 90, 50)),
                   visited=("the Ruins", "the Spring"))


@pytest.mark.parametrize("talked", [False, True])
async def test_having_talked_with_nobody_it_goes_back_to_another_landmark(talked: bool) -> None:
    memory = LONELY.replace(done=LONELY.done | TALKED) if talked else LONELY
    targets = set()
    for tick in range(1, 41):
        mind = mind_with("Sage", memory, seed=tick)
        await play(mind, start(perceive("Sage", tick, AT, day=3)))
        targets.add(mind.memory("Sage").target)
    if talked:
        assert targets == {None}
    else:
        assert ("the Spring", 90, 50) in targets


async def test_back_at_a_landmark_it_came_to_see_again_it_is_there() -> None:
    spring = (AT[0] + 1, AT[1])
    memory = LONELY.replace(target=("the Spring", *spring), since=70)
    mind = mind_with("Sage", memory)
    await play(mind, start(perceive("Sage", 75, AT, day=4, landmarks=(
        landmark("the Spring", spring, AT),))))
    assert mind.memory("Sage").target is None


# ------------------------------------------------------------------ the evening


async def test_no_hop_sets_off_in_the_afternoon() -> None:
    """Wandering near its place, in the morning some moves are hops; in the afternoon none."""
    memory = Memory.of(origin=AT, anchor=AT, haunt="the Ruins", home=AT, visited=("the Ruins",),
                       done=SETTLED | BUILT | TALKED, marks=(("the Ruins", *AT),))
    journeys = {"morning": 0, "afternoon": 0}
    for period in journeys:
        for tick in range(1, 61):
            log = await play(mind_with("River", memory, seed=tick), start(perceive(
                "River", tick, AT, period=period)))
            journeys[period] += sum(n == "journey" for n, _ in moves(log))
    assert journeys["morning"] and not journeys["afternoon"], journeys


async def test_at_dusk_even_the_last_few_cells_home_are_walked() -> None:
    haunt = (AT[0] + 3, AT[1] + 3)  # six cells off, not in line: once a journey by name
    memory = Memory.of(haunt="the Ruins", anchor=haunt, origin=haunt, visited=("the Ruins",),
                       marks=(("the Ruins", *haunt),), done=SETTLED | BUILT)
    for seed in range(1, 9):
        log = await play(mind_with("Sage", memory, seed=seed), start(perceive(
            "Sage", 19, AT, period="evening")))
        assert [n for n, _ in moves(log)] == ["walk"], calls_of(log)


@pytest.mark.parametrize("talked", [False, True])
async def test_not_having_talked_yet_it_walks_home_in_the_afternoon(talked: bool) -> None:
    """Twenty cells from its place on an afternoon of day three: one who has talked with
    somebody may hop back (a journey); one who has not walks, to be there by evening."""
    haunt = (AT[0] + 12, AT[1] + 8)
    done = SETTLED | BUILT | (TALKED if talked else 0)
    memory = Memory.of(haunt="the Ruins", anchor=haunt, origin=haunt, home=haunt, done=done,
                       visited=("the Ruins",), marks=(("the Ruins", *haunt),))
    made = []
    for seed in range(1, 13):
        log = await play(mind_with("Sage", memory, seed=seed), start(perceive(
            "Sage", 54, AT, period="afternoon", day=3)))
        made += [n for n, _ in moves(log)]
    assert made and ("journey" in made) == talked, made


async def test_a_far_place_behind_a_lake_is_journeyed_to_even_at_dusk() -> None:
    """Its haunt forty cells south, water right below: walking at it only paces along the
    shore, so at dusk too it sets out, and the world plans the way round."""
    haunt = (AT[0], AT[1] + 40)
    lake = {(x, y): Terrain.WATER for x in range(AT[0] - 3, AT[0] + 4)
            for y in range(AT[1] + 1, AT[1] + 4)}
    memory = Memory.of(haunt="the Ruins", anchor=haunt, origin=haunt, visited=("the Ruins",),
                       marks=(("the Ruins", *haunt),), done=SETTLED | BUILT | TALKED)
    for seed in range(1, 5):
        log = await play(mind_with("Sage", memory, seed=seed), start(perceive(
            "Sage", 19, AT, period="evening", cells=cells_around(AT, paint=lake))))
        assert [n for n, _ in moves(log)][:1] == ["journey"], calls_of(log)


async def test_a_wall_met_part_of_the_way_is_remembered_and_gone_round() -> None:
    def into_a_wall(call: ToolCall) -> ActionResult:
        if call.name == "walk":
            return ActionResult.ok("you walk 1 step north, and stop: a wall stands to the north",
                                   data={"position": [AT[0], AT[1] - 1], "steps": 1,
                                         "stopped": "a wall stands to the north"})
        return succeed(call)

    goal = (AT[0], AT[1] - 20)
    memory = Memory.of(haunt="the Ruins", anchor=goal, origin=goal, visited=("the Ruins",),
                       marks=(("the Ruins", *goal),), done=SETTLED | BUILT | TALKED)
    mind = mind_with("Sage", memory)
    await play(mind, start(perceive("Sage", 19, AT, period="evening")), into_a_wall)
    wall = (AT[0], AT[1] - 1, "north")
    assert wall in mind.memory("Sage").walls
    # Back where it started, it does not walk straight north into that wall again: at
    # most a step, to go round it.
    turn = mind.begin(start(perceive("Sage", 20, AT, period="evening")))
    direction, steps = turn._leg_toward(*goal)
    assert direction != "north" or steps == 1, (direction, steps)
