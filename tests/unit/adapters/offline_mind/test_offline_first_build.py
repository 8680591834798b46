"""A first build comes within the first days, and a home without a landmark goes up near
where its builder woke (issue 5: every agent builds; those who woke near one another
should stay near one another)."""

from __future__ import annotations

import pytest

from adapters.offline_mind import OfflineMind
from adapters.offline_mind.memory import GATHERED, Memory
from tests.unit.adapters.offline_mind.conftest import PERSONALITIES, calls_of, perceive, play, start

pytestmark = pytest.mark.asyncio

AT = (50, 50)


async def tools_over_ticks(memory: Memory, inventory: dict[str, int], day: int,
                           ticks: int = 24) -> list[str]:
    """Every tool Ember calls over `ticks` daytime turns that each start from `memory`."""
    tools: list[str] = []
    for tick in range(1, ticks + 1):
        mind = OfflineMind(3, {"Ember": PERSONALITIES["Ember"]})
        mind.set_state("Ember", memory.to_state())
        log = await play(mind, start(perceive("Ember", tick, AT, day=day,
                                                inventory=inventory)))
        tools += [name for name, _ in calls_of(log)]
    return tools


# Wood it cannot split (a failed guess) keeps a door in hand but the shelter far off.
SHORT = {"plank": 4, "wood": 1}
UNSPLIT = Memory.of(origin=AT, anchor=AT, done=GATHERED, failed=("work:wood:split",))


async def test_with_a_door_in_hand_but_no_shelters_worth_a_wall_goes_up_on_day_two() -> None:
    assert "place_wall" in await tools_over_ticks(UNSPLIT, SHORT, day=2)


async def test_no_wall_on_the_first_day() -> None:
    assert "place_wall" not in await tools_over_ticks(UNSPLIT, SHORT, day=1)


async def test_a_shelters_worth_is_kept_for_the_shelter_not_spent_on_a_wall() -> None:
    assert "place_wall" not in await tools_over_ticks(UNSPLIT, {"plank": 10}, day=2)


SHELTER = {"plank": 9, "wood": 1}


async def test_without_a_landmark_the_home_goes_up_near_where_it_woke() -> None:
    near = Memory.of(origin=(52, 50), anchor=(52, 50), done=GATHERED)
    assert "build_shelter" in await tools_over_ticks(near, SHELTER, day=3, ticks=4)


async def test_far_from_where_it_woke_it_does_not_build_there() -> None:
    far = Memory.of(origin=(150, 50), anchor=(150, 50), done=GATHERED)
    tools = await tools_over_ticks(far, SHELTER, day=3)
    assert "build_shelter" not in tools
    assert "journey" in tools or "walk" in tools  # it sets off back toward it
