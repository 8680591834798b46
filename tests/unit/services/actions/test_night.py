"""Vision shrinks at night: what an agent can reach by sight follows the clock."""

from __future__ import annotations

from core.actions import ApproachAction, InviteAction
from core.types import Position
from tests.unit.services.actions.conftest import (
    ASH,
    CEDAR,
    fails,
    put,
    succeeds,
)

# The default clock starts at 08:00 with 24 ticks a day: tick 14 is 22:00, night.
NIGHT_TICK = 14


def test_day_radius_is_three_and_night_radius_is_two(sim) -> None:
    assert sim.world.vision_radius() == 3
    sim.world.set_tick(NIGHT_TICK)
    assert sim.world.is_night
    assert sim.world.vision_radius() == 2  # round(3 * 0.6)


def test_someone_three_cells_away_is_seen_by_day_but_not_at_night(sim) -> None:
    put(sim, CEDAR, Position(11, 8))  # three cells east of Ash at (8, 8)
    assert sim.agents.can_see(ASH, CEDAR)
    sim.world.set_tick(NIGHT_TICK)
    assert not sim.agents.can_see(ASH, CEDAR)
    result = fails(sim, ASH, InviteAction(CEDAR), tick=NIGHT_TICK)
    assert "within sight" in result.message
    fails(sim, ASH, ApproachAction("Cedar"), tick=NIGHT_TICK)


def test_someone_two_cells_away_is_still_seen_at_night(sim) -> None:
    put(sim, CEDAR, Position(10, 8))
    sim.world.set_tick(NIGHT_TICK)
    succeeds(sim, ASH, InviteAction(CEDAR), tick=NIGHT_TICK)
