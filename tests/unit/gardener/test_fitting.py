"""Which happening words fit a place (services/gardener/fitting.py): ground by kind and
synonym, weather and the part of the day; the rules' own happenings fit everywhere,
so the fallback for a refused text always fits."""

from __future__ import annotations

import itertools

import pytest

from core.gardener import AgentHealth, HealthFigures, WorldHappening
from core.terrain import Terrain, Weather
from core.types import Position
from services.gardener.fitting import ground_for, happening_misfit, misfit
from services.gardener.rules import HAPPENINGS

PERIODS = ("morning", "afternoon", "evening", "night")


@pytest.mark.parametrize(("text", "ground", "wrong"), [
    ("Starlings settle into the trees.", ("coast", "sand"), "trees"),
    ("Starlings settle into the trees.", ("forest", "sand"), None),
    ("A gull cries over the beach.", ("coast",), None),
    ("A gull cries over the beach.", ("grass", "forest"), "beach"),
    ("Leaves whirl past.", ("grass",), "leaves"),
    ("A heron stands in the river.", ("water",), None),
    ("Stones clatter down the hillside.", ("stone",), "hillside"),
    ("A fox trots past.", (), None),
])
def test_ground_words_must_name_ground_that_is_there(text, ground, wrong) -> None:
    found = misfit(text, ground, "clear", "afternoon")
    if wrong is None:
        assert found is None
    else:
        assert found is not None and wrong in found


@pytest.mark.parametrize(("text", "weather", "period", "fits"), [
    ("Rain begins to fall.", "rainy", "morning", True),
    ("Rain begins to fall.", "clear", "morning", False),
    ("The mist thickens.", "foggy", "night", True),
    ("Sunlight breaks through.", "clear", "night", False),
    ("Sunlight breaks through.", "cloudy", "morning", False),
    ("The stars wheel overhead.", "clear", "night", True),
    ("The stars wheel overhead.", "clear", "morning", False),
    ("A rainbow arcs across the sky.", "rainy", "night", False),
    ("Snow drifts down.", "cloudy", "morning", False),
    ("At dusk, an owl calls.", "cloudy", "evening", True),
    ("At dusk, an owl calls.", "cloudy", "morning", False),
    ("Rain begins to fall.", "", "", False),  # not known: not vouched for
])
def test_sky_words_must_fit_the_weather_and_the_hour(text, weather, period, fits) -> None:
    assert (misfit(text, ("grass",), weather, period) is None) is fits


def test_the_rules_happenings_fit_every_place_weather_and_hour() -> None:
    for text, weather, period in itertools.product(HAPPENINGS, Weather, PERIODS):
        assert misfit(text, (), weather.value, period) is None, (text, weather, period)


def _agent(name: str, x: int, y: int, ground: tuple[str, ...]) -> AgentHealth:
    return AgentHealth(name, Position(x, y), 0, 1, 0, 0, 0, ground)


def test_the_ground_of_a_happening_is_what_its_hearers_can_see() -> None:
    figures = HealthFigures(10, 10, (_agent("Ash", 5, 5, ("coast", "sand")),
                                     _agent("Wren", 30, 30, ("forest",))), 0, 0,
                            weather="clear", period="morning")
    near_ash = WorldHappening(Position(7, 7), 3, "Starlings settle into the trees.")
    assert ground_for(figures, near_ash) == ("coast", "sand")
    assert "trees" in (happening_misfit(figures, near_ash) or "")
    near_wren = WorldHappening(Position(28, 28), 3, "Starlings settle into the trees.")
    assert happening_misfit(figures, near_wren) is None
    nobody = WorldHappening(Position(60, 2), 3, "Starlings settle into the trees.")
    assert ground_for(figures, nobody) == () and happening_misfit(figures, nobody)
    assert {t.value for t in Terrain} >= {"coast", "sand", "forest"}
