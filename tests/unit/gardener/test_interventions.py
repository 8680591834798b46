"""Reading stored (kind, params) pairs strictly into interventions, and back."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from core.gardener import (
    KINDS,
    NoIntervention,
    Regrowth,
    RevealLandmark,
    WeatherChange,
    WorldHappening,
)
from core.gardener.interventions import InvalidIntervention, from_params
from core.terrain import Weather
from core.types import Position

SIZE = (30, 20)
"""Wider than tall, so that mixing up x and y shows."""

GOOD: list[tuple[str, dict[str, object], object]] = [
    ("none", {}, NoIntervention()),
    *[("weather", {"weather": w.value}, WeatherChange(w)) for w in Weather],
    ("event", {"x": 3, "y": 4, "radius": 5, "text": "A fox runs by."},
     WorldHappening(Position(3, 4), 5, "A fox runs by.")),
    ("event", {"x": 29, "y": 19, "radius": 0, "text": "Thunder"},
     WorldHappening(Position(29, 19), 0, "Thunder")),
    ("regrowth", {"x": 0, "y": 0, "radius": 0}, Regrowth(Position(0, 0), 0)),
    ("regrowth", {"x": 25, "y": 15, "radius": 3}, Regrowth(Position(25, 15), 3)),
    ("reveal_landmark", {"landmark": "Old Oak", "x": 10, "y": 2, "radius": 60},
     RevealLandmark("Old Oak", Position(10, 2), 60)),
]

SAMPLES = [expected for _, _, expected in GOOD]

LOCAL: dict[str, dict[str, object]] = {
    "event": {"x": 1, "y": 2, "radius": 3, "text": "Birds sing."},
    "regrowth": {"x": 1, "y": 2, "radius": 3},
    "reveal_landmark": {"landmark": "Old Oak", "x": 1, "y": 2, "radius": 3},
}
"""A good parameter object for each kind that has a spot."""

ALL_GOOD: dict[str, dict[str, object]] = {"none": {}, "weather": {"weather": "rainy"}, **LOCAL}


def refused(kind: object, params: object, message: str, size: tuple[int, int] = SIZE) -> str:
    """The reason `from_params` gives, checked to contain `message` literally."""
    with pytest.raises(InvalidIntervention, match=re.escape(message)) as caught:
        from_params(kind, params, size)
    return str(caught.value)


def changed(kind: str, **changes: object) -> dict[str, object]:
    params = dict(ALL_GOOD[kind])
    params.update(changes)
    return params


# ---------------------------------------------------------------- good inputs


@pytest.mark.parametrize(("kind", "params", "expected"), GOOD)
def test_good_params_become_the_intervention(kind: str, params: dict[str, object],
                                             expected: object) -> None:
    made = from_params(kind, params, SIZE)
    assert made == expected
    assert type(made) is type(expected)
    assert made.kind == kind


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: type(s).__name__)
def test_params_round_trip_through_from_params(sample: object) -> None:
    params = sample.params()  # type: ignore[attr-defined]
    assert from_params(sample.kind, params, SIZE) == sample  # type: ignore[attr-defined]
    stored = json.loads(json.dumps(params))
    assert from_params(sample.kind, stored, SIZE) == sample  # type: ignore[attr-defined]


@pytest.mark.parametrize("sample", SAMPLES[1:], ids=lambda s: type(s).__name__)
def test_interventions_are_frozen(sample: object) -> None:
    for field in dataclasses.fields(sample):  # type: ignore[arg-type]
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(sample, field.name, None)
    assert hash(sample) == hash(dataclasses.replace(sample))  # type: ignore[type-var]


def test_no_intervention_has_nothing_to_change() -> None:
    assert dataclasses.fields(NoIntervention) == ()
    assert NoIntervention() == NoIntervention()
    assert hash(NoIntervention()) == hash(NoIntervention())


def test_the_kinds() -> None:
    assert KINDS == ("none", "weather", "event", "regrowth", "reveal_landmark")
    classes = (NoIntervention, WeatherChange, WorldHappening, Regrowth, RevealLandmark)
    assert tuple(c.kind for c in classes) == KINDS


def test_no_intervention_has_no_params() -> None:
    assert NoIntervention().params() == {}


def test_params_are_the_stored_shape() -> None:
    assert WeatherChange(Weather.FOGGY).params() == {"weather": "foggy"}
    assert type(WeatherChange(Weather.FOGGY).params()["weather"]) is str
    assert WorldHappening(Position(1, 2), 3, "Hi").params() == {
        "x": 1, "y": 2, "radius": 3, "text": "Hi"}
    assert Regrowth(Position(4, 5), 6).params() == {"x": 4, "y": 5, "radius": 6}
    assert RevealLandmark("Spire", Position(7, 8), 9).params() == {
        "landmark": "Spire", "x": 7, "y": 8, "radius": 9}


def test_a_weather_member_is_accepted_as_its_value() -> None:
    assert from_params("weather", {"weather": Weather.CLOUDY}, SIZE) == WeatherChange(
        Weather.CLOUDY)


def test_the_last_cell_of_the_world_is_inside() -> None:
    assert from_params("regrowth", {"x": 29, "y": 0, "radius": 1}, SIZE) == Regrowth(
        Position(29, 0), 1)
    assert from_params("regrowth", {"x": 0, "y": 19, "radius": 1}, SIZE) == Regrowth(
        Position(0, 19), 1)


def test_a_large_radius_is_the_guardrails_business() -> None:
    made = from_params("event", changed("event", radius=10_000), SIZE)
    assert isinstance(made, WorldHappening)
    assert made.radius == 10_000


# ---------------------------------------------------------------- describing


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: type(s).__name__)
def test_describe_is_a_sentence(sample: object) -> None:
    said = sample.describe()  # type: ignore[attr-defined]
    assert isinstance(said, str)
    assert said.strip() == said
    assert len(said.split()) >= 2


def test_describe_says_what_happens_where() -> None:
    assert "rainy" in WeatherChange(Weather.RAINY).describe()
    event = WorldHappening(Position(3, 4), 5, "A fox runs by.").describe()
    assert "(3,4)" in event
    assert "A fox runs by." in event
    regrowth = Regrowth(Position(6, 7), 2).describe()
    assert "(6,7)" in regrowth
    assert "2 cells" in regrowth
    reveal = RevealLandmark("Old Oak", Position(8, 9), 12).describe()
    assert "Old Oak" in reveal
    assert "(8,9)" in reveal
    assert "12 cells" in reveal
    assert NoIntervention().describe() == "The Gardener lets the world be."


# ---------------------------------------------------------------- kinds


@pytest.mark.parametrize("kind", ["teleport", "Weather", "NONE", "", "give_item", "move"])
def test_an_unknown_kind_is_refused(kind: str) -> None:
    why = refused(kind, {}, f"unknown intervention {kind!r}")
    assert "none, weather, event, regrowth, reveal_landmark" in why


@pytest.mark.parametrize("kind", [None, 3, 1.5, b"none", ["none"], {"kind": "none"}, True])
def test_a_kind_that_is_not_text_is_refused(kind: object) -> None:
    refused(kind, {}, f"unknown intervention {kind!r}")


def test_the_kind_is_judged_before_the_params() -> None:
    refused("teleport", "not even an object", "unknown intervention 'teleport'")


# ---------------------------------------------------------------- params shape


@pytest.mark.parametrize("params", [None, [], ["weather", "clear"], "weather=clear", 7,
                                    [("weather", "clear")]])
def test_params_must_be_an_object(params: object) -> None:
    refused("weather", params, "the parameters of weather must be an object")


def test_parameter_names_must_be_text() -> None:
    refused("weather", {1: "clear"}, "parameter names must be text")
    refused("regrowth", {"x": 1, "y": 1, "radius": 1, 2: 2}, "parameter names must be text")


@pytest.mark.parametrize("kind", KINDS)
def test_an_agent_can_never_be_named(kind: str) -> None:
    why = refused(kind, changed(kind, agent="Ada"), "not allowed: agent")
    assert f"{kind} takes exactly" in why
    assert "missing" not in why


@pytest.mark.parametrize("key", ["target", "name", "inventory", "memory", "speed"])
def test_extra_keys_are_refused(key: str) -> None:
    why = refused("regrowth", changed("regrowth", **{key: 1}), f"not allowed: {key}")
    assert "['radius', 'x', 'y']" in why


@pytest.mark.parametrize(("kind", "missing"), [
    ("weather", "weather"),
    ("event", "text"),
    ("event", "x"),
    ("regrowth", "radius"),
    ("reveal_landmark", "landmark"),
    ("reveal_landmark", "y"),
])
def test_missing_keys_are_refused(kind: str, missing: str) -> None:
    params = changed(kind)
    del params[missing]
    why = refused(kind, params, f"missing: {missing}")
    assert "not allowed" not in why


def test_empty_params_name_every_missing_key() -> None:
    refused("event", {}, "missing: radius, text, x, y")


def test_extra_and_missing_keys_are_both_named() -> None:
    refused("regrowth", {"x": 1, "y": 1, "r": 2}, "(not allowed: r; missing: radius)")


# ---------------------------------------------------------------- whole numbers


@pytest.mark.parametrize("kind", list(LOCAL))
@pytest.mark.parametrize("key", ["x", "y", "radius"])
@pytest.mark.parametrize("bad", [True, False, 1.0, 2.5, "3", None, [1]])
def test_whole_numbers_must_be_ints(kind: str, key: str, bad: object) -> None:
    refused(kind, changed(kind, **{key: bad}), f"{key} must be a whole number, got {bad!r}")


# ---------------------------------------------------------------- inside the world


@pytest.mark.parametrize("kind", list(LOCAL))
@pytest.mark.parametrize(("x", "y"), [(-1, 0), (0, -1), (30, 0), (0, 20), (30, 20),
                                      (15, 25), (-5, -5), (1000, 3)])
def test_spots_outside_the_world_are_refused(kind: str, x: int, y: int) -> None:
    refused(kind, changed(kind, x=x, y=y), f"({x},{y}) is outside the 30x20 world")


def test_width_and_height_are_not_mixed_up() -> None:
    assert from_params("regrowth", {"x": 25, "y": 15, "radius": 0}, SIZE) == Regrowth(
        Position(25, 15), 0)
    refused("regrowth", {"x": 15, "y": 25, "radius": 0}, "outside the 30x20 world")


@pytest.mark.parametrize("kind", list(LOCAL))
@pytest.mark.parametrize("radius", [-1, -100])
def test_a_negative_radius_is_refused(kind: str, radius: int) -> None:
    refused(kind, changed(kind, radius=radius), f"radius must be 0 or more, got {radius}")


# ---------------------------------------------------------------- weather


@pytest.mark.parametrize("weather", ["stormy", "CLEAR", "Clear", " clear", "", 1, None,
                                     ["clear"]])
def test_unknown_weather_is_refused(weather: object) -> None:
    why = refused("weather", {"weather": weather}, f"unknown weather {weather!r}")
    assert "clear, cloudy, rainy, foggy" in why


# ---------------------------------------------------------------- event text


@pytest.mark.parametrize("text", ["", "   ", "\n\t ", "\x1b[31m\x1b[0m", "\x00\x07\x1b",
                                  "\u200b", 5, None, ["a fox"]])
def test_an_event_needs_text(text: object) -> None:
    refused("event", changed("event", text=text), "an event needs its description as text")


@pytest.mark.parametrize(("text", "kept"), [
    ("A fox runs by.", "A fox runs by."),
    ("  A fox  runs\tby.  ", "A fox runs by."),
    ("\x1b[31mA fire\x1b[0m burns", "A fire burns"),
    ("\x1b]0;pwned\x07Smoke rises", "Smoke rises"),
    ("A bell\x07 rings\x00", "A bell rings"),
    ("Wind\r\n\r\nhowls", "Wind howls"),
    ("Mist\u200b falls", "Mist falls"),
    ("Cafe\u0301 smells", "Caf\u00e9 smells"),
    ("Snow falls \u2744", "Snow falls \u2744"),
])
def test_event_text_is_cleaned(text: str, kept: str) -> None:
    made = from_params("event", changed("event", text=text), SIZE)
    assert isinstance(made, WorldHappening)
    assert made.text == kept
    assert "\x1b" not in made.text


# ---------------------------------------------------------------- landmark names


@pytest.mark.parametrize("name", ["", "  ", "\x1b[2J", 5, None, ["Old Oak"], True])
def test_a_landmark_needs_its_name_as_text(name: object) -> None:
    refused("reveal_landmark", changed("reveal_landmark", landmark=name),
            "reveal_landmark needs the landmark's name as text")


def test_a_landmark_name_is_cleaned() -> None:
    made = from_params("reveal_landmark",
                       changed("reveal_landmark", landmark="\x1b[1m Old Oak\x1b[0m\x07"), SIZE)
    assert isinstance(made, RevealLandmark)
    assert made.landmark == "Old Oak"


# ---------------------------------------------------------------- the error type


def test_invalid_intervention_is_a_value_error() -> None:
    assert issubclass(InvalidIntervention, ValueError)
    with pytest.raises(ValueError):
        from_params("regrowth", {"x": 1, "y": 1}, SIZE)
