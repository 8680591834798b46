"""Timeline (which tick the observer shows) and past_snapshot (the world drawn at it)."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import numpy as np
import pytest

from core.agent import Agent
from core.objects import Sign
from core.terrain import TERRAIN_CODE, Terrain
from core.types import AgentName, Position
from observe.snapshot import AgentView, WorldSnapshot
from observe.timeline import Timeline, past_snapshot
from services.world_service import Clock
from storage.history import PastLine, PastTick

# --- Timeline -------------------------------------------------------------------------


def test_a_new_timeline_is_live_and_says_so() -> None:
    timeline = Timeline(live_tick=123, first_tick=0)
    assert timeline.is_live and timeline.viewing is None
    assert timeline.label(123) == "live, tick 123"


def test_back_from_live_starts_at_the_newest_stored_tick() -> None:
    timeline = Timeline(live_tick=123, first_tick=0)
    assert timeline.back() == 122
    assert not timeline.is_live
    assert timeline.back(42) == 80
    assert timeline.label(123) == "viewing tick 80 of 123"


def test_back_stops_at_the_first_stored_tick() -> None:
    timeline = Timeline(live_tick=20, first_tick=5)
    assert timeline.back(100) == 5
    assert timeline.back() == 5


def test_forward_past_the_newest_stored_tick_is_live_again() -> None:
    timeline = Timeline(live_tick=20, first_tick=0)
    timeline.jump(17)
    assert timeline.forward() == 18
    assert timeline.forward() == 19
    assert timeline.forward() is None
    assert timeline.is_live
    assert timeline.forward() is None  # forward while live stays live


def test_jump_is_clamped_into_the_stored_range() -> None:
    timeline = Timeline(live_tick=50, first_tick=10)
    assert timeline.jump(3) == 10
    assert timeline.jump(30) == 30
    assert timeline.jump(999) == 49


def test_to_live_leaves_the_past() -> None:
    timeline = Timeline(live_tick=50, first_tick=0)
    timeline.jump(7)
    timeline.to_live()
    assert timeline.is_live
    assert timeline.label(50) == "live, tick 50"


def test_a_viewed_tick_stays_put_while_the_world_goes_on() -> None:
    timeline = Timeline(live_tick=50, first_tick=0)
    timeline.back(10)
    timeline.follow(60)
    assert timeline.viewing == 40
    assert timeline.label() == "viewing tick 40 of 60"
    assert timeline.forward(25) is None  # 65 is past the newest stored tick, 59


def test_without_history_nothing_can_be_viewed() -> None:
    timeline = Timeline(live_tick=0, first_tick=None)
    assert timeline.back() is None and timeline.is_live
    assert timeline.jump(0) is None
    timeline.follow(1, first_tick=0)  # the first tick is now stored
    assert timeline.back() == 0


def test_a_shrunken_range_pulls_the_viewed_tick_in() -> None:
    timeline = Timeline(live_tick=100, first_tick=0)
    timeline.jump(90)
    timeline.follow(30, first_tick=0)  # another world, shorter
    assert timeline.viewing == 29


def test_the_live_tick_may_come_with_each_move() -> None:
    timeline = Timeline(5)  # where history starts; the live tick is told per move
    assert timeline.back(1, 20) == 19
    assert timeline.back(10, 25) == 9  # the viewed tick stays; the range grew meanwhile
    assert timeline.forward(10, 30) == 19
    assert timeline.jump(0, 30) == 5
    assert timeline.forward(100, 30) is None


def test_negative_steps_do_not_move_the_wrong_way() -> None:
    timeline = Timeline(live_tick=100, first_tick=0)
    timeline.jump(50)
    assert timeline.back(-5) == 50
    assert timeline.forward(-5) == 50


# --- past_snapshot -------------------------------------------------------------------


def _view(name: str, x: int, y: int, activity: str = "") -> AgentView:
    agent = Agent(AgentName(name), "offline", "calm", Position(x, y))
    return AgentView(name, Position(x, y), "awake", activity, agent)


def _live() -> WorldSnapshot:
    grass = np.full((5, 8), TERRAIN_CODE[Terrain.GRASS], dtype=np.uint8)
    wall_east = np.zeros((5, 8), dtype=bool)
    wall_east[2, 3] = True
    flat = np.zeros((5, 8), dtype=bool)
    return WorldSnapshot(
        tick=30, time_text="day 2, 14:00 (afternoon)", period="afternoon", weather="rainy",
        width=8, height=5, terrain=grass, wall_east=wall_east, wall_south=flat,
        door_east=flat.copy(), door_south=flat.copy(),
        agents=(_view("Ash", 6, 4, "Ash sits."), _view("Birch", 1, 1, "Birch waves.")),
        objects=(Sign("s1", Position(2, 2), AgentName("Ash"), 3, text="Welcome"),),
        changed_rows=frozenset({4}),
    )


def _past(tick: int = 12) -> PastTick:
    return PastTick(tick, MappingProxyType({"Ash": (2, 3)}), (
        PastLine(tick, None, "weather_changed", "The weather turns clear."),
        PastLine(tick, "Ash", "walk", "Under a clear sky, Ash walks\n east.", True,
                 {"direction": "east"}),
    ))


def test_agents_stand_where_they_stood_and_the_rest_is_kept() -> None:
    live = _live()
    then = past_snapshot(live, _past())
    assert then.agent("Ash").position == Position(2, 3)
    assert then.agent("Ash").agent.position == Position(2, 3)
    assert then.agents_at(2, 3)[0].name == "Ash"
    assert then.agents_at(6, 4) == ()
    assert then.agent("Birch").position == Position(1, 1)  # not in the past: kept
    assert then.wall_east[2, 3] and then.wall_east is live.wall_east
    assert then.terrain is live.terrain
    assert then.objects_at(2, 2)[0].text == "Welcome"
    assert then.weather == "rainy" and then.conversations == live.conversations


def test_the_weather_is_that_ticks_when_the_history_knows_it() -> None:
    past = dataclasses.replace(_past(), weather="cloudy")
    assert past_snapshot(_live(), past).weather == "cloudy"


def test_the_live_snapshot_is_left_as_it_was() -> None:
    live = _live()
    past_snapshot(live, _past())
    assert live.agent("Ash").position == Position(6, 4)
    assert live.agents_at(6, 4)[0].name == "Ash"
    assert live.agents_at(2, 3) == ()
    assert live.tick == 30 and live.changed_rows == frozenset({4})


def test_the_tick_and_a_full_redraw_are_asked_for() -> None:
    then = past_snapshot(_live(), _past())
    assert then.tick == 12
    assert then.changed_rows is None
    assert then.time_text == "tick 12"
    assert then.period == "afternoon"  # unknown without the clock: the live one


def test_with_the_clock_the_time_is_that_ticks() -> None:
    then = past_snapshot(_live(), _past(12), clock=Clock(ticks_per_day=24, start_hour=8))
    assert then.time_text == "day 1, 20:00 (evening)"
    assert then.period == "evening"


def test_activity_is_what_the_agent_did_at_that_tick() -> None:
    then = past_snapshot(_live(), _past())
    assert then.agent("Ash").activity == "walk east"  # the deed, not the scene-setting
    assert then.agent("Birch").activity == ""  # did nothing that tick


@pytest.mark.parametrize("tick", [0, 5])
def test_an_agent_already_there_keeps_its_domain_value(tick: int) -> None:
    live = _live()
    still = PastTick(tick, MappingProxyType({"Birch": (1, 1)}), ())
    assert past_snapshot(live, still).agent("Birch").agent is live.agent("Birch").agent
