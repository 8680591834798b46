"""What the Gardener may ask of the world, and nothing else.

Five kinds, each a change to the world and never to an agent: no change at all, the
weather, a happening in the landscape that agents within its radius perceive, regrowth
of what was gathered in an area, and a landmark made to stand out to the agents within
a radius of a spot. There is deliberately no field that could name an agent: none of
them can move an agent, touch what it carries, remembers or wrote, or its talk.

Requests are stored as a kind and a JSON object of parameters. `from_params` reads
them back strictly (exact keys, exact types, within the world), so a row written by
anyone, well-behaved or not, either becomes one of these values or is refused with a
reason that says what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from core.terrain import Weather
from core.text import clean_text
from core.types import Position


class InvalidIntervention(ValueError):
    """A request that is not one of the interventions, or not a well-formed one."""


@dataclass(frozen=True, slots=True)
class NoIntervention:
    kind: ClassVar[str] = "none"

    def params(self) -> dict[str, Any]:
        return {}

    def describe(self) -> str:
        return "The Gardener lets the world be."


@dataclass(frozen=True, slots=True)
class WeatherChange:
    kind: ClassVar[str] = "weather"
    weather: Weather

    def params(self) -> dict[str, Any]:
        return {"weather": str(self.weather)}

    def describe(self) -> str:
        return f"The weather turns {self.weather}."


@dataclass(frozen=True, slots=True)
class WorldHappening:
    """A described happening at a spot, perceived by agents within `radius` cells."""

    kind: ClassVar[str] = "event"
    position: Position
    radius: int
    text: str

    def params(self) -> dict[str, Any]:
        return {"x": self.position.x, "y": self.position.y, "radius": self.radius,
                "text": self.text}

    def describe(self) -> str:
        return f"Near ({self.position.x},{self.position.y}): {self.text}"


@dataclass(frozen=True, slots=True)
class Regrowth:
    """Everything gathered within `radius` cells of a spot grows back at once."""

    kind: ClassVar[str] = "regrowth"
    position: Position
    radius: int

    def params(self) -> dict[str, Any]:
        return {"x": self.position.x, "y": self.position.y, "radius": self.radius}

    def describe(self) -> str:
        return (f"Plants grow back within {self.radius} cells of "
                f"({self.position.x},{self.position.y}).")


@dataclass(frozen=True, slots=True)
class RevealLandmark:
    """Landmark `landmark` (by name) stands out to agents within `radius` of a spot."""

    kind: ClassVar[str] = "reveal_landmark"
    landmark: str
    position: Position
    radius: int

    def params(self) -> dict[str, Any]:
        return {"landmark": self.landmark, "x": self.position.x, "y": self.position.y,
                "radius": self.radius}

    def describe(self) -> str:
        return (f"{self.landmark} catches the eye of anyone within {self.radius} cells of "
                f"({self.position.x},{self.position.y}).")


Intervention = NoIntervention | WeatherChange | WorldHappening | Regrowth | RevealLandmark

KINDS: tuple[str, ...] = ("none", "weather", "event", "regrowth", "reveal_landmark")

_KEYS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "weather": frozenset({"weather"}),
    "event": frozenset({"x", "y", "radius", "text"}),
    "regrowth": frozenset({"x", "y", "radius"}),
    "reveal_landmark": frozenset({"landmark", "x", "y", "radius"}),
}


def _whole(params: Mapping[str, Any], key: str) -> int:
    value = params[key]
    if type(value) is not int:  # bool is an int too, and a float is not whole
        raise InvalidIntervention(f"{key} must be a whole number, got {value!r}")
    return value


def _spot(params: Mapping[str, Any], size: tuple[int, int]) -> Position:
    x, y = _whole(params, "x"), _whole(params, "y")
    if not (0 <= x < size[0] and 0 <= y < size[1]):
        raise InvalidIntervention(f"({x},{y}) is outside the {size[0]}x{size[1]} world")
    return Position(x, y)


def _radius(params: Mapping[str, Any]) -> int:
    radius = _whole(params, "radius")
    if radius < 0:
        raise InvalidIntervention(f"radius must be 0 or more, got {radius}")
    return radius


def from_params(kind: object, params: object, size: tuple[int, int]) -> Intervention:
    """The intervention a stored (kind, params) pair describes, in a world of `size`
    (width, height); `InvalidIntervention` naming the fault otherwise. Only the shape
    is checked here; how much is allowed is `guardrails.judge`'s business."""
    if not isinstance(kind, str) or kind not in _KEYS:
        raise InvalidIntervention(
            f"unknown intervention {kind!r}; the kinds are: {', '.join(KINDS)}")
    if not isinstance(params, Mapping):
        raise InvalidIntervention(f"the parameters of {kind} must be an object")
    keys = set(params)
    if any(not isinstance(k, str) for k in keys):
        raise InvalidIntervention("parameter names must be text")
    wanted = _KEYS[kind]
    if keys != wanted:
        extra, missing = sorted(keys - wanted), sorted(wanted - keys)
        said = []
        if extra:
            said.append(f"not allowed: {', '.join(extra)}")
        if missing:
            said.append(f"missing: {', '.join(missing)}")
        raise InvalidIntervention(f"{kind} takes exactly {sorted(wanted)} ({'; '.join(said)})")
    if kind == "none":
        return NoIntervention()
    if kind == "weather":
        value = params["weather"]
        if not isinstance(value, str) or value not in Weather.__members__.values():
            raise InvalidIntervention(f"unknown weather {value!r}; the weathers are: "
                                      f"{', '.join(w.value for w in Weather)}")
        return WeatherChange(Weather(value))
    position, radius = _spot(params, size), _radius(params)
    if kind == "regrowth":
        return Regrowth(position, radius)
    if kind == "event":
        text = params["text"]
        said = clean_text(text) if isinstance(text, str) else ""
        if not said:
            raise InvalidIntervention("an event needs its description as text")
        return WorldHappening(position, radius, " ".join(said.split()))
    name = params["landmark"]
    named = clean_text(name) if isinstance(name, str) else ""
    if not named:
        raise InvalidIntervention("reveal_landmark needs the landmark's name as text")
    return RevealLandmark(named, position, radius)
