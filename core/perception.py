"""What an agent perceives at the start of its turn, as plain values.

A language model reads the text fields; the offline mind reads the structured
ones. Both describe the same moment, built by one PerceptionBuilder, so neither
kind of mind knows anything the other could not.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.terrain import Terrain, Weather
from core.types import AgentName, Direction, Position

Edge = tuple[int, int, str]
"""A cell edge as the world keys it: (x, y, "e") lies between (x, y) and (x + 1, y),
(x, y, "s") between (x, y) and (x, y + 1)."""


@dataclass(frozen=True, slots=True)
class SeenAgent:
    """Another agent in view."""

    name: AgentName
    position: Position
    direction: Direction
    """Rough compass direction from the viewer (DOWN when sharing a cell)."""
    distance: int
    """Manhattan distance in cells."""
    is_sleeping: bool = False
    in_conversation: bool = False


@dataclass(frozen=True, slots=True)
class SeenLandmark:
    """A landmark in view or standing out on the horizon."""

    name: str
    kind: str
    position: Position
    direction: Direction
    distance: int


@dataclass(frozen=True, slots=True)
class SeenObject:
    """A sign or a placed pile in view."""

    kind: str
    """"sign" or "placed_item"."""
    position: Position
    direction: Direction
    distance: int
    label: str = ""
    """A short description: the pile's contents; empty for a sign (read it to know)."""


@dataclass(frozen=True, slots=True)
class SeenPlace:
    """A place an agent named, in view."""

    name: str
    position: Position
    direction: Direction
    distance: int


@dataclass(frozen=True, slots=True)
class SeenCell:
    """One cell in view with what grows or lies there."""

    position: Position
    terrain: Terrain
    gatherable: str | None
    """Resource a gather here would give right now, or None (bare or spent)."""
    passable: bool


@dataclass(frozen=True, slots=True)
class Perception:
    """One agent's view of the world at one moment."""

    agent: AgentName
    tick: int
    position: Position
    time_text: str
    """Like "day 1, 08:00 (morning)"."""
    period: str
    """morning, afternoon, evening or night."""
    weather: Weather
    vision_radius: int
    grid_view: str
    """The map (north up, walls between cells, the world's edge), with a header naming
    its x and y ranges and a key under it naming every marked thing but agents."""
    narrative: str
    """What is special about the cell underfoot, in prose (a narrator may retell it);
    "" when nothing is."""
    inventory_text: str
    journey_text: str | None
    visible_agents_text: str
    """The map's key for the other agents in sight (their marks, offsets, ground)."""
    conversation_text: str | None
    """Who the agent is talking with and what was said since its last turn, if anything."""
    invitation_text: str | None
    """A pending invitation waiting for an answer, if any."""
    cells: tuple[SeenCell, ...]
    agents: tuple[SeenAgent, ...]
    landmarks: tuple[SeenLandmark, ...]
    objects: tuple[SeenObject, ...]
    inventory: tuple[tuple[str, int], ...]
    """(resource or item type, count), sorted by name."""
    standing_on: Terrain
    inside_structure: bool
    on_journey: bool
    in_conversation_with: tuple[AgentName, ...]
    pending_invitation_from: AgentName | None
    notices: tuple[str, ...] = ()
    """Happenings in the landscape within reach (the Gardener's, see engine/stewardship.py)."""
    places: tuple[SeenPlace, ...] = ()
    """Named places in view, nearest first then by name."""
    surroundings_text: str = ""
    """A line for each of the four steps around, the nearest ground of each kind in
    view, and every landmark within the horizon beyond the view, with exact offsets."""
    walls: tuple[Edge, ...] = ()
    """Walls without a door on edges between two cells of the view (the map's `│`, `─`),
    sorted; nobody steps across one. Empty when the view holds none (the common case)."""
    doors: tuple[Edge, ...] = ()
    """Walls with a door on edges between two cells of the view (the map's `╎`, `╌╌`),
    sorted; a step through one is fine."""

    @property
    def is_night(self) -> bool:
        return self.period == "night"

    def as_text(self) -> str:
        """Everything a language model is shown, in reading order."""
        view = "\n".join(p for p in (self.grid_view, self.visible_agents_text) if p)
        parts = [
            f"It is {self.time_text}. The weather is {self.weather.value}.",
            f"You are at ({self.position.x}, {self.position.y}), standing on "
            f"{self.standing_on.value}.",
            view,
            self.surroundings_text,
            self.narrative,
            self.inventory_text,
        ]
        for extra in (self.journey_text, self.invitation_text, self.conversation_text):
            if extra:
                parts.append(extra)
        parts.extend(f"You notice: {notice}" for notice in self.notices)
        return "\n\n".join(p for p in parts if p)
